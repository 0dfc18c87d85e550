#pragma once
// Internals of Checkmate (remat/checkmate.hpp, remat/checkmate_lp_rounding.hpp): input-order checks,
// the staged compute sequences of Checkmate's plan space, and the cheapest R for a given S.

#include <memsched/core/errors.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/order/dfs.hpp>
#include <memsched/order/greedy.hpp>
#include <memsched/order/kahn.hpp>
#include <memsched/remat/detail/plan_builder.hpp>
#include <memsched/sim/execution_plan.hpp>
#include <memsched/sim/plan_from_computes.hpp>
#include <memsched/sim/simulate_order.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace memsched::detail {

/// Throws invalid_order (naming `context`) unless `order` is a topological order of g.
inline void check_checkmate_order(const memory_graph& g, std::span<const std::size_t> order, std::string_view context) {
  check_order(g, order, context);
}

/// The lowest-peak order among Kahn, DFS, greedy and `extra` (when given and valid). O(n + m) each.
inline std::vector<std::size_t> checkmate_best_basic_order(const memory_graph& g,
                                                           const std::optional<std::vector<std::size_t>>& extra = std::nullopt) {
  std::vector<std::size_t> best;
  std::int64_t best_peak = std::numeric_limits<std::int64_t>::max();
  auto consider = [&](const std::vector<std::size_t>& o) {
    const std::int64_t p = order_peak_unchecked(g, o);
    if (p < best_peak) {
      best_peak = p;
      best = o;
    }
  };
  if (extra && extra->size() == g.size()) {
    try {
      check_order(g, *extra, "checkmate_best_basic_order");
      consider(*extra);
    } catch (const invalid_order&) {
    }
  }
  consider(greedy_order(g).order);
  consider(dfs_order(g).order);
  consider(kahn_order(g).order);
  return best;
}

/// Position of every vertex in `order`.
inline std::vector<std::size_t> positions_of(std::span<const std::size_t> order) {
  std::vector<std::size_t> pos(order.size());
  for (std::size_t k = 0; k < order.size(); ++k) pos[order[k]] = k;
  return pos;
}

/// Removes computations whose value nobody reads: a computation of v that is not v's first, is not
/// read before v's next computation (or the end), and is not the last computation of an output.
/// Repeats until nothing changes. Never raises cost or memory of the plan plan_from_computes makes.
inline void prune_unread_computes(const memory_graph& g, std::vector<std::size_t>& computes) {
  constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
  for (bool changed = true; changed;) {
    changed = false;
    const std::size_t len = computes.size();
    std::vector<char> read(len, 0), keep(len, 1), later(len, 0);
    std::vector<std::size_t> current(g.size(), none);
    for (std::size_t k = 0; k < len; ++k) {
      const std::size_t v = computes[k];
      for (auto p : g.predecessors(v))
        if (current[p] != none) read[current[p]] = 1;
      if (current[v] != none) later[current[v]] = 1;
      current[v] = k;
    }
    std::vector<char> first_seen(g.size(), 0);
    for (std::size_t k = 0; k < len; ++k) {
      const std::size_t v = computes[k];
      const bool first = !first_seen[v];
      first_seen[v] = 1;
      if (first || read[k] || (!later[k] && g.is_output(v))) continue;
      keep[k] = 0;
      changed = true;
    }
    if (!changed) break;
    std::vector<std::size_t> kept;
    kept.reserve(len);
    for (std::size_t k = 0; k < len; ++k)
      if (keep[k]) kept.push_back(computes[k]);
    computes = std::move(kept);
  }
}

/// Stage membership r[t][i] (positions i <= t) -> the plan: computations stage by stage in position
/// order, skipping those marked `skip` (already resident), unread recomputations pruned, every value
/// freed as early as possible (plan_from_computes).
inline execution_plan staged_plan(const memory_graph& g, std::span<const std::size_t> order,
                                  const std::vector<std::vector<char>>& r) {
  std::vector<std::size_t> computes;
  for (std::size_t t = 0; t < r.size(); ++t)
    for (std::size_t i = 0; i <= t && i < r[t].size(); ++i)
      if (r[t][i]) computes.push_back(order[i]);
  prune_unread_computes(g, computes);
  return plan_from_computes(g, std::span<const std::size_t>(computes));
}

/// The cheapest stage membership for a given checkpoint matrix s[t][i] (i < t; stage n's
/// checkpoints are the outputs): stage t computes o_t, every checkpoint of stage t+1 that stage t
/// does not hold, and (backwards) every input of a computation that is not held. O(n^2 + n m).
inline std::vector<std::vector<char>> cheapest_r_for_s(const memory_graph& g, std::span<const std::size_t> order,
                                                       const std::vector<std::vector<char>>& s) {
  const std::size_t n = order.size();
  const auto pos = positions_of(order);
  std::vector<std::vector<char>> r(n);
  std::vector<char> need(n, 0);
  for (std::size_t t = n; t-- > 0;) {
    r[t].assign(t + 1, 0);
    // Needed at the end of stage t: the checkpoints of stage t+1.
    for (std::size_t i = 0; i < n; ++i) need[i] = 0;
    if (t + 1 == n) {
      for (auto o : g.outputs()) need[pos[o]] = 1;
    } else {
      for (std::size_t i = 0; i <= t; ++i) need[i] = s[t + 1][i];
    }
    need[t] = 1;
    for (std::size_t k = t + 1; k-- > 0;) {
      const bool held = k < t && s[t][k];
      if (!need[k] || held) continue;
      r[t][k] = 1;
      for (auto p : g.predecessors(order[k])) need[pos[p]] = 1;
    }
  }
  return r;
}

using checkmate_clock = std::chrono::steady_clock;

/// A necessary condition for any plan: every vertex fits with its inputs. nullopt or the message.
inline std::optional<std::string> checkmate_obviously_infeasible(const memory_graph& g, std::int64_t budget) {
  return budget_below_lower_bound(g, budget);
}

}  // namespace memsched::detail
