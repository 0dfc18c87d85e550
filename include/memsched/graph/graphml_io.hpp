#pragma once
// Reading and writing graphs as GraphML through Boost.Graph's read_graphml/write_graphml and
// dynamic_properties. Attribute names: see docs/graph-format.md and detail/attribute_graph.hpp.

#include <memsched/core/config.hpp>
#include <memsched/core/errors.hpp>
#include <memsched/graph/dataflow_graph.hpp>

#include <filesystem>
#include <iosfwd>
#include <string>
#include <string_view>

namespace memsched {

/// Parses a graph in GraphML (the first graph of the document); `source` names the input in
/// messages. Node attributes `bytes` (required), `id`, `name`, `op`, `cost`, `workspace`, `role`,
/// `backward` (legacy), `grad_of`, `output`, `order_position`; graph attributes `name`, `kind`; others are
/// ignored. Without `id` attributes the nodes are numbered 0, 1, ... in file order (Boost's parser
/// creates a node for an edge end that names no <node>; it has no `bytes` unless the key has a
/// <default>, which is then the error reported).
/// O((n + m) log m). Throws file_error, whose message starts with `source`, for text that is not
/// GraphML, elements nested deeper than 256 levels (naming the line), two <node> elements with the
/// same id (naming it), and everything parse_json_graph rejects (same checks, same validation).
[[nodiscard]] MEMSCHED_INLINE dataflow_graph parse_graphml_graph(std::string_view text, const std::string& source = "<graphml>");

/// Reads a GraphML file. Throws file_error naming the path when it is a directory or cannot be opened or
/// read, and everything
/// parse_graphml_graph throws.
[[nodiscard]] MEMSCHED_INLINE dataflow_graph read_graphml_graph(const std::filesystem::path& path);

/// Writes the graph as GraphML: nodes "n<index>" with the attributes above but `backward` (`role`
/// only when some node is not forward, `output` only when the graph has explicit outputs, `order_position` only when it has an order, `grad_of` only when
/// a node has one); costs are written with enough digits to read back exactly. O(n + m).
/// Throws graph_error when the graph's outputs or order hold a non-vertex, or when a name, op or
/// kind has a tab, newline, NUL, or a leading, trailing or repeated space (GraphML readers
/// normalize whitespace: it would not read back).
MEMSCHED_INLINE void write_graphml_graph(std::ostream& out, const dataflow_graph& g);

/// Writes the graph to a GraphML file. Throws file_error naming the path when it cannot be written,
/// graph_error as the stream overload.
MEMSCHED_INLINE void write_graphml_graph(const std::filesystem::path& path, const dataflow_graph& g);

}  // namespace memsched

#ifndef MEMSCHED_SEPARATE_COMPILATION
#include <memsched/graph/impl/graphml_io.ipp>
#endif
