#pragma once
// The in-place rule of issue 12 (sim/memory_model.hpp is its reference implementation), written
// out once more, plainly, for the order tests: an in-place vertex v runs without its own bytes on
// top when an input p with bytes(p) == bytes(v) > 0, not a graph output, dies at v (v is its last
// consumer). Only the memory while v runs changes; what stays resident after v does not.

#include <memsched/graph/memory_graph.hpp>
#include <memsched/sim/memory_model.hpp>

#include "../support/random_dag.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace memsched::testing {

/// The steps of `order` (every vertex once, after its inputs) under the rule.
inline std::vector<memory_step> inplace_rule_steps(const memory_graph& g, std::span<const std::size_t> order) {
  std::vector<std::size_t> pending(g.size());
  for (std::size_t v = 0; v < g.size(); ++v) pending[v] = g.out_degree(v);
  std::vector<memory_step> steps;
  std::int64_t live = 0;
  for (std::size_t v : order) {
    memory_step s;
    s.live_before = live;
    bool reuse = false;
    for (auto p : g.predecessors(v)) {
      if (--pending[p] != 0 || g.is_output(p)) continue;
      s.freed += g.bytes(p);
      if (g.inplace(v) && g.bytes(p) == g.bytes(v) && g.bytes(v) > 0) reuse = true;
    }
    s.transient = live + g.workspace(v) + (reuse ? 0 : g.bytes(v));
    if (g.out_degree(v) == 0 && !g.is_output(v)) s.freed += g.bytes(v);
    live += g.bytes(v) - s.freed;
    s.live_after = live;
    steps.push_back(s);
  }
  return steps;
}

/// The peak of `order` under the rule.
inline std::int64_t inplace_rule_peak(const memory_graph& g, std::span<const std::size_t> order) {
  std::int64_t peak = 0;
  for (const memory_step& s : inplace_rule_steps(g, order)) peak = std::max(peak, s.transient);
  return peak;
}

/// The minimum peak under the rule over every topological order (small graphs only).
inline std::int64_t inplace_brute_force_peak(const memory_graph& g) {
  std::int64_t best = std::numeric_limits<std::int64_t>::max();
  for_each_topological_order(g, [&](const std::vector<std::size_t>& order) { best = std::min(best, inplace_rule_peak(g, order)); });
  return best;
}

}  // namespace memsched::testing
