#pragma once
// The ready-made graph type: a Boost adjacency_list with memsched's node and graph properties.

#include <boost/graph/adjacency_list.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
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
  bool backward = false;       ///< True on gradient nodes of a training graph.
  std::optional<std::int64_t> grad_of;  ///< Id of the forward node whose gradient this node computes.
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

}  // namespace memsched
