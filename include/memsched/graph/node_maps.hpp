#pragma once
// How algorithms read per-vertex data (index, id, bytes, cost, workspace) and the graph outputs.

#include <memsched/graph/concepts.hpp>
#include <memsched/graph/dataflow_graph.hpp>

#include <boost/graph/properties.hpp>
#include <boost/property_map/property_map.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <vector>

namespace memsched {

/// The property maps an algorithm reads, as one aggregate. `index` maps vertices to 0..n-1, `id`
/// gives the number used in error messages and files, `bytes` the output size, `cost` the compute
/// cost, `workspace` the scratch bytes. `outputs` lists the graph outputs by index (nullopt: every
/// vertex without consumers).
template <class IndexMap, class IdMap, class BytesMap, class CostMap, class WorkspaceMap>
struct node_maps {
  IndexMap index;
  IdMap id;
  BytesMap bytes;
  CostMap cost;
  WorkspaceMap workspace;
  std::optional<std::vector<std::size_t>> outputs;
};

/// A property map that gives every vertex the same value (cost 1, workspace 0, ...).
template <class T>
using constant_map = boost::static_property_map<T>;

/// Maps for a graph that has only sizes: cost 1, workspace 0, id = index, outputs = sinks.
/// O(1), never throws.
template <class IndexMap, class BytesMap>
[[nodiscard]] auto make_node_maps(IndexMap index, BytesMap bytes) {
  return node_maps<IndexMap, IndexMap, BytesMap, constant_map<double>, constant_map<std::int64_t>>{
      index, index, bytes, constant_map<double>(1.0), constant_map<std::int64_t>(0), std::nullopt};
}

/// Maps with explicit cost and workspace; id = index. O(1), never throws.
template <class IndexMap, class BytesMap, class CostMap, class WorkspaceMap>
[[nodiscard]] auto make_node_maps(IndexMap index, BytesMap bytes, CostMap cost, WorkspaceMap workspace) {
  return node_maps<IndexMap, IndexMap, BytesMap, CostMap, WorkspaceMap>{index, index, bytes, cost, workspace,
                                                                        std::nullopt};
}

namespace detail {
template <class G>
using vertex_bundle_t = typename boost::vertex_bundle_type<G>::type;

template <class G>
concept has_node_bundle = graph<G> && std::is_same_v<vertex_bundle_t<G>, node>;

template <class G>
concept has_vertex_index = graph<G> && requires(const G& g) { get(boost::vertex_index, g); };
}  // namespace detail

/// The maps of a graph whose vertices carry memsched::node bundles, with the given index map (use
/// this overload for adjacency_list<listS, ...>). For memsched::dataflow_graph the outputs come from
/// the graph property. O(1) (O(outputs) to copy them), never throws but std::bad_alloc.
template <class G, class IndexMap>
  requires detail::has_node_bundle<G>
[[nodiscard]] auto default_node_maps(const G& g, IndexMap index) {
  auto maps = node_maps<IndexMap, decltype(get(&node::id, g)), decltype(get(&node::bytes, g)),
                        decltype(get(&node::cost, g)), decltype(get(&node::workspace, g))>{
      index, get(&node::id, g), get(&node::bytes, g), get(&node::cost, g), get(&node::workspace, g), std::nullopt};
  if constexpr (std::is_same_v<G, dataflow_graph>) maps.outputs = g[boost::graph_bundle].outputs;
  return maps;
}

/// The maps of a graph with memsched::node bundles and a built-in vertex index (vecS adjacency_list,
/// compressed_sparse_row_graph, memsched::dataflow_graph).
template <class G>
  requires detail::has_node_bundle<G> && detail::has_vertex_index<G>
[[nodiscard]] auto default_node_maps(const G& g) {
  return default_node_maps(g, get(boost::vertex_index, g));
}

}  // namespace memsched
