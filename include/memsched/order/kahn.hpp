#pragma once
// Kahn's algorithm with a FIFO queue: the order a framework's executor would use.

#include <memsched/graph/memory_graph.hpp>
#include <memsched/order/detail/heuristic_result.hpp>
#include <memsched/order/order_result.hpp>
#include <memsched/order/peak_lower_bound.hpp>
#include <memsched/sim/simulate_order.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

namespace memsched {

namespace detail {

/// Kahn's order of g (see kahn_order). O(n + m).
inline std::vector<std::size_t> kahn_order_of(const memory_graph& g) {
  std::vector<std::uint32_t> indegree(g.size());
  std::deque<std::size_t> ready;
  for (std::size_t v = 0; v < g.size(); ++v) {
    indegree[v] = static_cast<std::uint32_t>(g.in_degree(v));
    if (indegree[v] == 0) ready.push_back(v);
  }
  std::vector<std::size_t> order;
  order.reserve(g.size());
  while (!ready.empty()) {
    const std::size_t u = ready.front();
    ready.pop_front();
    order.push_back(u);
    for (auto v : g.successors(u))
      if (--indegree[v] == 0) ready.push_back(v);
  }
  return order;
}

}  // namespace detail

/// Kahn's topological sort with a FIFO queue: sources in index order first, then each vertex's
/// consumers (in index order) as their last input runs. Returns the order, its peak and the simple
/// lower bound; status optimal only when the peak equals that bound. O(n + m).
/// Throws what make_memory_graph throws (cycle_error on a cycle, graph_error on bad data).
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] order_result kahn_order(const G& graph, const Maps&... maps) {
  const auto start = std::chrono::steady_clock::now();
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  return detail::heuristic_order_result(g, detail::kahn_order_of(g), start);
}

}  // namespace memsched
