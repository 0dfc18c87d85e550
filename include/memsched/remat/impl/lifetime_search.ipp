#pragma once
// The definitions of remat/lifetime_search.hpp's non-template entry points (declared there).
// Header-only mode: that header includes this file at its end and they are inline. With
// MEMSCHED_SEPARATE_COMPILATION only src/memsched.cpp includes it (core/config.hpp).

#include <memsched/remat/lifetime_search.hpp>

namespace memsched::detail {

MEMSCHED_DECL remat_result lifetime_search_on(const memory_graph& g, std::int64_t budget, const lifetime_search_options& options,
                                              std::chrono::steady_clock::time_point start) {
  std::vector<std::size_t> order = options.order;
  if (order.empty()) order.assign(g.topological_order().begin(), g.topological_order().end());
  else check_order(g, order, "lifetime_search_plan");
  auto stop = [&](solve_status status, std::string message) {
    remat_result r;
    r.status = status;
    r.message = "lifetime_search_plan: " + std::move(message);
    r.stats.order = std::move(order);
    r.stats.seconds = seconds_since(start);
    return r;
  };
  if (auto why = budget_below_lower_bound(g, budget)) return stop(solve_status::infeasible, *why);
  const call_deadline deadline(start, options.solver.time_limit);
  lifetime_searcher search(g, budget, options, deadline);
  lifetime_state st(g, order, budget);
  const auto first = search.repair(st, 0.0);
  if (first == lifetime_searcher::outcome::out_of_time)
    return stop(solve_status::time_limit, "the time limit stopped the repair before any plan");
  if (first == lifetime_searcher::outcome::stuck)
    return stop(solve_status::no_solution,
                "no split of a life reduces the over-budget bytes any further (" + std::to_string(st.over()) + " bytes over)");
  search.cleanup(st);
  const observer_ref& obs = options.solver.observer;
  double best_seconds = seconds_since(start);
  obs.on_incumbent(best_seconds, g.total_cost() + st.extra_cost());
  lifetime_state best = st;
  std::size_t rounds = 0, improvements = 0;
  const std::size_t n = g.size();
  const std::size_t base_window = std::max<std::size_t>(2, n / 20);
  std::size_t window = base_window, failures = 0;
  std::mt19937_64 pick(options.seed ^ 0x9e3779b97f4a7c15ULL);
  // Two neighbourhoods: windows of slots (what is recomputed there) and, once they stall, sets of
  // recomputed vertices with all their recomputations (what spans the whole order) until one
  // improves (back to windows) or they stall too.
  bool by_vertices = false;
  while (rounds < options.max_rounds && best.recomputations() > 0 && n > 0) {
    if (options.max_stall_rounds > 0 && failures >= options.max_stall_rounds) {
      if (by_vertices) break;
      by_vertices = true;
      failures = 0;
      window = base_window;
    }
    if (deadline.passed()) break;
    ++rounds;
    lifetime_state trial = st;
    std::vector<std::size_t> recomputed;
    if (by_vertices)
      for (std::size_t v = 0; v < n; ++v)
        if (st.starts(v).size() > 1) recomputed.push_back(v);
    if (!recomputed.empty()) {
      std::shuffle(recomputed.begin(), recomputed.end(), pick);
      recomputed.resize(std::min(recomputed.size(), window / base_window));
      lifetime_searcher::clear_vertices(trial, std::move(recomputed));
    } else {
      const std::size_t w = std::min(window, n);
      const std::size_t lo = std::uniform_int_distribution<std::size_t>(0, n - w)(pick);
      lifetime_searcher::clear_window(trial, static_cast<lifetime_state::slot>(lo), static_cast<lifetime_state::slot>(lo + w));
    }
    const auto res = search.repair(trial, 0.25);
    if (res == lifetime_searcher::outcome::out_of_time) break;
    bool better = false;
    if (res == lifetime_searcher::outcome::done) {
      search.cleanup(trial);
      if (trial.extra_cost() <= st.extra_cost() + 1e-9 * (1.0 + st.extra_cost())) {
        st = trial;  // equal cost: drift
        if (st.extra_cost() < best.extra_cost() - 1e-9 * (1.0 + best.extra_cost())) {
          best = st;
          better = true;
          ++improvements;
          best_seconds = seconds_since(start);
          obs.on_incumbent(best_seconds, g.total_cost() + best.extra_cost());
        }
      }
    }
    if (better) {
      window = base_window;
      failures = 0;
      by_vertices = false;
    } else if (++failures % 4 == 0) {
      window = std::min(n, window + std::max<std::size_t>(1, window / 2));
    }
  }
  remat_result r = finish_plan(g, best.sequence(), budget, start);
  if (r.status == solve_status::no_solution) {
    r.message = "lifetime_search_plan: the simulator disagrees with the slot memory bound (" + r.message + ")";
  } else {
    // No plan along the order costs less than the native bound: a plan that meets it is optimal.
    r.cost_bound = cost_lower_bound_along(g, budget, order);
    if (best.recomputations() == 0 || r.total_cost <= *r.cost_bound + 1e-9 * std::max(1.0, r.total_cost)) r.status = solve_status::optimal;
  }
  r.stats.order = std::move(order);
  r.stats.lns_rounds = rounds;
  r.stats.lns_improvements = improvements;
  r.stats.seconds_to_best = best_seconds;
  r.stats.seconds = seconds_since(start);
  return r;
}

}  // namespace memsched::detail
