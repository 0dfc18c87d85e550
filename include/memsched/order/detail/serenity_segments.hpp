#pragma once
// Divide and conquer of serenity_order: the graph split at its single-node cuts into segments that
// are solved independently (docs/serenity.md, "Divide and conquer"). Internal.

#include <memsched/graph/memory_graph.hpp>
#include <memsched/order/single_node_cuts.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace memsched::detail {

/// One segment: its own memory_graph and where its vertices come from.
struct serenity_segment {
  memory_graph graph;                  // the lead cut (if any) first, then the segment's vertices
  std::vector<std::size_t> global;     // local index -> index in the whole graph
  bool has_lead = false;               // local vertex 0 is the previous cut, already run
  std::int64_t base = 0;               // outputs resident from earlier segments
  bool training = false;               // holds a backward or loss vertex (of a graph with training roles)
  bool whole = false;                  // `graph` is a copy of the whole graph, numbered alike
};

/// Splits g at its single-node cuts (or returns one segment holding g).
inline std::vector<serenity_segment> serenity_segments(const memory_graph& g, bool divide) {
  std::vector<serenity_segment> segs;
  const std::size_t n = g.size();
  const auto& topo = g.topological_order();
  std::vector<std::size_t> ends;  // exclusive end positions of segments
  if (divide) {
    for (std::size_t c : single_node_cut_positions(g))
      if (c > 0) ends.push_back(c + 1);
  }
  if (ends.empty() || ends.back() != n) ends.push_back(n);
  // One segment of a graph without training roles whose vertices are numbered in topological
  // order: building the segment would give back the graph itself (the CSR lists are sorted), so
  // it is copied. Small graphs spend a sizeable part of a solve on that build.
  if (ends.size() == 1 && !g.has_training_roles()) {
    bool numbered_in_order = true;
    for (std::size_t i = 0; i < n && numbered_in_order; ++i) numbered_in_order = topo[i] == i;
    if (numbered_in_order) {
      serenity_segment s;
      s.graph = g;
      s.whole = true;
      s.global.resize(n);
      for (std::size_t i = 0; i < n; ++i) s.global[i] = i;
      segs.push_back(std::move(s));
      return segs;
    }
  }
  std::vector<std::uint32_t> local(n, std::numeric_limits<std::uint32_t>::max());
  // Outputs at positions before the lead cut stay resident through the segment.
  std::vector<std::int64_t> out_prefix(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) out_prefix[i + 1] = out_prefix[i] + (g.is_output(topo[i]) ? g.bytes(topo[i]) : 0);
  std::size_t begin = 0;
  for (std::size_t end : ends) {
    serenity_segment s;
    s.has_lead = begin > 0;
    if (s.has_lead) s.global.push_back(topo[begin - 1]);
    for (std::size_t i = begin; i < end; ++i) s.global.push_back(topo[i]);
    for (std::size_t k = 0; k < s.global.size(); ++k) local[s.global[k]] = static_cast<std::uint32_t>(k);
    memory_graph_data d;
    d.num_nodes = s.global.size();
    d.bytes.resize(d.num_nodes);
    d.workspace.resize(d.num_nodes);
    d.cost.resize(d.num_nodes);
    d.ids.resize(d.num_nodes);
    // In-place vertices keep their flag: inputs of a segment's vertices lie in the segment or are
    // its lead cut, and no later segment reads a vertex before the next cut, so "an input dies at
    // v" means the same in the segment and in the whole graph.
    if (g.has_inplace()) d.inplace.assign(d.num_nodes, 0);
    std::vector<std::size_t> outs;
    for (std::size_t k = 0; k < d.num_nodes; ++k) {
      const std::size_t v = s.global[k];
      d.bytes[k] = g.bytes(v);
      d.workspace[k] = g.workspace(v);
      d.cost[k] = g.cost(v);
      d.ids[k] = g.id(v);
      if (g.has_inplace()) d.inplace[k] = g.inplace(v) ? 1 : 0;
      if (!g.is_forward(v) && (k > 0 || !s.has_lead)) s.training = true;
      if (g.is_output(v) || (end < n && k + 1 == d.num_nodes)) outs.push_back(k);
      for (auto w : g.successors(v))
        if (local[w] != std::numeric_limits<std::uint32_t>::max() && (k > 0 || !s.has_lead || local[w] > 0))
          d.edges.emplace_back(k, local[w]);
    }
    d.outputs = outs;
    s.base = s.has_lead ? out_prefix[begin - 1] : 0;
    for (std::size_t v : s.global) local[v] = std::numeric_limits<std::uint32_t>::max();
    s.graph = memory_graph(std::move(d), "serenity_order");
    segs.push_back(std::move(s));
    begin = end;
  }
  return segs;
}

}  // namespace memsched::detail
