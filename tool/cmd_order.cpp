// memsched order GRAPH --algo NAME [--out ORDER.json] [--json]

#include "cli.hpp"

#include <chrono>

namespace memsched_cli {
namespace {

std::string order_usage() {
  std::string text =
      "usage: memsched order GRAPH --algo NAME [--out ORDER.json] [--json]\n\n"
      "Computes an execution order of GRAPH and its peak memory with the algorithm NAME (required;\n"
      "options of another algorithm are errors). Prints\n"
      "{\"algorithm\", \"status\", \"peak_bytes\", \"lower_bound\", \"order\": [ids], \"seconds\", \"stats\"}.\n\n"
      "algorithms:\n";
  for (const auto& [name, algo] : order_algorithms()) text += "  " + name + "\n" + algo.usage;
  return text;
}

int run_order(const std::vector<std::string>& argv) {
  const option_spec common{{"algo", "out"}, {"json"}};
  option_spec spec = common;
  for (const auto& [name, algo] : order_algorithms()) spec.merge(algo.options);
  const parsed_args args(argv, spec);
  const std::string& path = args.one_positional("graph file");
  const auto name = args.get("algo");
  if (!name) throw usage_error("--algo is required");
  const auto it = order_algorithms().find(*name);
  if (it == order_algorithms().end()) throw usage_error("unknown --algo '" + *name + "'");
  check_algorithm_options(args, common, *name, it->second.options);
  const auto graph = load_graph(path);
  const auto start = std::chrono::steady_clock::now();
  const memsched::order_result result = it->second.run(graph, args);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto ids = node_ids(graph);
  json doc = {{"algorithm", *name},
              {"status", std::string(to_string(result.status))},
              {"peak_bytes", result.peak_bytes},
              {"lower_bound", result.lower_bound},
              {"order", memsched::order_to_json(ids, result.order)},
              {"seconds", seconds},
              {"stats",
               {{"states_expanded", result.stats.states_expanded},
                {"states_stored", result.stats.states_stored},
                {"search_bytes", result.stats.search_bytes},
                {"seconds", result.stats.seconds}}}};
  if (auto out = args.get("out")) memsched::write_order(*out, ids, result.order, doc);
  print_json(doc, args.has("json"));
  return 0;
}

const register_subcommand order_command{{"order", "compute an execution order and its peak memory", order_usage, run_order}};

const register_order_algorithm kahn{{"kahn", "    Kahn's topological sort with a FIFO queue (a framework's default order).\n", {},
                                     [](const memsched::dataflow_graph& g, const parsed_args&) { return memsched::kahn_order(g); }}};

}  // namespace
}  // namespace memsched_cli
