#pragma once
// Reading and writing graphs as Graphviz DOT through Boost.Graph's read_graphviz/write_graphviz_dp
// and dynamic_properties. The DOT node name is the node id; attribute names: see
// docs/graph-format.md and detail/attribute_graph.hpp.

#include <memsched/core/config.hpp>
#include <memsched/core/errors.hpp>
#include <memsched/graph/dataflow_graph.hpp>

#include <filesystem>
#include <iosfwd>
#include <string>
#include <string_view>

namespace memsched {

/// Parses a graph in Graphviz DOT (a `digraph`); `source` names the input in messages. Node names
/// must be integers (the node ids). Node attributes `bytes` (required), `name`, `op`, `cost`,
/// `workspace`, `role`, `backward` (legacy), `grad_of`, `output`, `order_position`; graph attributes `name`, `kind`;
/// others (label, shape, ...) are ignored. As in Graphviz, statements naming the same node add to
/// its attributes (a later value wins); two names for one id (`1` and `01`) are a duplicate id.
/// O((n + m) log m). Throws file_error, whose message starts with `source`, for text that is not a
/// DOT digraph, braces nested deeper than 256 levels (naming the line), a node name that is not an
/// integer, edges between subgraphs that expand to more than detail::max_dot_expanded_edges
/// (1,000,000 + 4 per byte of text; naming the line), and everything parse_json_graph rejects (same checks, same validation).
[[nodiscard]] MEMSCHED_INLINE dataflow_graph parse_dot_graph(std::string_view text, const std::string& source = "<dot>");

/// Reads a DOT file. Throws file_error naming the path when it is a directory or cannot be opened or
/// read, and everything
/// parse_dot_graph throws.
[[nodiscard]] MEMSCHED_INLINE dataflow_graph read_dot_graph(const std::filesystem::path& path);

/// Writes the graph as a DOT digraph: node names are the ids, the attributes above but `backward`
/// as node attributes (`role` only when some node is not forward, `output` only with explicit outputs, `order_position` only with an order, `grad_of`
/// only when a node has one), `name` and `kind` as graph attributes; costs with enough digits to
/// read back exactly. O(n + m). Throws graph_error when the graph's outputs or order hold a
/// non-vertex, or when a name, op or kind ends with a backslash or has one before a quote (Boost's
/// DOT escaping cannot represent it).
MEMSCHED_INLINE void write_dot_graph(std::ostream& out, const dataflow_graph& g);

/// Writes the graph to a DOT file. Throws file_error naming the path when it cannot be written,
/// graph_error as the stream overload.
MEMSCHED_INLINE void write_dot_graph(const std::filesystem::path& path, const dataflow_graph& g);

}  // namespace memsched

#ifndef MEMSCHED_SEPARATE_COMPILATION
#include <memsched/graph/impl/dot_io.ipp>
#endif
