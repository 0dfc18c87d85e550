#pragma once
// Single-node cuts ("hourglass" necks) of a dataflow graph, the split points of Serenity's divide
// and conquer (Ahn et al., MLSys 2020, section 3.3).

#include <memsched/graph/memory_graph.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace memsched {

namespace detail {

/// The cuts of a memory_graph as positions in its topological order (increasing).
///
/// Correctness. Join every source to a virtual source s (position -1) and every sink to a virtual
/// sink t (position n) of the topological order pos(). Every vertex then lies on an s-t path. A
/// vertex c is on every s-t path iff no edge "jumps over" it, i.e. there is no edge (u, w), virtual
/// edges included, with pos(u) < pos(c) < pos(w):
///  - if such an edge exists, s ~> u -> w ~> t avoids c, because positions increase along a path,
///    so the part before u stays below pos(c) and the part after w stays above it;
///  - if none exists, an s-t path climbs from -1 to n and must go from a position below pos(c) to
///    one above it; the edge doing so would jump over c, so the path lands on c.
/// A prefix maximum of the farthest successor position decides this for every c in O(n + m).
/// Because the cut set is defined without reference to an order, any topological order gives the
/// same set.
inline std::vector<std::size_t> single_node_cut_positions(const memory_graph& g) {
  const std::size_t n = g.size();
  std::vector<std::size_t> cuts;
  if (n == 0) return cuts;
  const auto& topo = g.topological_order();
  std::vector<std::uint32_t> pos(n);
  for (std::size_t i = 0; i < n; ++i) pos[topo[i]] = static_cast<std::uint32_t>(i);
  // Edges s -> source: a source at position j jumps over every c < j. Edges sink -> t: a sink at
  // position j jumps over every c > j.
  std::size_t last_source = 0, first_sink = n;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t v = topo[i];
    if (g.in_degree(v) == 0) last_source = i;
    if (g.out_degree(v) == 0 && first_sink == n) first_sink = i;
  }
  std::size_t reach = 0;  // farthest position reached by an edge leaving positions < i
  for (std::size_t i = 0; i < n; ++i) {
    if (i >= last_source && i <= first_sink && reach <= i) cuts.push_back(i);
    for (auto w : g.successors(topo[i])) reach = std::max<std::size_t>(reach, pos[w]);
  }
  return cuts;
}

}  // namespace detail

/// Every vertex through which all paths from the graph's sources to its sinks pass (a "single-node
/// cut": with a virtual source joined to all sources and a virtual sink joined from all sinks, the
/// vertices other than those two on every source-to-sink path). Returned as vertex indices in
/// topological order. Every vertex of the graph is an ancestor or a descendant of each cut, so the
/// cuts split any topological order into the same consecutive segments. O(n + m).
/// Throws what make_memory_graph throws (cycle_error on a cycle, graph_error on bad data).
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] std::vector<std::size_t> single_node_cuts(const G& graph, const Maps&... maps) {
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  std::vector<std::size_t> cuts = detail::single_node_cut_positions(g);
  for (auto& c : cuts) c = g.topological_order()[c];
  return cuts;
}

}  // namespace memsched
