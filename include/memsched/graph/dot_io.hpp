#pragma once
// Reading and writing graphs as Graphviz DOT through Boost.Graph's read_graphviz/write_graphviz_dp
// and dynamic_properties. The DOT node name is the node id; attribute names: see
// docs/graph-format.md and detail/attribute_graph.hpp.

#include <memsched/core/errors.hpp>
#include <memsched/graph/dataflow_graph.hpp>
#include <memsched/graph/detail/attribute_graph.hpp>
#include <memsched/graph/detail/graph_record.hpp>
#include <memsched/graph/detail/input_limits.hpp>

#include <boost/graph/graphviz.hpp>

#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <new>
#include <sstream>
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
/// integer, and everything parse_json_graph rejects (same checks, same validation).
[[nodiscard]] inline dataflow_graph parse_dot_graph(std::string_view text, const std::string& source = "<dot>") {
  detail::check_dot_nesting(text, source);
  detail::attribute_graph raw;
  auto dp = detail::attribute_properties(raw, "node_id");
  try {
    if (!boost::read_graphviz(std::string(text), raw, dp, "node_id"))
      throw file_error(source + ": not a valid DOT digraph");
  } catch (const file_error&) {
    throw;
  } catch (const boost::undirected_graph_error&) {
    throw file_error(source + ": not a DOT digraph (an undirected graph: use 'digraph' and '->')");
  } catch (const std::bad_alloc&) {
    // Boost expands an edge between subgraphs into every pair of their nodes before we see it.
    throw file_error(source + ": out of memory reading the DOT graph (an edge between subgraphs adds one edge per pair of their nodes)");
  } catch (const std::exception& e) {
    throw file_error(source + ": not valid DOT (" + e.what() + ")");
  }
  return detail::build_dataflow_graph(detail::record_from_attributes(raw, source, detail::attribute_format::dot), source);
}

/// Reads a DOT file. Throws file_error naming the path when it is a directory or cannot be opened or
/// read, and everything
/// parse_dot_graph throws.
[[nodiscard]] inline dataflow_graph read_dot_graph(const std::filesystem::path& path) {
  return parse_dot_graph(detail::read_text_file(path), path.string());
}

namespace detail {
/// Boost writes `"` as `\"` and reads `\"` back as `"`, leaving other backslashes alone: a string
/// ending in a backslash, or with a backslash before a quote, would not read back.
inline void check_dot_text(const std::string& text, const std::string& what) {
  if ((!text.empty() && text.back() == '\\') || text.find("\\\"") != std::string::npos)
    throw graph_error("write_dot_graph: " + what + " '" + text +
                      "' ends with a backslash or has one before a quote: DOT cannot hold it (use JSON or GraphML)");
}
}  // namespace detail

/// Writes the graph as a DOT digraph: node names are the ids, the attributes above but `backward`
/// as node attributes (`role` only when some node is not forward, `output` only with explicit outputs, `order_position` only with an order, `grad_of`
/// only when a node has one), `name` and `kind` as graph attributes; costs with enough digits to
/// read back exactly. O(n + m). Throws graph_error when the graph's outputs or order hold a
/// non-vertex, or when a name, op or kind ends with a backslash or has one before a quote (Boost's
/// DOT escaping cannot represent it).
inline void write_dot_graph(std::ostream& out, const dataflow_graph& g) {
  detail::check_graph_lists(g, "write_dot_graph");
  detail::check_dot_text(g[boost::graph_bundle].name, "the graph name");
  detail::check_dot_text(g[boost::graph_bundle].kind, "the graph kind");
  for (std::size_t v = 0; v < num_vertices(g); ++v) {
    detail::check_dot_text(g[v].name, "node " + std::to_string(g[v].id) + ": name");
    detail::check_dot_text(g[v].op, "node " + std::to_string(g[v].id) + ": op");
  }
  const auto dp = detail::written_properties(g, "node_id");
  boost::write_graphviz_dp(out, g, dp, "node_id");
}

/// Writes the graph to a DOT file. Throws file_error naming the path when it cannot be written,
/// graph_error as the stream overload.
inline void write_dot_graph(const std::filesystem::path& path, const dataflow_graph& g) {
  std::ostringstream text;
  write_dot_graph(text, g);
  std::ofstream out(path, std::ios::binary);
  out << text.str();
  out.flush();
  if (!out) throw file_error(path.string() + ": cannot write the file");
}

}  // namespace memsched
