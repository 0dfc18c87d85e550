// memsched order GRAPH --algo NAME [--out ORDER.json] [--json]

#include "cli.hpp"

#include <chrono>
#include <optional>
#include <ostream>

namespace memsched_cli {
namespace {

std::string order_usage() {
  std::string text =
      "usage: memsched order GRAPH --algo NAME [--out ORDER.json] [--json] [--quiet]\n\n"
      "Computes an execution order of GRAPH and its peak memory with the algorithm NAME (required;\n"
      "options of another algorithm are errors). Prints a summary:\n\n"
      "  algorithm        serenity\n"
      "  status           optimal (proven)\n"
      "  peak             1,505,280 (1.4 MiB)\n"
      "  lower bound      1,505,280 (1.4 MiB), gap 0.00%\n"
      "  nodes            ...\n"
      "  time             0.05 s\n"
      "  order            written to ORDER.json\n\n"
      "--out ORDER.json writes the order (with the figures; what `simulate --order` reads). --json prints\n"
      "instead one line {\"algorithm\", \"status\", \"peak_bytes\", \"lower_bound\", \"order\": [ids],\n"
      "\"seconds\", \"stats\"} and nothing else on stdout. A long search shows a live progress line on\n"
      "stderr when it is a terminal (--quiet: none; --progress, where an algorithm has it: one line per\n"
      "report).\n\n"
      "algorithms:\n";
  for (const auto& [name, algo] : order_algorithms()) text += "  " + name + "\n" + algo.usage;
  return text;
}

// What a person reads without --json: the figures of `doc` with units, and where the order went.
void order_summary(std::ostream& os, const json& doc, const std::optional<std::string>& out) {
  const auto peak = doc["peak_bytes"].get<std::int64_t>(), bound = doc["lower_bound"].get<std::int64_t>();
  summary_line(os, "algorithm", doc["algorithm"].get<std::string>());
  summary_line(os, "status", status_text(doc["status"].get<std::string>()));
  summary_line(os, "peak", bytes_text(peak));
  std::string bound_line = bytes_text(bound);
  if (peak > 0 && bound > 0) bound_line += ", gap " + percent_text(static_cast<double>(peak - bound) / static_cast<double>(peak));
  summary_line(os, "lower bound", bound_line);
  summary_line(os, "nodes", grouped(static_cast<std::int64_t>(doc["order"].size())));
  summary_line(os, "time", seconds_text(doc["seconds"].get<double>()));
  summary_line(os, "order", out ? "written to " + *out : "not written (--out ORDER.json writes it; --json prints everything)");
}

int run_order(const std::vector<std::string>& argv) {
  const option_spec common{{"algo", "out"}, {"json", "quiet"}};
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
  const auto out = args.get("out");
  if (out) memsched::write_order(*out, ids, result.order, doc);
  print_result(doc, args, [&](std::ostream& os) { order_summary(os, doc, out); });
  return 0;
}

const register_subcommand order_command{{"order", "compute an execution order and its peak memory", order_usage, run_order}};

const register_order_algorithm kahn{{"kahn", "    Kahn's topological sort with a FIFO queue (a framework's default order).\n", {},
                                     [](const memsched::dataflow_graph& g, const parsed_args&) { return memsched::kahn_order(g); }}};

}  // namespace
}  // namespace memsched_cli
