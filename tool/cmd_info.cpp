// memsched info GRAPH [--json]: the size of a graph, a lower bound on its peak and the peaks of the
// baseline orders (kahn, dfs, greedy: those that are registered).

#include "cli.hpp"

#if defined(MEMSCHED_HAVE_ONNX)
#include <memsched/graph/onnx_io.hpp>
#endif

#include <cstdint>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace memsched_cli {
namespace {

const char* const baseline_names[] = {"kahn", "dfs", "greedy"};

std::string info_usage() {
  std::string text =
      "usage: memsched info GRAPH [--json]\n\n"
      "Describes GRAPH (.json, .graphml, .dot, or .onnx when built with ONNX): its name and kind, the number of nodes, edges,\n"
      "sources (nodes without inputs), sinks (nodes without consumers) and outputs, the total bytes\n"
      "(sum of the node sizes), the total workspace and cost, a lower bound on the peak memory of any\n"
      "order (the largest node plus its inputs and workspace) and the peaks of the baseline orders:";
  bool any = false;
  for (const char* name : baseline_names)
    if (order_algorithms().count(name)) {
      text += std::string(any ? ", " : " ") + name;
      any = true;
    }
  text += any ? ".\n\n" : " (none registered).\n\n";
  text +=
      "  --json   print one JSON object: {\"file\", \"name\", \"kind\", \"nodes\", \"edges\", \"sources\",\n"
      "           \"sinks\", \"outputs\", \"total_bytes\", \"total_workspace\", \"total_cost\",\n"
      "           \"lower_bound\", \"baselines\": {\"kahn\": peak, ...}}, plus \"order_peak\" (the\n"
      "           peak of the file's own input order) when the graph has an order, and for an ONNX\n"
      "           model \"weights\", \"weight_bytes\", \"constant_nodes\", \"folded_nodes\" (what the\n"
      "           reader left out: weights are not vertices and are not planned)\n\n"
      "Errors (an unreadable or invalid graph file) go to stderr with exit code 1; usage errors exit 2.\n";
  return text;
}

int run_info(const std::vector<std::string>& argv) {
  const parsed_args args(argv, option_spec{{}, {"json"}});
  const std::string& path = args.one_positional("graph file");
  // An ONNX model's weights are not vertices: say how many and how big, so nobody reads the peaks
  // below as the model's whole footprint.
  json weights_doc = json::object();
#if defined(MEMSCHED_HAVE_ONNX)
  const bool onnx = std::filesystem::path(path).extension() == ".onnx";
  const memsched::dataflow_graph graph = [&] {
    if (!onnx) return load_graph(path);
    auto r = memsched::read_onnx_model(path);
    weights_doc = {{"weights", r.weights}, {"weight_bytes", r.weight_bytes},
                   {"constant_nodes", r.constant_nodes}, {"folded_nodes", r.folded_nodes}};
    return std::move(r.graph);
  }();
#else
  const memsched::dataflow_graph graph = load_graph(path);
#endif
  const memsched::memory_graph g = memsched::make_memory_graph(graph, path);

  std::size_t sources = 0, sinks = 0;
  std::int64_t total_bytes = 0, total_workspace = 0;
  for (std::size_t v = 0; v < g.size(); ++v) {
    sources += g.in_degree(v) == 0;
    sinks += g.out_degree(v) == 0;
    total_bytes += g.bytes(v);  // cannot overflow: bytes + workspace summed fit (checked on reading)
    total_workspace += g.workspace(v);
  }
  const auto& info = graph[boost::graph_bundle];
  json doc = {{"file", path},
              {"name", info.name},
              {"kind", info.kind},
              {"nodes", g.size()},
              {"edges", g.num_edges()},
              {"sources", sources},
              {"sinks", sinks},
              {"outputs", g.outputs().size()},
              {"total_bytes", total_bytes},
              {"total_workspace", total_workspace},
              {"total_cost", g.total_cost()},
              {"lower_bound", memsched::peak_lower_bound(g)},
              {"baselines", json::object()}};

  doc.update(weights_doc);
  // The input order of the file, when it has one (e.g. the Moccasin graphs).
  if (!info.order.empty()) doc["order_peak"] = memsched::order_peak(g, info.order);

  for (const char* name : baseline_names) {
    const auto it = order_algorithms().find(name);
    if (it == order_algorithms().end()) continue;
    const parsed_args defaults({}, it->second.options);
    const memsched::order_result result = it->second.run(graph, defaults);
    // The simulator re-checks the order and its peak: a baseline's claim is not taken on trust.
    const std::int64_t peak = memsched::order_peak(g, result.order);
    if (peak != result.peak_bytes)
      throw std::logic_error(std::string("baseline ") + name + " reports peak " + std::to_string(result.peak_bytes) +
                             " but its order's peak is " + std::to_string(peak));
    doc["baselines"][name] = peak;
  }

  if (args.has("json")) {
    print_json(doc);
    return 0;
  }
  auto line = [](const std::string& key, const std::string& value) { summary_line(std::cout, key, value); };
  line("file", path);
  line("name", info.name.empty() ? "-" : info.name + (info.kind.empty() ? "" : " (" + info.kind + ")"));
  line("nodes", grouped(static_cast<std::int64_t>(g.size())));
  line("edges", grouped(static_cast<std::int64_t>(g.num_edges())));
  line("sources", grouped(static_cast<std::int64_t>(sources)));
  line("sinks", grouped(static_cast<std::int64_t>(sinks)));
  line("outputs", grouped(static_cast<std::int64_t>(g.outputs().size())));
  line("total bytes", bytes_text(total_bytes));
  if (total_workspace != 0) line("total workspace", bytes_text(total_workspace));
  {
    std::ostringstream cost;
    cost << g.total_cost();
    line("total cost", cost.str());
  }
  line("lower bound", bytes_text(doc["lower_bound"].get<std::int64_t>()));
  if (doc.contains("weights"))
    line("weights", grouped(doc["weights"].get<std::int64_t>()) + " tensors, " +
                        bytes_text(doc["weight_bytes"].get<std::int64_t>()) + " (not vertices, not planned)");
  if (doc.contains("order_peak")) line("file order peak", bytes_text(doc["order_peak"].get<std::int64_t>()));
  for (const auto& [name, peak] : doc["baselines"].items()) line(name + " peak", bytes_text(peak.get<std::int64_t>()));
  return 0;
}

const register_subcommand info_command{{"info", "describe a graph: size, outputs, peak lower bound, baseline peaks", info_usage, run_info}};

}  // namespace
}  // namespace memsched_cli
