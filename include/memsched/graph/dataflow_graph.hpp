#pragma once
// The ready-made graph type: a Boost adjacency_list with memsched's node and graph properties, and
// the node maps of any graph whose vertices carry memsched::node bundles.

#include <memsched/graph/concepts.hpp>
#include <memsched/graph/node_maps.hpp>
#include <memsched/graph/node_role.hpp>

#include <boost/graph/adjacency_list.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace memsched {

/// The data of one operator and the tensor it produces (the bundled vertex property).
struct node {
  std::int64_t id = 0;         ///< The node's id in its file (any integer, unique in the graph).
  std::string name;            ///< Optional human-readable name.
  std::string op;              ///< Operator name ("conv2d", "concat", "input", ...; see docs/ops.md).
  std::int64_t bytes = 0;      ///< Size of the output tensor.
  double cost = 1.0;           ///< Compute cost (FLOPs, time or unit).
  std::int64_t workspace = 0;  ///< Scratch bytes held only while the node runs.
  node_role role = node_role::forward;  ///< Training role (the one source of truth; files may spell it otherwise).
  std::optional<std::int64_t> grad_of;  ///< Id of the forward node whose gradient this node computes (role backward).
  bool inplace = false;  ///< The output may take over the buffer of an equal-size input that dies here (docs/simulator.md).
};

/// Graph-level data (the bundled graph property). Vertices are referred to by index.
struct graph_info {
  std::string name;
  std::string kind;                                  ///< "inference", "training" or empty.
  std::optional<std::vector<std::size_t>> outputs;   ///< Graph outputs; nullopt: every vertex without consumers.
  std::vector<std::size_t> order;                    ///< A topological input order, or empty.
};

/// memsched's ready-made dataflow graph: vertices are operators (and their output tensors), an edge
/// u -> v means v reads u's output. Bidirectional, so in-edges are available directly.
using dataflow_graph =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, node, boost::no_property, graph_info>;

namespace detail {
template <class G>
using vertex_bundle_t = typename boost::vertex_bundle_type<G>::type;

template <class G>
concept has_node_bundle = graph<G> && std::is_same_v<vertex_bundle_t<G>, node>;

/// Whether a writer spells out v's role: always when it is not forward, and for a forward node
/// whose op "loss" would otherwise read back as the loss (resolve_role).
[[nodiscard]] inline bool role_written(const node& v) { return v.role != node_role::forward || v.op == "loss"; }
}  // namespace detail

/// The maps of a graph whose vertices carry memsched::node bundles, with the given index map (use
/// this overload for adjacency_list<listS, ...>): id, bytes, cost, workspace, role, grad_of and
/// inplace from the bundle. For memsched::dataflow_graph the outputs come from the graph property.
/// O(1) (O(outputs) to copy them), never throws but std::bad_alloc.
template <class G, class IndexMap>
  requires detail::has_node_bundle<G>
[[nodiscard]] auto default_node_maps(const G& g, IndexMap index) {
  auto maps = node_maps<IndexMap, decltype(get(&node::id, g)), decltype(get(&node::bytes, g)),
                        decltype(get(&node::cost, g)), decltype(get(&node::workspace, g)),
                        decltype(get(&node::role, g)), decltype(get(&node::grad_of, g)),
                        decltype(get(&node::inplace, g))>{
      index,
      get(&node::id, g),
      get(&node::bytes, g),
      get(&node::cost, g),
      get(&node::workspace, g),
      get(&node::role, g),
      get(&node::grad_of, g),
      get(&node::inplace, g),
      std::nullopt};
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

#ifdef MEMSCHED_SEPARATE_COMPILATION
// The conversion of the ready-made graph type is compiled once, in memsched::compiled
// (src/memsched.cpp), like the other heavy parts (core/config.hpp): every algorithm called with a
// dataflow_graph starts with it. Other graph types are converted in the caller's TU.
#include <memsched/graph/memory_graph.hpp>

namespace memsched {
extern template memory_graph make_memory_graph<dataflow_graph>(const dataflow_graph&, std::string_view);
}  // namespace memsched
#endif
