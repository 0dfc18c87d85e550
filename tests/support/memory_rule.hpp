#pragma once
// Test support: the memory rule of sim/memory_model.hpp written out once more, plainly and from
// positions only, as the oracle the model, the simulators and the order searches are checked
// against; walking the model itself; a graph's copy without in-place vertices.
//
// The rule (issue 12, docs/simulator.md): running v allocates bytes(v) + workspace(v); a value is
// resident after position k while it is an output or a consumer sits after k; an unread non-output
// is freed at once. v REUSES an input p when v is in-place, bytes(p) == bytes(v) > 0, p is not a
// graph output and no consumer of p runs after v; then v runs without bytes(v) on top (what stays
// resident after v does not change). The buffer taken over is the first such p by index.

#include <memsched/graph/memory_graph.hpp>
#include <memsched/sim/memory_model.hpp>

#include "random_dag.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

namespace memsched::testing {

/// The steps of `order` (every vertex once, after its inputs) under the rule, from positions only
/// (no counters). O(n^2 + n m).
inline std::vector<memory_step> rule_steps(const memory_graph& g, std::span<const std::size_t> order) {
  const std::size_t n = order.size();
  std::vector<std::size_t> pos(g.size());
  for (std::size_t k = 0; k < n; ++k) pos[order[k]] = k;
  // A value computed before position k is live before k when it is an output or some consumer
  // sits at position >= k.
  auto live_before = [&](std::size_t k) {
    std::int64_t live = 0;
    for (std::size_t j = 0; j < k; ++j) {
      const std::size_t u = order[j];
      bool keep = g.is_output(u);
      for (auto s : g.successors(u)) keep = keep || pos[s] >= k;
      if (keep) live += g.bytes(u);
    }
    return live;
  };
  std::vector<memory_step> steps;
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t v = order[k];
    memory_step s;
    s.live_before = live_before(k);
    s.live_after = live_before(k + 1);
    s.freed = s.live_before + g.bytes(v) - s.live_after;
    std::vector<std::size_t> preds(g.predecessors(v).begin(), g.predecessors(v).end());
    std::sort(preds.begin(), preds.end());
    for (std::size_t p : preds) {
      bool dies_here = !g.is_output(p);
      for (auto c : g.successors(p)) dies_here = dies_here && pos[c] <= k;
      if (g.inplace(v) && dies_here && g.bytes(p) == g.bytes(v) && g.bytes(v) > 0) {
        s.reused = p;
        break;
      }
    }
    s.transient = s.live_before + g.workspace(v) + (s.reused == memory_step::none ? g.bytes(v) : 0);
    steps.push_back(s);
  }
  return steps;
}

/// The peak of `order` under the rule.
inline std::int64_t inplace_rule_peak(const memory_graph& g, std::span<const std::size_t> order) {
  std::int64_t peak = 0;
  for (const memory_step& s : rule_steps(g, order)) peak = std::max(peak, s.transient);
  return peak;
}

/// The minimum peak under the rule over every topological order (small graphs only).
inline std::int64_t inplace_brute_force_peak(const memory_graph& g) {
  std::int64_t best = std::numeric_limits<std::int64_t>::max();
  for_each_topological_order(g, [&](const std::vector<std::size_t>& order) { best = std::min(best, inplace_rule_peak(g, order)); });
  return best;
}

/// memory_model's steps along `order`; checks at every step that peek predicted step.
inline std::vector<memory_step> walk(const memory_graph& g, const std::vector<std::size_t>& order) {
  memory_model model(g);
  std::vector<memory_step> steps;
  for (auto v : order) {
    const memory_step expected = model.peek(v);
    steps.push_back(model.step(v));
    CHECK(steps.back() == expected);
  }
  return steps;
}

/// g with every in-place flag cleared.
inline memory_graph without_inplace(const memory_graph& g) {
  memory_graph_data d = g.data();
  d.inplace.clear();
  return memory_graph(std::move(d));
}

}  // namespace memsched::testing
