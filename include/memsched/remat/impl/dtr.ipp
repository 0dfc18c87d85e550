#pragma once
// The definitions of remat/dtr.hpp's entry points (declared there). Header-only mode: that header
// includes this file at its end and they are compiled in the TUs that call them (core/config.hpp).
// With MEMSCHED_SEPARATE_COMPILATION only src/memsched.cpp includes it.

#include <memsched/remat/dtr.hpp>

namespace memsched::detail {

MEMSCHED_DEF remat_result dtr_on(const memory_graph& g, std::int64_t budget, const dtr_options& options,
                                  std::chrono::steady_clock::time_point start) {
  std::vector<std::size_t> order = options.order;
  if (order.empty()) order.assign(g.topological_order().begin(), g.topological_order().end());
  else check_order(g, order, "dtr_plan");
  // An answer without a plan.
  auto stop = [&](solve_status status, std::string message) {
    remat_result r;
    r.status = status;
    r.message = "dtr_plan: " + std::move(message);
    r.stats.order = std::move(order);
    r.stats.seconds = seconds_since(start);
    return r;
  };
  if (auto why = budget_below_lower_bound(g, budget)) return stop(solve_status::infeasible, *why);
  dtr_runner run(g, budget, options, call_deadline(start, options.time_limit));
  run.run(order);
  if (run.timed_out)
    return stop(solve_status::time_limit, "the time limit stopped it after " + std::to_string(run.sequence.size()) + " computations");
  if (run.gave_up)
    return stop(solve_status::no_solution, "gave up after " + std::to_string(run.sequence.size()) +
                                               " computations (max_computations): recomputation thrashes at this budget");
  remat_result r = finish_strategy_plan(g, std::move(run.sequence), budget, options.use_spare_memory && !run.over_budget, start);
  if (r.status == solve_status::no_solution)
    r.message = "dtr_plan: the inputs pinned by a computation (and its pending recomputations) leave nothing to evict; " + r.message;
  r.stats.order = std::move(order);
  return r;
}

}  // namespace memsched::detail
