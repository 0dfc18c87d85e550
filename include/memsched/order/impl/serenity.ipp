#pragma once
// The definitions of the parts of serenity_order compiled once with MEMSCHED_SEPARATE_COMPILATION
// (declared in order/serenity.hpp). Header-only mode: order/serenity.hpp includes this file and they
// are compiled in the TUs that call them (core/config.hpp). With MEMSCHED_SEPARATE_COMPILATION: only
// src/memsched.cpp includes it.

#include <memsched/core/errors.hpp>
#include <memsched/core/status.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/order/detail/bridge_lower_bound.hpp>
#include <memsched/order/detail/deadline_clock.hpp>
#include <memsched/order/detail/serenity_memory_pool.hpp>
#include <memsched/order/detail/serenity_progress.hpp>
#include <memsched/order/detail/serenity_segments.hpp>
#include <memsched/order/detail/serenity_solver.hpp>
#include <memsched/order/detail/task_pool.hpp>
#include <memsched/order/dfs.hpp>
#include <memsched/order/greedy.hpp>
#include <memsched/order/kahn.hpp>
#include <memsched/order/order_result.hpp>
#include <memsched/order/peak_lower_bound.hpp>
#include <memsched/order/serenity.hpp>
#include <memsched/order/serenity_options.hpp>
#include <memsched/sim/simulate_order.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <vector>

namespace memsched::detail {

MEMSCHED_DEF void check_serenity_options(const serenity_options& options) {
  const auto fail = [](const char* option, const char* requirement) { throw option_error("serenity_order", option, requirement); };
  if (options.budget && *options.budget < 0) fail("budget", "must be >= 0");
  // Written so that NaN fails too; an infinite or huge limit means "no limit" (deadline_after).
  if (options.time_limit && !(options.time_limit->count() >= 0)) fail("time_limit", "must be >= 0 (not NaN)");
  if (!(options.attempt_time_limit.count() > 0)) fail("attempt_time_limit", "must be > 0 (not NaN)");
  if (options.max_states == 0) fail("max_states", "must be > 0");
  if (options.max_bytes == 0) fail("max_bytes", "must be > 0");
  if (options.reorder_window == 1 || options.reorder_window > 64) fail("reorder_window", "must be 0 (off) or in [2, 64]");
  if (options.soft_budget != soft_budget_mode::off && options.soft_budget != soft_budget_mode::paper &&
      options.soft_budget != soft_budget_mode::bounded)
    fail("soft_budget", "must be off, paper or bounded");
}

MEMSCHED_DEF order_result serenity_order_impl(const memory_graph& g, const serenity_options& options,
                                        std::chrono::steady_clock::time_point start) {
  order_result result;
  if (g.empty()) {
    result.status = solve_status::optimal;
    return result;
  }
  // The baselines first: when one meets the simple lower bound there is nothing to search.
  const std::int64_t lb = peak_lower_bound(g);
  // Kept for the segment solver when the whole graph is its one segment.
  detail::serenity_baselines baselines;
  std::size_t baselines_computed = 0;
  for (; baselines_computed < baselines.orders.size(); ++baselines_computed) {
    if (options.budget && lb > *options.budget) break;
    baselines.compute(g, baselines_computed);
    if (baselines.peaks[baselines_computed] == lb) {
      result.order = std::move(baselines.orders[baselines_computed]);
      result.peak_bytes = lb;
      result.lower_bound = lb;
      result.status = solve_status::optimal;
      detail::serenity_progress(options.observer, start, {}, lb).finish(lb, lb);
      result.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      return result;
    }
  }
  const auto deadline = options.time_limit ? detail::deadline_after(start, *options.time_limit)
                                           : std::chrono::steady_clock::time_point::max();
  detail::serenity_memory_pool pool;
  pool.cap = static_cast<std::int64_t>(std::min<std::uint64_t>(options.max_bytes, std::numeric_limits<std::int64_t>::max()));

  std::vector<detail::serenity_segment> segs = detail::serenity_segments(g, options.divide);
  std::vector<detail::serenity_segment_answer> answers(segs.size());
  // A proven lower bound of the whole graph: a segment need not go below it (minus its base).
  // Each segment's counts the values resident across its vertices (the bridges); the baselines
  // were checked against the cheaper bound above, so easy graphs never pay for it.
  std::vector<std::int64_t> seg_lb(segs.size()), bases(segs.size());
  std::int64_t whole_lb = lb;
  for (std::size_t k = 0; k < segs.size(); ++k) {
    seg_lb[k] = detail::bridge_peak_lower_bound(segs[k].graph);
    bases[k] = segs[k].base;
    whole_lb = std::max(whole_lb, segs[k].base + seg_lb[k]);
  }
  detail::serenity_progress progress(options.observer, start, std::move(bases), whole_lb);
  // With an observer, the first report is the concatenation of the segments' Kahn orders, so that
  // the whole graph has an incumbent before the first segment is solved (O(n + m), only then).
  if (progress.active())
    for (std::size_t k = 0; k < segs.size(); ++k)
      progress.update(k, detail::order_peak_unchecked(segs[k].graph, detail::kahn_order_of(segs[k].graph)), seg_lb[k]);
  auto solve_one = [&](std::size_t k) {
    std::optional<std::int64_t> budget;
    if (options.budget) budget = *options.budget - segs[k].base;
    if (budget && *budget < 0) {
      answers[k].status = solve_status::infeasible;
      answers[k].order = detail::kahn_order_of(segs[k].graph);
      answers[k].peak = detail::order_peak_unchecked(segs[k].graph, answers[k].order);
      answers[k].lower_bound = seg_lb[k];
    } else {
      // A training segment's peak lies between its forward and backward parts, far from either
      // end where the decision searches start: the layered DP alone proves it faster.
      serenity_options segment_options = options;
      if (segs[k].training && !options.decisions_on_training) segment_options.decision_budget = 0;
      answers[k] = detail::serenity_solver(segs[k].graph, segment_options, budget, deadline, pool, seg_lb[k],
                                           whole_lb - segs[k].base, &progress, k)
                       .with_baselines(segs[k].whole && baselines_computed == baselines.orders.size() ? &baselines : nullptr)
                       .solve();
    }
    progress.update(k, answers[k].peak, std::min(answers[k].lower_bound, answers[k].peak));
  };
  // Largest segments first; each thread takes the next one. Results land in fixed slots.
  std::vector<std::size_t> by_size(segs.size());
  for (std::size_t k = 0; k < segs.size(); ++k) by_size[k] = k;
  std::sort(by_size.begin(), by_size.end(), [&](std::size_t a, std::size_t b) {
    return segs[a].graph.size() != segs[b].graph.size() ? segs[a].graph.size() > segs[b].graph.size() : a < b;
  });
  detail::run_tasks(by_size.size(), options.threads, [&](std::size_t i) { solve_one(by_size[i]); });

  // Concatenate; the peak is the largest (base + segment peak), and so is the bound.
  bool all_optimal = true, any_infeasible = false, any_time_limit = false;
  result.order.reserve(g.size());
  for (std::size_t k = 0; k < segs.size(); ++k) {
    const auto& a = answers[k];
    for (std::size_t v : a.order)
      if (!(segs[k].has_lead && v == 0)) result.order.push_back(segs[k].global[v]);
    result.lower_bound = std::max(result.lower_bound, segs[k].base + a.lower_bound);
    all_optimal &= a.status == solve_status::optimal;
    any_infeasible |= a.status == solve_status::infeasible;
    any_time_limit |= a.status == solve_status::time_limit;
    detail::add_stats(result.stats, a.stats);
  }
  result.peak_bytes = detail::order_peak_unchecked(g, result.order);
  result.lower_bound = std::max(result.lower_bound, lb);
  if (any_infeasible) {
    result.status = solve_status::infeasible;
  } else if (any_time_limit || (options.budget && result.peak_bytes > *options.budget)) {
    result.status = solve_status::time_limit;
  } else if (all_optimal || result.lower_bound >= result.peak_bytes) {
    result.status = solve_status::optimal;
    result.lower_bound = result.peak_bytes;
  } else {
    result.status = solve_status::feasible;
  }
  result.lower_bound = std::min(result.lower_bound, result.status == solve_status::infeasible
                                                        ? result.lower_bound
                                                        : result.peak_bytes);
  progress.finish(result.peak_bytes, std::min(result.lower_bound, result.peak_bytes));
  result.stats.search_bytes = static_cast<std::uint64_t>(pool.peak.load());
  result.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace memsched::detail
