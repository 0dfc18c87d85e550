#pragma once
// The definitions of remat/lifetime_search.hpp's entry points (declared there). Header-only mode:
// that header includes this file at its end and they are compiled in the TUs that call them
// (core/config.hpp). With MEMSCHED_SEPARATE_COMPILATION only src/memsched.cpp includes it.

#include <memsched/remat/lifetime_search.hpp>

namespace memsched::detail {

MEMSCHED_DEF std::optional<lifetime_state> lifetime_state_from_plan(const memory_graph& g, const std::vector<std::size_t>& order,
                                                                     std::int64_t budget, const execution_plan& plan) {
  using slot = lifetime_state::slot;
  const std::size_t n = g.size();
  if (order.size() != n) return std::nullopt;
  lifetime_state st(g, order, budget);
  std::vector<char> computed(n, 0);
  std::size_t next = 0;  // the slot of the next first computation
  auto recompute = [&](std::size_t v, slot s) {
    if (s <= st.pos(v) || st.has_start(v, s)) return;
    st.add_start(v, s);
    for (auto x : g.predecessors(v)) st.add_demand(x, s);
  };
  std::vector<std::size_t> tail;  // computations after the last first computation
  for (const plan_step& step : plan.steps) {
    if (step.op != plan_op::compute) continue;
    const std::size_t v = step.node;
    if (v >= n) return std::nullopt;
    if (next == n) {
      tail.push_back(v);
    } else if (!computed[v]) {
      if (order[next] != v) return std::nullopt;
      computed[v] = 1;
      ++next;
    } else {
      recompute(v, static_cast<slot>(next));
    }
  }
  if (next < n) return std::nullopt;
  // The tail: outputs the plan freed and computes again at its end, and what they need. Lives end
  // with the last slot, so these join it (before its op); the rest of the tail is never read.
  std::vector<char> needed(n, 0);
  std::vector<std::size_t> kept;
  for (auto it = tail.rbegin(); it != tail.rend(); ++it)
    if (g.is_output(*it) || needed[*it]) {
      kept.push_back(*it);
      for (auto x : g.predecessors(*it)) needed[x] = 1;
    }
  for (auto it = kept.rbegin(); it != kept.rend(); ++it) recompute(*it, static_cast<slot>(n - 1));
  // A plan may recompute what it then frees unread. One pass, consumers before their inputs: a
  // dropped life takes demands only from its inputs (earlier in the order, still to come), and
  // unrecompute drops the input recomputations it leaves unread at the same slot.
  for (auto v = order.rbegin(); v != order.rend(); ++v)
    for (std::size_t i = st.starts(*v).size(); i-- > 1;)
      if (st.useless(*v, st.starts(*v)[i])) st.unrecompute(*v, st.starts(*v)[i]);
  st.commit();
  return st;
}

/// The lifetime search's start: the cheapest state after cleanup (none when every repair is
/// stuck or out of time), its name (stats.start_source), whether the deadline stopped a repair
/// and the fewest over-budget bytes a stuck repair left.
struct lifetime_start {
  std::optional<lifetime_state> state;
  std::string source;
  bool stopped = false;
  std::int64_t stuck_over = -1;
};

MEMSCHED_DECL lifetime_start best_lifetime_start(const memory_graph& g, std::int64_t budget, const lifetime_search_options& options,
                                                 const std::vector<std::size_t>& order, const call_deadline& deadline);

MEMSCHED_DEF lifetime_start best_lifetime_start(const memory_graph& g, std::int64_t budget, const lifetime_search_options& options,
                                                const std::vector<std::size_t>& order, const call_deadline& deadline) {
  using split_points = lifetime_searcher::split_points;
  // The states to start from: each start plan's (converting and cleaning one is cheap), then the
  // constructive repairs'; the cheapest after cleanup wins (ties: the earlier).
  std::optional<lifetime_state> chosen;
  std::string source;
  bool stopped = false;
  std::int64_t stuck_over = -1;  // the least over-budget bytes a stuck repair left
  auto consider = [&](lifetime_state candidate, std::string name, std::size_t depth, split_points points, const call_deadline& until) {
    lifetime_searcher by(g, budget, options, depth, points);
    const auto outcome = by.repair(candidate, 0.0, until);
    if (outcome == lifetime_searcher::outcome::out_of_time) {
      stopped = true;
      return;
    }
    if (outcome == lifetime_searcher::outcome::stuck) {
      if (stuck_over < 0 || candidate.over() < stuck_over) stuck_over = candidate.over();
      return;
    }
    by.cleanup(candidate, until);
    if (chosen && !(candidate.extra_cost() < chosen->extra_cost() - 1e-9 * (1.0 + chosen->extra_cost()))) return;
    chosen = std::move(candidate);
    source = std::move(name);
  };
  for (std::size_t k = 0; k < options.start_plans.size(); ++k) {
    if (deadline.passed()) {  // a conversion costs O(recomputations x n): none started past the deadline
      stopped = true;
      break;
    }
    if (auto from_plan = lifetime_state_from_plan(g, order, budget, options.start_plans[k]))
      consider(std::move(*from_plan), "plan " + std::to_string(k), options.max_recompute_depth, split_points::gap_end, deadline);
  }
  // The constructive repair at the option's recompute depth, then at depths 0, 1, 2, 4, ... below
  // it, each with one split point per gap and then with two: which depth and which split points
  // reach a budget, and which is cheapest there, depend on the graph (a deeper split, or one
  // earlier in a gap, fixes the slot it aims at and may strand another). For two option depths
  // a < b that are both 0 or powers of two, b's list holds every repair of a's list, so without a
  // time limit b never loses a start a finds (not so for other pairs: depth 3's list holds a
  // depth-3 repair that depth 4's lacks). A later repair replaces the start
  // only when strictly cheaper. With a time limit and a start in hand, the first repair gets at
  // most half the time left and each later one a quarter (a repair from scratch can take far
  // longer than converting a heuristic's plan), so that the search has time left.
  struct repair_kind {
    std::size_t depth;
    split_points points;
    std::string name;
  };
  const std::size_t top = options.max_recompute_depth;
  std::vector<std::size_t> depths{top};
  if (top > 0) depths.push_back(0);
  for (std::size_t d = 1; d < top; d *= 2) depths.push_back(d);
  std::vector<repair_kind> repairs;
  for (const std::size_t d : depths) {
    const std::string name = d == top ? "repair" : "repair at depth " + std::to_string(d);
    repairs.push_back({d, split_points::gap_end, name});
    repairs.push_back({d, split_points::also_after_last_over, name + " with two split points"});
  }
  for (repair_kind& kind : repairs) {
    if (deadline.passed()) {
      stopped = true;
      break;
    }
    const double share = &kind == &repairs.front() ? 0.5 : 0.25;
    consider(lifetime_state(g, order, budget), std::move(kind.name), kind.depth, kind.points,
             chosen && deadline.limited() ? deadline.share(share) : deadline);
  }
  return {std::move(chosen), std::move(source), stopped, stuck_over};
}

MEMSCHED_DEF remat_result lifetime_search_on(const memory_graph& g, std::int64_t budget, const lifetime_search_options& options,
                                              std::chrono::steady_clock::time_point start) {
  return lifetime_search_until(g, budget, options, start, call_deadline(start, options.solver.time_limit));
}

MEMSCHED_DEF remat_result lifetime_search_until(const memory_graph& g, std::int64_t budget, const lifetime_search_options& options,
                                                 std::chrono::steady_clock::time_point start, const call_deadline& deadline,
                                                 std::optional<double> known_bound) {
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
  lifetime_start from = best_lifetime_start(g, budget, options, order, deadline);
  if (!from.state) {
    if (from.stopped) return stop(solve_status::time_limit, "the time limit stopped the repair before any plan");
    return stop(solve_status::no_solution,
                "no split of a life reduces the over-budget bytes any further (" + std::to_string(from.stuck_over) + " bytes over)");
  }
  using split_points = lifetime_searcher::split_points;
  // The search's rounds alternate between one and two split points per gap.
  lifetime_searcher one_point(g, budget, options, options.max_recompute_depth, split_points::gap_end);
  lifetime_searcher two_points(g, budget, options, options.max_recompute_depth, split_points::also_after_last_over);
  lifetime_state st = std::move(*from.state);
  const double start_cost = g.total_cost() + st.extra_cost();
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
    lifetime_searcher& search = rounds % 2 == 1 ? one_point : two_points;
    const auto res = search.repair(trial, 0.25, deadline);
    if (res == lifetime_searcher::outcome::out_of_time) break;
    bool better = false;
    if (res == lifetime_searcher::outcome::done) {
      search.cleanup(trial, deadline);
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
    r.cost_bound = known_bound ? *known_bound : cost_lower_bound_along(g, budget, order);
    if (best.recomputations() == 0 || r.total_cost <= *r.cost_bound + 1e-9 * std::max(1.0, r.total_cost)) r.status = solve_status::optimal;
  }
  r.stats.order = std::move(order);
  r.stats.start_source = std::move(from.source);
  r.stats.start_cost = start_cost;
  r.stats.lns_rounds = rounds;
  r.stats.lns_improvements = improvements;
  r.stats.seconds_to_best = best_seconds;
  r.stats.seconds = seconds_since(start);
  return r;
}

}  // namespace memsched::detail
