#pragma once
// A lower bound on the peak memory of any order: some moment must hold a node, all its inputs and
// its workspace.

#include <memsched/graph/memory_graph.hpp>

#include <algorithm>
#include <cstdint>

namespace memsched {

/// max over vertices v of bytes(v) + workspace(v) + sum of bytes of v's inputs: every order must
/// run v while its inputs are resident. O(n + m). Throws what make_memory_graph throws.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] std::int64_t peak_lower_bound(const G& graph, const Maps&... maps) {
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  std::int64_t bound = 0;
  for (std::size_t v = 0; v < g.size(); ++v) {
    std::int64_t need = g.bytes(v) + g.workspace(v);
    for (auto p : g.predecessors(v)) need += g.bytes(p);
    bound = std::max(bound, need);
  }
  return bound;
}

}  // namespace memsched
