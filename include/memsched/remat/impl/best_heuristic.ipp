#pragma once
// The definitions of remat/best_heuristic.hpp's entry points (declared there). Header-only mode:
// that header includes this file at its end and they are compiled in the TUs that call them
// (core/config.hpp). With MEMSCHED_SEPARATE_COMPILATION only src/memsched.cpp includes it.

#include <memsched/remat/best_heuristic.hpp>

namespace memsched::detail {

MEMSCHED_DEF remat_result run_heuristic_on(const memory_graph& g, const strategy_input& in, remat_heuristic h, std::int64_t budget,
                                            const best_heuristic_options& o, std::chrono::steady_clock::time_point start) {
  const sqrtn_options sq{.use_spare_memory = o.use_spare_memory};
  const greedy_options gr{.segment_bytes = std::nullopt, .greedy_budgets = o.greedy_budgets, .use_spare_memory = o.use_spare_memory};
  switch (h) {
    case remat_heuristic::checkpoint_all: return finish_plan(g, checkpoint_sequence(g, in.split, in.forward), budget, start);
    case remat_heuristic::chen_sqrtn: return chen_sqrtn_on(g, in, budget, sq, start);
    case remat_heuristic::chen_greedy: return chen_greedy_on(g, in, budget, gr, start);
    case remat_heuristic::ap_sqrtn: return generalized_sqrtn_on(g, in, budget, sq, candidate_rule::articulation_points, start);
    case remat_heuristic::ap_greedy: return generalized_greedy_on(g, in, budget, gr, candidate_rule::articulation_points, start);
    case remat_heuristic::linearized_sqrtn: return generalized_sqrtn_on(g, in, budget, sq, candidate_rule::linearized, start);
    case remat_heuristic::linearized_greedy: return generalized_greedy_on(g, in, budget, gr, candidate_rule::linearized, start);
    case remat_heuristic::revolve:
      return revolve_strategy(g, in.forward, in.split, budget,
                              revolve_options{.snapshots = std::nullopt, .max_revolve_factor = o.max_revolve_factor, .use_spare_memory = o.use_spare_memory}, start);
  }
  return unsupported_result(start, "run_remat_heuristic: unknown heuristic");
}

}  // namespace memsched::detail
