#pragma once
// The definitions of remat/free_order.hpp's entry points (declared there). Header-only mode: that
// header includes this file at its end and they are compiled in the TUs that call them
// (core/config.hpp). With MEMSCHED_SEPARATE_COMPILATION only src/memsched.cpp includes it.

#include <memsched/remat/free_order.hpp>

namespace memsched::detail {

MEMSCHED_DEF remat_result free_order_on(const memory_graph& g, std::int64_t budget, const free_order_options& o, std::chrono::steady_clock::time_point start) {
  remat_result res;
  const auto stop = [&](solve_status status, std::string why) {
    res.status = status;
    res.message = "free_order_plan: " + std::move(why);
    res.stats.seconds = seconds_since(start);
    return res;
  };
  if (budget < 0) throw std::invalid_argument("free_order_plan: negative budget");
  if (auto why = budget_below_lower_bound(g, budget)) return stop(solve_status::infeasible, *why);
  return free_order_until(g, budget, o, start, call_deadline(start, o.solver.time_limit));
}

MEMSCHED_DEF remat_result free_order_until(const memory_graph& g, std::int64_t budget, const free_order_options& o,
                                            std::chrono::steady_clock::time_point start, const call_deadline& deadline) {
  remat_result res;
  const auto stop = [&](solve_status status, std::string why) {
    res.status = status;
    res.message = "free_order_plan: " + std::move(why);
    res.stats.seconds = seconds_since(start);
    return res;
  };
  // The copy search's first Serenity run (and the copied graph's setup) come before its first
  // check: not started once the deadline has passed (a portfolio's last stage may find it so).
  if (deadline.passed()) return stop(solve_status::time_limit, "the time limit passed before the copy search");
  const auto [copied, sched, evaluations, peak_bound] = copy_search(g, budget, o, deadline.share(o.copy_fraction));
  // The bound over every plan (remat_cost_lower_bound: the search over orders, and Serenity's
  // bound on the least peak): a tenth of a time limit.
  cost_lower_bound_options bo{.peak_bound = peak_bound};
  if (deadline.limited()) bo.time_limit = std::chrono::duration<double>(std::max(0.0, std::min(deadline.left(), 0.1 * deadline.limit())));
  const double cost_bound = cost_lower_bound_on(g, budget, bo).total_cost;
  const memory_graph& w = sched.graph;
  std::optional<remat_result> best;
  std::size_t rounds = 0;
  const auto offer = [&, &copied = copied](const std::vector<std::size_t>& computes) {  // clang < 16 cannot capture a structured binding
    std::vector<std::size_t> seq;
    seq.reserve(computes.size());
    for (auto v : computes) seq.push_back(copied.origin[v]);
    remat_result mapped = finish_plan(g, seq, budget, start);
    if (!has_solution(mapped.status) || (best && mapped.total_cost >= best->total_cost)) return;  // the simulator is the judge
    best = std::move(mapped);
    best->stats.seconds_to_best = seconds_since(start);
    o.solver.observer.on_incumbent(best->stats.seconds_to_best, best->total_cost, std::numeric_limits<double>::quiet_NaN());
  };
  // The copied graph's order fits: that is the plan (each copy computed once, nothing else).
  if (sched.peak <= budget) offer(sched.order);
  for (std::size_t i = 0; i < o.recompute_depths.size() && !best && !deadline.passed(); ++i) {
    const lifetime_search_options l{.order = sched.order, .max_rounds = o.lifetime_rounds, .seed = o.seed, .max_recompute_depth = o.recompute_depths[i]};
    // Only its plan is used (the simulator judges it on g): the trivial bound spares computing one.
    const remat_result r = lifetime_search_until(w, budget, l, std::chrono::steady_clock::now(),
                                                 deadline.share(1.0 / static_cast<double>(o.recompute_depths.size() - i)), w.total_cost());
    rounds += r.stats.lns_rounds;
    if (!has_solution(r.status)) continue;
    std::vector<std::size_t> computes;
    for (const plan_step& s : r.plan.steps)
      if (s.op == plan_op::compute) computes.push_back(s.node);
    offer(computes);
  }
  const std::size_t copies = w.size() - g.size();
  const std::string what = std::to_string(copies) + " copies after " + std::to_string(evaluations) + " Serenity runs (copied graph's peak " +
                           std::to_string(sched.peak) + ")";
  res.cost_bound = cost_bound;
  if (!best) {
    if (deadline.passed()) return stop(solve_status::time_limit, "the time limit stopped the search before any plan; " + what);
    return stop(solve_status::no_solution, "no plan within the budget " + std::to_string(budget) + "; " + what);
  }
  res = std::move(*best);
  res.cost_bound = cost_bound;
  if (res.total_cost <= cost_bound * (1 + 1e-12)) res.status = solve_status::optimal;
  res.stats.order = first_computation_order(res.plan, g.size());
  res.stats.lns_rounds = rounds;
  res.stats.seconds = seconds_since(start);
  res.message = what;
  return res;
}

}  // namespace memsched::detail
