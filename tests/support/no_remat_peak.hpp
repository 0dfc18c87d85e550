// Test support: the peak of a graph without recomputation, along its topological order (the
// reference the HiRemate tests take their budgets from).
#pragma once

#include <memsched/graph/memory_graph.hpp>
#include <memsched/sim/simulate_order.hpp>

#include <cstdint>
#include <vector>

namespace memsched::testing {

/// Peak of running every vertex once along g.topological_order(). O(n + m).
inline std::int64_t no_remat_peak(const memory_graph& g) {
  const auto& topo = g.topological_order();
  return simulate_order(g, std::vector<std::size_t>(topo.begin(), topo.end())).peak_bytes;
}

}  // namespace memsched::testing
