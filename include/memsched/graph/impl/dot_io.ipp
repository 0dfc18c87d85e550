#pragma once
// The definitions of the functions declared in graph/dot_io.hpp. Header-only mode: that header
// includes this file at its end and they are compiled in the TUs that call them (core/config.hpp).
// With MEMSCHED_SEPARATE_COMPILATION only src/memsched.cpp includes it, and a TU that reads or
// writes graphs parses none of the parsers' headers.

#include <memsched/graph/dot_io.hpp>
#include <memsched/graph/detail/dot_format.hpp>

#include <new>
#include <sstream>

namespace memsched {

MEMSCHED_INLINE dataflow_graph parse_dot_graph(std::string_view text, const std::string& source) {
  detail::check_dot_nesting(text, source);
  detail::check_dot_edge_expansion(text, source);
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

MEMSCHED_INLINE dataflow_graph read_dot_graph(const std::filesystem::path& path) {
  return parse_dot_graph(detail::read_text_file(path), path.string());
}

MEMSCHED_INLINE void write_dot_graph(std::ostream& out, const dataflow_graph& g) {
  detail::check_graph_lists(g, "write_dot_graph");
  detail::check_dot_text(g[boost::graph_bundle].name, "the graph name");
  detail::check_dot_text(g[boost::graph_bundle].kind, "the graph kind");
  for (std::size_t v = 0; v < num_vertices(g); ++v) {
    detail::check_dot_text(g[v].name, "node " + std::to_string(g[v].id) + ": name");
    detail::check_dot_text(g[v].op, "node " + std::to_string(g[v].id) + ": op");
  }
  const auto dp = detail::written_properties(g, "node_id");
  const std::string node_id = "node_id";
  const detail::dot_attribute_writer<dataflow_graph> attributes{&dp, &node_id, &g};
  boost::write_graphviz(out, g, attributes, attributes, attributes,
                        boost::graph::detail::node_id_property_map<boost::graph_traits<dataflow_graph>::vertex_descriptor>(dp, node_id));
}

MEMSCHED_INLINE void write_dot_graph(const std::filesystem::path& path, const dataflow_graph& g) {
  std::ostringstream text;
  write_dot_graph(text, g);
  detail::write_text_file(path, text.str());
}

}  // namespace memsched
