#pragma once
// The definitions of remat/cost_lower_bound.hpp's entry points (declared there). Header-only mode:
// that header includes this file at its end and they are compiled in the TUs that call them
// (core/config.hpp). With MEMSCHED_SEPARATE_COMPILATION only src/memsched.cpp includes it.

#include <memsched/remat/cost_lower_bound.hpp>

namespace memsched::detail {

MEMSCHED_DEF cost_lower_bound_result cost_lower_bound_on(const memory_graph& g, std::int64_t budget, const cost_lower_bound_options& o) {
  if (budget < 0) throw std::invalid_argument("remat_cost_lower_bound: negative budget");
  if (o.order) check_order(g, *o.order, "remat_cost_lower_bound");
  cost_lower_bound_result res;
  if (auto why = budget_below_lower_bound(g, budget)) {
    res.status = solve_status::infeasible;
    res.message = "remat_cost_lower_bound: " + *why;
    return res;
  }
  double extra = 0;
  if (o.order) {
    extra = cost_extra_along_order(g, budget, *o.order, res.steps_over);
  } else {
    extra = cost_extra_any_order(g, budget, o.peak_bound.value_or(0));
    if (o.max_states > 0) {
      const call_deadline deadline(std::chrono::steady_clock::now(), o.time_limit);
      const best_order_bound searched = cost_extra_best_order(g, budget, o.max_states, o.max_work, deadline);
      extra = std::max(extra, searched.extra);
      res.states = searched.states;
      res.work = searched.work;
      res.search_complete = searched.complete;
    }
  }
  if (extra == std::numeric_limits<double>::infinity()) {  // a step's inputs alone exceed the budget: caught above
    res.status = solve_status::infeasible;
    res.message = "remat_cost_lower_bound: a step of the order does not fit the budget " + std::to_string(budget) + " with its inputs alone";
    return res;
  }
  res.total_cost = g.total_cost() + extra;
  res.overhead = g.total_cost() > 0 ? extra / g.total_cost() : 0;  // as plan_simulation's: exactly 0 without recomputation
  return res;
}

}  // namespace memsched::detail
