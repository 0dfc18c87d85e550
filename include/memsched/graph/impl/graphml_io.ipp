#pragma once
// The definitions of the functions declared in graph/graphml_io.hpp. Header-only mode: that header
// includes this file at its end and they are compiled in the TUs that call them (core/config.hpp).
// With MEMSCHED_SEPARATE_COMPILATION only src/memsched.cpp includes it, and a TU that reads or
// writes graphs parses none of the parsers' headers.

#include <memsched/graph/graphml_io.hpp>
#include <memsched/graph/detail/graphml_format.hpp>

#include <sstream>

namespace memsched {

MEMSCHED_INLINE dataflow_graph parse_graphml_graph(std::string_view text, const std::string& source) {
  detail::check_xml_nesting(text, source);
  detail::attribute_graph raw;
  auto dp = detail::attribute_properties(raw, "id");
  try {
    const std::string copy(text);
    std::istringstream in{copy};
    detail::graphml_builder builder(raw, dp);
    boost::read_graphml(in, builder, 0);
    detail::check_graphml_structure(copy, source);
  } catch (const file_error&) {
    throw;
  } catch (const boost::undirected_graph_error&) {
    throw file_error(source + ": not a directed GraphML graph (edgedefault=\"undirected\"): dataflow edges need a direction");
  } catch (const std::exception& e) {
    // Boost's message may name its internals (a missing edgedefault): say what is wrong when we can.
    detail::check_graphml_structure(std::string(text), source);
    throw file_error(source + ": not valid GraphML (" + e.what() + ")");
  }
  return detail::build_dataflow_graph(detail::record_from_attributes(raw, source, detail::attribute_format::graphml), source);
}

MEMSCHED_INLINE dataflow_graph read_graphml_graph(const std::filesystem::path& path) {
  return parse_graphml_graph(detail::read_text_file(path), path.string());
}

MEMSCHED_INLINE void write_graphml_graph(std::ostream& out, const dataflow_graph& g) {
  detail::check_graph_lists(g, "write_graphml_graph");
  detail::check_graphml_text(g[boost::graph_bundle].name, "the graph name");
  detail::check_graphml_text(g[boost::graph_bundle].kind, "the graph kind");
  for (std::size_t v = 0; v < num_vertices(g); ++v) {
    detail::check_graphml_text(g[v].name, "node " + std::to_string(g[v].id) + ": name");
    detail::check_graphml_text(g[v].op, "node " + std::to_string(g[v].id) + ": op");
  }
  const auto dp = detail::written_properties(g, "id");
  boost::write_graphml(out, g, get(boost::vertex_index, g), dp, true);
}

MEMSCHED_INLINE void write_graphml_graph(const std::filesystem::path& path, const dataflow_graph& g) {
  std::ostringstream text;
  write_graphml_graph(text, g);
  detail::write_text_file(path, text.str());
}

}  // namespace memsched
