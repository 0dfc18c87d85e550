#pragma once
// Internals of Checkmate: start solutions in the staged plan space of an input order by
// recomputation on demand with eviction (a DTR-like greedy). Stage t computes o_t after
// recomputing, in position order, every missing ancestor it needs; when the next computation does
// not fit, a resident value that no remaining computation of the stage reads is evicted, chosen by
// one of several policies. Every plan it returns is staged for the order (so it encodes as a
// Checkmate start solution) and fits the budget.

#include <memsched/graph/memory_graph.hpp>
#include <memsched/remat/detail/call_deadline.hpp>
#include <memsched/remat/detail/checkmate_staging.hpp>
#include <memsched/remat/detail/resident_set.hpp>
#include <memsched/sim/execution_plan.hpp>
#include <memsched/sim/plan_from_computes.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace memsched::detail {

/// Eviction policies of staged_eviction_plan.
enum class eviction_policy : unsigned char {
  furthest_next_use,  ///< Belady: the value read again last (ties: larger first).
  bytes_distance_per_cost,  ///< Largest bytes x distance to next use / cost (DTR's heuristic, inverted).
  largest,             ///< Largest value first (ties: read again later first).
  bytes_per_cost,      ///< Most bytes per unit of recomputation cost.
};

inline constexpr eviction_policy all_eviction_policies[] = {eviction_policy::furthest_next_use, eviction_policy::bytes_distance_per_cost,
                                                            eviction_policy::largest, eviction_policy::bytes_per_cost};

/// The staged compute sequence of recomputation on demand for `order` within `budget`, or nullopt
/// when the policy gets stuck (nothing evictable and the next computation does not fit).
/// O(n (n + m) + evictions x resident values x log(max out-degree)).
inline std::optional<std::vector<std::size_t>> staged_eviction_computes(const memory_graph& g, std::span<const std::size_t> order,
                                                                        std::int64_t budget, eviction_policy policy) {
  const std::size_t n = order.size();
  constexpr std::size_t never = std::numeric_limits<std::size_t>::max();
  const auto pos = positions_of(order);
  // Consumer positions of every vertex, ascending.
  std::vector<std::vector<std::size_t>> users(n);
  for (std::size_t v = 0; v < n; ++v) {
    for (auto s : g.successors(v)) users[v].push_back(pos[s]);
    std::sort(users[v].begin(), users[v].end());
  }
  // The first consumer position after t. t never decreases, so a cached answer above t is still
  // the answer (no use lies between the old t and it): the victim scans read one flat array.
  std::vector<std::size_t> next_use_after(n, 0);
  for (std::size_t v = 0; v < n; ++v) next_use_after[v] = users[v].empty() ? never : users[v].front();
  auto next_use = [&](std::size_t v, std::size_t t) {
    std::size_t& cached = next_use_after[v];
    if (cached > t) return cached;
    auto it = std::upper_bound(users[v].begin(), users[v].end(), t);
    return cached = it == users[v].end() ? never : *it;
  };
  resident_set resident(n);
  std::vector<char> in_x(n, 0);
  std::vector<std::uint32_t> pins(n, 0);
  std::int64_t live = 0;
  std::vector<std::size_t> computes, x, stack;
  for (std::size_t t = 0; t < n; ++t) {
    const bool last = t + 1 == n;
    // X: o_t (and at the last stage every missing output) plus their missing ancestors.
    x.clear();
    stack.clear();
    auto want = [&](std::size_t v) {
      if (!resident.contains(v) && !in_x[v]) {
        in_x[v] = 1;
        x.push_back(pos[v]);
        stack.push_back(v);
      }
    };
    want(order[t]);
    if (last)
      for (auto o : g.outputs()) want(o);
    while (!stack.empty()) {
      const std::size_t v = stack.back();
      stack.pop_back();
      for (auto p : g.predecessors(v)) want(p);
    }
    std::sort(x.begin(), x.end());
    for (std::size_t p : x)
      for (auto q : g.predecessors(order[p])) ++pins[q];
    if (last)
      for (auto o : g.outputs()) ++pins[o];
    for (std::size_t p : x) {
      const std::size_t u = order[p];
      const std::int64_t need = g.bytes(u) + g.workspace(u);
      while (live + need > budget) {
        std::size_t victim = never;
        double best = -1;
        std::size_t best_next = 0;
        for (const std::size_t w : resident.members()) {
          if (pins[w] != 0) continue;
          const std::size_t nu = next_use(w, t);
          const double dist = nu == never ? 2.0 * static_cast<double>(n) : static_cast<double>(nu - t);
          const double bytes = static_cast<double>(g.bytes(w)), cost = g.cost(w) + 1e-9;
          double score = 0;
          switch (policy) {
            case eviction_policy::furthest_next_use: score = dist * 1e12 + bytes / (1.0 + bytes); break;
            case eviction_policy::bytes_distance_per_cost: score = bytes * dist / cost; break;
            case eviction_policy::largest: score = bytes + dist / (2.0 * n + 1); break;
            case eviction_policy::bytes_per_cost: score = bytes / cost; break;
          }
          // Ties: read again later, then the smaller vertex (the members come in no fixed order).
          if (victim == never || score > best || (score == best && (nu > best_next || (nu == best_next && w < victim)))) {
            victim = w;
            best = score;
            best_next = nu;
          }
        }
        if (victim == never) {
          for (std::size_t q : x) in_x[order[q]] = 0;
          return std::nullopt;
        }
        resident.erase(victim);
        live -= g.bytes(victim);
      }
      resident.insert(u);
      in_x[u] = 0;
      live += g.bytes(u);
      computes.push_back(u);
      // Free what no later computation reads: inputs and u itself when dead (no consumer after t).
      auto maybe_free = [&](std::size_t q) {
        if (resident.contains(q) && pins[q] == 0 && next_use(q, t) == never && !g.is_output(q)) {
          resident.erase(q);
          live -= g.bytes(q);
        }
      };
      for (auto q : g.predecessors(u)) {
        --pins[q];
        maybe_free(q);
      }
      maybe_free(u);
    }
    if (last)
      for (auto o : g.outputs()) --pins[o];
  }
  return computes;
}

/// The plans of staged_eviction_computes along `order` within `budget`, one per policy that does not
/// get stuck, each named "eviction greedy <policy>": the start plans Checkmate and Moccasin build
/// for any order. Stops early once `deadline` has passed. O(policies x staged_eviction_computes).
inline std::vector<std::pair<execution_plan, std::string>> eviction_start_plans(const memory_graph& g, std::span<const std::size_t> order,
                                                                                std::int64_t budget, const call_deadline& deadline) {
  std::vector<std::pair<execution_plan, std::string>> plans;
  for (auto policy : all_eviction_policies) {
    if (deadline.passed()) break;
    if (auto c = staged_eviction_computes(g, order, budget, policy))
      plans.emplace_back(plan_from_computes(g, std::span<const std::size_t>(*c)), "eviction greedy " + std::to_string(static_cast<int>(policy)));
  }
  return plans;
}

}  // namespace memsched::detail
