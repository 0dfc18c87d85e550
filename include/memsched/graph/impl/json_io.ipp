#pragma once
// The definitions of the functions declared in graph/json_io.hpp. Header-only mode: that header
// includes this file at its end and they are compiled in the TUs that call them (core/config.hpp).
// With MEMSCHED_SEPARATE_COMPILATION only src/memsched.cpp includes it, and a TU that reads or
// writes graphs parses none of the reader's headers.

#include <memsched/graph/json_io.hpp>
#include <memsched/graph/detail/json_graph.hpp>

namespace memsched {

MEMSCHED_INLINE dataflow_graph parse_json_graph(std::string_view text, const std::string& source) {
  const detail::json_value doc = detail::parse_json(text, source);
  return detail::build_dataflow_graph(detail::json_record(doc, source), source);
}

MEMSCHED_INLINE dataflow_graph read_json_graph(const std::filesystem::path& path) {
  return parse_json_graph(detail::read_text_file(path), path.string());
}

MEMSCHED_DEF void detail::check_json_writable(const dataflow_graph& g, const char* function) {
  check_graph_lists(g, function);
  const auto& info = g[boost::graph_bundle];
  auto check_utf8 = [&](const std::string& text, const std::string& what) {
    if (!valid_utf8(text)) throw graph_error(std::string(function) + ": " + what + " is not valid UTF-8");
  };
  check_utf8(info.name, "the graph name");
  check_utf8(info.kind, "the graph kind");
  for (std::size_t i = 0; i < num_vertices(g); ++i) {
    check_utf8(g[i].name, node_label(g[i].id) + ": name");
    check_utf8(g[i].op, node_label(g[i].id) + ": op");
  }
}

MEMSCHED_INLINE void write_json_graph(const std::filesystem::path& path, const dataflow_graph& g) {
  detail::check_json_writable(g, "write_json_graph");
  detail::write_text_file(path, detail::json_graph_text(g) + '\n');
}

}  // namespace memsched
