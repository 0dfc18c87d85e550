// memsched order GRAPH --algo NAME [--out ORDER.json] [--json]

#include "cli.hpp"

#include <memsched/order/arena_order.hpp>

#include <chrono>
#include <optional>
#include <ostream>

namespace memsched_cli {
namespace {

std::string order_usage() {
  std::string text =
      "usage: memsched order GRAPH --algo NAME [--arena exact [--arena-time-limit S] [--arena-peak-slack F]]\n"
      "                            [--out ORDER.json] [--json] [--quiet]\n\n"
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
      "--arena exact lays the order's tensors out in one arena (the least arena, docs/layout.md) and,\n"
      "when that arena is above the peak, searches other orders whose peak is at most (1 + F) x the\n"
      "order's (--arena-peak-slack F, default 0) for a smaller arena; the order written and printed\n"
      "is the one with the least arena, its peak beside it, and the JSON gains \"arena\": {\"bytes\",\n"
      "\"lower_bound\", \"status\", \"start_bytes\" (the arena of the algorithm's own order),\n"
      "\"start_peak_bytes\", \"orders_tried\", \"seconds\"}. --arena-time-limit S (default 10) limits\n"
      "the layouts and the search together.\n\n"
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
  if (doc.contains("arena")) {
    const json& a = doc["arena"];
    const auto bytes = a["bytes"].get<std::int64_t>(), start = a["start_bytes"].get<std::int64_t>();
    summary_line(os, "arena", bytes_text(bytes) + ", " + status_text(a["status"].get<std::string>()) + ", lower bound " +
                                  bytes_text(a["lower_bound"].get<std::int64_t>()));
    summary_line(os, "arena search", start == bytes ? "no order with a smaller arena found (" + grouped(a["orders_tried"].get<std::int64_t>()) + " tried)"
                                                    : "the algorithm's order needs " + bytes_text(start) + "; this order " +
                                                          percent_text(static_cast<double>(start - bytes) / static_cast<double>(start)) + " less");
  }
  summary_line(os, "time", seconds_text(doc["seconds"].get<double>()));
  summary_line(os, "order", out ? "written to " + *out : "not written (--out ORDER.json writes it; --json prints everything)");
}

// --arena exact: the order with the least arena found from `result`'s (arena_order), into `result`;
// returns the "arena" object of the JSON.
json choose_for_arena(const memsched::dataflow_graph& graph, const parsed_args& args, memsched::order_result& result) {
  if (const std::string how = *args.get("arena"); how != "exact")
    throw usage_error("--arena takes exact here, got '" + how + "' (simulate --order places an order with the other strategies)");
  const memsched::arena_order_options options{
      .peak_slack = number_of(args, "arena-peak-slack", 0.0, 0.0, 1e9),
      .time_limit = time_limit_of(args, "arena-time-limit").value_or(std::chrono::duration<double>(10.0))};
  const memsched::arena_order_result chosen = memsched::arena_order(graph, result.order, options);
  if (chosen.arena.peak_bytes != result.peak_bytes) result.status = memsched::solve_status::feasible;  // the peak grew within the slack
  result.order = chosen.order;
  result.peak_bytes = chosen.arena.peak_bytes;
  return {{"bytes", chosen.arena.arena_bytes},
          {"lower_bound", chosen.arena.lower_bound},
          {"status", std::string(to_string(chosen.status))},
          {"start_bytes", chosen.start_arena_bytes},
          {"start_peak_bytes", chosen.start_peak_bytes},
          {"orders_tried", chosen.stats.orders_tried},
          {"seconds", chosen.stats.seconds}};
}

int run_order(const std::vector<std::string>& argv) {
  const option_spec common{{"algo", "out", "arena", "arena-time-limit", "arena-peak-slack"}, {"json", "quiet"}};
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
  if (!args.has("arena") && (args.has("arena-time-limit") || args.has("arena-peak-slack")))
    throw usage_error("--arena-time-limit and --arena-peak-slack need --arena exact");
  memsched::order_result result = it->second.run(graph, args);
  const json arena = args.has("arena") ? choose_for_arena(graph, args, result) : json();
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
  if (!arena.is_null()) doc["arena"] = arena;
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
