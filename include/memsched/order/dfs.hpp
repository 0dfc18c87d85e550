#pragma once
// Depth-first reverse post-order: the topological order of a recursive depth-first traversal.

#include <memsched/graph/memory_graph.hpp>
#include <memsched/order/detail/heuristic_result.hpp>
#include <memsched/order/order_result.hpp>
#include <memsched/order/peak_lower_bound.hpp>
#include <memsched/sim/simulate_order.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace memsched {

namespace detail {

/// The depth-first reverse post-order of g (see dfs_order). O(n + m).
inline std::vector<std::size_t> dfs_order_of(const memory_graph& g) {
  const std::size_t n = g.size();
  std::vector<std::size_t> order;
  order.reserve(n);
  std::vector<char> visited(n, 0);
  // Stack of (vertex, position of the next successor to look at).
  std::vector<std::pair<std::size_t, std::size_t>> stack;
  for (std::size_t root = 0; root < n; ++root) {
    if (g.in_degree(root) != 0 || visited[root]) continue;
    visited[root] = 1;
    stack.emplace_back(root, 0);
    while (!stack.empty()) {
      auto& [v, next] = stack.back();
      const auto succ = g.successors(v);
      if (next < succ.size()) {
        const std::size_t s = succ[next++];
        if (!visited[s]) {
          visited[s] = 1;
          stack.emplace_back(s, 0);  // invalidates v/next; they are not used after this
        }
      } else {
        order.push_back(v);
        stack.pop_back();
      }
    }
  }
  std::reverse(order.begin(), order.end());
  return order;
}

}  // namespace detail

/// The reverse post-order of a depth-first search that starts from the sources in index order and
/// visits each vertex's successors in index order (iterative: no recursion, any depth). Returns
/// the order, its peak under the model of simulate_order and the simple lower bound; status
/// optimal only when the peak equals that bound. Deterministic. O(n + m) time and memory.
/// Throws what make_memory_graph throws (cycle_error on a cycle, graph_error on bad data).
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] order_result dfs_order(const G& graph, const Maps&... maps) {
  const auto start = std::chrono::steady_clock::now();
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  return detail::heuristic_order_result(g, detail::dfs_order_of(g), start);
}

}  // namespace memsched
