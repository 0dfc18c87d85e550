// The --order / --order-from flags of the solver-based remat algorithms (checkmate-milp,
// checkmate-lp, moccasin): one parser, the choice itself is memsched::remat_input_order.
#pragma once

#include "cli.hpp"

#include <memsched/remat/input_order.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace memsched_cli {

inline const char* const remat_order_usage =
    "    --order ORDER.json      input order: a JSON array of node ids, or {\"order\": [...]}\n"
    "    --order-from SOURCE     graph (the file's order, else checkpoint-all's first computations),\n"
    "                            kahn, best (default: the lowest peak of Serenity, Kahn, DFS, greedy\n"
    "                            and the file's order; Serenity stops after 100,000 stored states, so\n"
    "                            the order is reproducible, or at half the time limit, at most\n"
    "                            30 s, if that comes first), heuristic (the first computations of the best\n"
    "                            heuristic plan, so that it is a start)\n";

/// Serenity's counted limit for --order-from best: ~0.8 s on a dense 400-node training graph.
inline constexpr std::uint64_t serenity_max_states = 100'000;

/// The input order chosen by --order FILE or --order-from SOURCE. `heuristic` is the best heuristic
/// plan (used by --order-from heuristic). Serenity stops at serenity_max_states stored states (a
/// counted limit: the same order on every run) or, as a backstop for graphs where that takes long,
/// at half of `time_limit`, at most 30 s (then the order may depend on timing); no floor, so that
/// the whole command keeps its --time-limit.

inline memsched::input_order_result remat_order_of(const memsched::dataflow_graph& graph, const parsed_args& args,
                                                   std::chrono::duration<double> time_limit,
                                                   const std::optional<memsched::remat_result>& heuristic) {
  if (auto file = args.get("order")) {
    return {memsched::read_order(*file, node_ids(graph)), 0, "file"};
  }
  const std::string from = args.get_or("order-from", "best");
  const auto source = memsched::parse_input_order_source(from);
  if (!source) throw usage_error("--order-from must be graph, kahn, best or heuristic, got '" + from + "'");
  memsched::input_order_options o{.source = *source};
  o.serenity_time_limit = std::chrono::duration<double>(std::min(time_limit.count() * 0.5, 30.0));
  o.serenity_max_states = serenity_max_states;
  if (heuristic && memsched::has_solution(heuristic->status)) o.plan = heuristic->plan;
  return memsched::remat_input_order(graph, o);
}

}  // namespace memsched_cli
