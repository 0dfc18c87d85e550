// Rematerialization with the order free: copies of values for their late readers, the copied
// graph ordered by Serenity, then the lifetime search along that order.

#pragma once

#include <memsched/core/config.hpp>
#include <memsched/core/errors.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/order/serenity.hpp>
#include <memsched/remat/cost_lower_bound.hpp>
#include <memsched/remat/detail/call_deadline.hpp>
#include <memsched/remat/detail/plan_builder.hpp>
#include <memsched/remat/input_order.hpp>
#include <memsched/remat/lifetime_search.hpp>
#include <memsched/remat/remat_result.hpp>
#include <memsched/sim/memory_model.hpp>
#include <memsched/solver/solver_options.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace memsched {

/// Options of free_order_plan (plain aggregate).
struct free_order_options {
  /// time_limit (wall clock, whole call) and observer (on_incumbent for each cheaper plan); the
  /// other fields are ignored.
  solver_options solver;
  /// Counted limit on the copy search's Serenity runs (one per candidate copy).
  std::size_t max_evaluations = 2000;
  /// How many levels of a copied value's inputs are copied with it (0: the value alone; its
  /// inputs then stay alive until the copy runs).
  std::size_t max_copy_depth = 1;
  /// serenity_options::max_states of each Serenity run.
  std::uint64_t serenity_max_states = 100'000;
  /// With a time limit: the copy search's share of it (the lifetime search gets the rest).
  double copy_fraction = 0.5;
  /// The lifetime search along the copied graph's order when that order alone does not fit: its
  /// rounds and seed, with each split depth listed in turn (lifetime_search_options::
  /// max_recompute_depth) until one finds a plan (deeper splits reach tighter budgets, slower).
  std::size_t lifetime_rounds = 200;
  std::uint64_t seed = 0;
  std::vector<std::size_t> recompute_depths{2, 6};
};

/// Throws: option_error naming the field when serenity_max_states is 0 (Serenity needs a state) or
/// copy_fraction is not in [0, 1] (or NaN). Every count of 0 is valid (no copy search, no copies
/// of inputs, no lifetime rounds, no lifetime search).
inline void check_free_order_options(const free_order_options& options) {
  const auto fail = [](const char* option, const char* requirement) { throw option_error("free_order_plan", option, requirement); };
  if (options.serenity_max_states == 0) fail("serenity_max_states", "must be > 0");
  if (!(options.copy_fraction >= 0 && options.copy_fraction <= 1)) fail("copy_fraction", "must be a share of the time limit, in [0, 1]");
}

namespace detail {

/// The graph being copied into: the input's vertices first, then the copies; `origin` maps each
/// to the input's vertex it computes.
struct copied_graph {
  memory_graph_data data;
  std::vector<std::size_t> origin;
};

inline copied_graph copied_graph_of(const memory_graph& g) {
  copied_graph c;
  const std::size_t n = g.size();
  c.data.num_nodes = n;
  for (std::size_t v = 0; v < n; ++v)
    for (auto u : g.successors(v)) c.data.edges.emplace_back(v, u);
  c.data.bytes = g.all_bytes();
  c.data.cost = g.all_costs();
  c.data.workspace = g.all_workspace();
  c.data.outputs = std::vector<std::size_t>(g.outputs().begin(), g.outputs().end());
  c.origin.resize(n);
  for (std::size_t v = 0; v < n; ++v) c.origin[v] = v;
  return c;
}

/// Serenity's order of a copied graph, its peak and its over-budget bytes summed over the steps.
struct copied_schedule {
  memory_graph graph;  // the copied graph it orders
  std::vector<std::size_t> order;
  std::int64_t peak = std::numeric_limits<std::int64_t>::max();
  std::int64_t over = std::numeric_limits<std::int64_t>::max();
  std::vector<std::int64_t> transient;  // per step of `order`
  std::int64_t peak_bound = 0;          // Serenity's proven lower bound on the copied graph's least peak
};

inline copied_schedule schedule_copied(const copied_graph& c, std::int64_t budget, const free_order_options& o, const call_deadline& deadline) {
  serenity_options so{.max_states = o.serenity_max_states};
  if (deadline.limited()) so.time_limit = std::chrono::duration<double>(std::max(0.0, deadline.left()));
  copied_schedule s{.graph = memory_graph(c.data, "free_order_plan")};
  const memory_graph& w = s.graph;
  order_result ordered = serenity_order(w, so);
  s.order = std::move(ordered.order);
  s.peak_bound = ordered.lower_bound;
  s.peak = 0;
  s.over = 0;
  for (const memory_step& m : simulate_sequence(w, s.order)) {
    s.transient.push_back(m.transient);
    s.peak = std::max(s.peak, m.transient);
    s.over += std::max<std::int64_t>(0, m.transient - budget);
  }
  return s;
}

/// Adds to `c` a copy of vertex v (the graph `w` is c's current state) that its readers `late`
/// read instead of v, with copies of its inputs `depth` levels deep (graph inputs are never
/// copied). Returns the cost added.
inline double add_copy(copied_graph& c, const memory_graph& w, std::size_t v, const std::vector<std::size_t>& late, std::size_t depth) {
  std::map<std::size_t, std::size_t> made;
  double added = 0;
  // Depth-first over the inputs, `depth` levels deep (up to the graph's depth: an explicit stack,
  // not recursion). A vertex's copy gets its number on entry and its input edges in input order.
  struct frame {
    std::size_t x, d, k, next;  // vertex, levels left, its copy, next input to link
  };
  std::vector<frame> stack;
  const auto enter = [&](std::size_t x, std::size_t d) {
    const std::size_t k = c.data.num_nodes++;
    c.data.bytes.push_back(w.bytes(x));
    c.data.cost.push_back(w.cost(x));
    c.data.workspace.push_back(w.workspace(x));
    c.origin.push_back(c.origin[x]);
    made[x] = k;
    added += w.cost(x);
    stack.push_back({x, d, k, 0});
    return k;
  };
  const std::size_t k = enter(v, depth);
  constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
  std::size_t returned = none;  // the copy of the input whose frame just finished
  while (!stack.empty()) {
    const frame f = stack.back();
    const auto inputs = w.predecessors(f.x);
    if (returned != none) {
      c.data.edges.emplace_back(returned, f.k);
      ++stack.back().next;
      returned = none;
      continue;
    }
    if (f.next == inputs.size()) {
      returned = f.k;
      stack.pop_back();
      continue;
    }
    const std::size_t in = inputs[f.next];
    if (f.d > 0 && w.in_degree(in) > 0) {
      if (auto it = made.find(in); it == made.end()) {
        enter(in, f.d - 1);
        continue;
      } else {
        c.data.edges.emplace_back(it->second, f.k);
      }
    } else {
      c.data.edges.emplace_back(in, f.k);
    }
    ++stack.back().next;
  }
  std::erase_if(c.data.edges, [&](const auto& e) { return e.first == v && std::find(late.begin(), late.end(), e.second) != late.end(); });
  for (auto r : late) c.data.edges.emplace_back(k, r);
  return added;
}

/// The copy search: while Serenity's order of the copied graph peaks above the budget, the copy
/// with the largest decrease of (peak, then over-budget bytes) per cost added, among the values
/// resident across an over-budget step that it does not read (copied for their readers after
/// that step, with 0..max_copy_depth levels of inputs). Stops at the budget, when no copy helps,
/// or at the limits.
struct copy_search_result {
  copied_graph copied;
  copied_schedule sched;
  std::size_t evaluations = 0;  // Serenity runs
  std::int64_t peak_bound = 0;  // Serenity's proven lower bound on the input graph's least peak (no copies)
};

inline copy_search_result copy_search(const memory_graph& g, std::int64_t budget, const free_order_options& o, const call_deadline& deadline) {
  copied_graph cur = copied_graph_of(g);
  copied_schedule sched = schedule_copied(cur, budget, o, deadline);
  const std::int64_t peak_bound = sched.peak_bound;
  std::size_t evaluations = 1;
  while (sched.peak > budget && evaluations < o.max_evaluations && !deadline.passed()) {
    const memory_graph& w = sched.graph;
    const std::size_t n = w.size();
    std::vector<std::size_t> pos(n), last(n);
    for (std::size_t k = 0; k < n; ++k) pos[sched.order[k]] = k;
    for (std::size_t v = 0; v < n; ++v) {
      last[v] = pos[v];
      for (auto u : w.successors(v)) last[v] = std::max<std::size_t>(last[v], pos[u]);
    }
    std::optional<std::pair<copied_graph, copied_schedule>> best;
    double best_score = 0;
    std::set<std::pair<std::size_t, std::size_t>> tried;  // (value, readers after the step)
    for (std::size_t k = 0; k < n && evaluations < o.max_evaluations && !deadline.passed(); ++k) {
      if (sched.transient[k] <= budget) continue;
      const std::size_t step = sched.order[k];
      // Each candidate costs a Serenity run on the copied graph (its setup alone is O(n log n)):
      // the deadline is checked before each one.
      for (std::size_t v = 0; v < n && evaluations < o.max_evaluations && !deadline.passed(); ++v) {
        if (pos[v] >= k || last[v] <= k || w.is_output(v)) continue;
        const auto readers = w.successors(v);
        if (std::find(readers.begin(), readers.end(), static_cast<memory_graph::vertex>(step)) != readers.end()) continue;
        std::vector<std::size_t> late;
        for (auto u : readers)
          if (pos[u] > k) late.push_back(u);
        if (late.size() == readers.size() || !tried.emplace(v, late.size()).second) continue;
        for (std::size_t depth = 0; depth <= o.max_copy_depth && evaluations < o.max_evaluations && !deadline.passed(); ++depth) {
          copied_graph next = cur;
          const double added = add_copy(next, w, v, late, depth);
          copied_schedule s = schedule_copied(next, budget, o, deadline);
          ++evaluations;
          const double gain = static_cast<double>(sched.peak - s.peak) + 1e-3 * static_cast<double>(sched.over - s.over);
          const double score = gain / std::max(added, 1e-9);
          if (gain > 0 && score > best_score) {
            best_score = score;
            best.emplace(std::move(next), std::move(s));
          }
        }
      }
    }
    if (!best) break;
    cur = std::move(best->first);
    sched = std::move(best->second);
  }
  return {.copied = std::move(cur), .sched = std::move(sched), .evaluations = evaluations, .peak_bound = peak_bound};
}

MEMSCHED_DECL remat_result free_order_on(const memory_graph& g, std::int64_t budget, const free_order_options& o, std::chrono::steady_clock::time_point start);
/// free_order_on stopping at `deadline` instead of o.solver.time_limit (or a counted deadline).
MEMSCHED_DECL remat_result free_order_until(const memory_graph& g, std::int64_t budget, const free_order_options& o,
                                            std::chrono::steady_clock::time_point start, const call_deadline& deadline);

}  // namespace detail

/// A rematerialization plan within `budget` with the order free: a greedy
/// search copies values for their readers after an over-budget step (with up to
/// options.max_copy_depth levels of their inputs), keeping the copy that lowers the peak of
/// Serenity's order of the copied graph most per cost added (then its over-budget bytes), until
/// that peak fits or no copy helps. The plan is that order when it fits, else lifetime_search_plan's
/// along it on the copied graph (options.recompute_depths in turn until one finds a plan); mapped
/// back to the graph's vertices (a copy computes its original), it is re-checked by the simulator. It reaches
/// budgets below every order's peak, where a fixed order has no plan (docs/remat_auto.md). Statuses: optimal when nothing is recomputed; feasible; infeasible
/// when the budget is below what every plan needs (a vertex with its inputs, the outputs);
/// no_solution when no plan was found; time_limit when the limit stopped it before any plan.
/// cost_bound (also without a plan): remat_cost_lower_bound over every plan, with Serenity's
/// lower bound on the least peak (weak: docs/remat_auto.md; a tenth of a time limit). stats: order (first computations), lns_rounds,
/// seconds_to_best. Deterministic unless the time limit stops it.
/// Complexity: per copy step, one Serenity run (options.serenity_max_states states at most) per
/// candidate (values across over-budget steps x (max_copy_depth + 1)); options.max_evaluations
/// runs in all; then the lifetime search's on the copied graph.
/// Throws: what check_free_order_options throws (before any work); std::invalid_argument on a
/// negative budget; what make_memory_graph throws.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] remat_result free_order_plan(const G& graph, std::int64_t budget, const free_order_options& options, const Maps&... maps) {
  const auto start = std::chrono::steady_clock::now();
  check_free_order_options(options);
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  return detail::free_order_on(g, budget, options, start);
}

/// free_order_plan with default options.
template <class G>
  requires memory_graph_source<G>
[[nodiscard]] remat_result free_order_plan(const G& graph, std::int64_t budget) {
  return free_order_plan(graph, budget, free_order_options{});
}

}  // namespace memsched

#ifndef MEMSCHED_SEPARATE_COMPILATION
#include <memsched/remat/impl/free_order.ipp>
#endif
