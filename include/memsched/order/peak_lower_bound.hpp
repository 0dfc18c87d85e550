#pragma once
// A lower bound on the peak memory of any order: some moment must hold a node, all its inputs and
// its workspace.

#include <memsched/graph/memory_graph.hpp>
#include <memsched/sim/memory_model.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace memsched {

/// max over vertices v of the memory v needs while it runs: bytes(v) + workspace(v) + the sum of
/// the bytes of v's inputs (every order runs v while its inputs are resident), without bytes(v)
/// when v is in-place and an input of equal size that is not a graph output could die at v (its
/// buffer then holds v's output): memory_model::min_running_bytes. Valid for every order under
/// the memory model, in-place rule included. O(n + m). Throws what make_memory_graph throws.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] std::int64_t peak_lower_bound(const G& graph, const Maps&... maps) {
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  std::int64_t bound = 0;
  for (std::size_t v = 0; v < g.size(); ++v) bound = std::max(bound, memory_model::min_running_bytes(g, v));
  return bound;
}

}  // namespace memsched
