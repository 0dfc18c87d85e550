#pragma once
// The definitions of the functions declared in graph/write_graph.hpp. Header-only mode: that header
// includes this file at its end and they are compiled in the TUs that call them (core/config.hpp).
// With MEMSCHED_SEPARATE_COMPILATION only src/memsched.cpp includes it.

#include <memsched/graph/write_graph.hpp>

namespace memsched {

MEMSCHED_DEF dataflow_graph detail::dataflow_graph_of(const memory_graph& m) {
  dataflow_graph g(m.size());
  for (std::size_t v = 0; v < m.size(); ++v) {
    node& n = g[v];
    n.id = m.id(v);
    n.bytes = m.bytes(v);
    n.cost = m.cost(v);
    n.workspace = m.workspace(v);
    n.role = m.role(v);
    if (const auto f = m.grad_of(v)) n.grad_of = m.id(*f);
    n.inplace = m.inplace(v);
    for (const auto s : m.successors(v)) add_edge(v, static_cast<std::size_t>(s), g);
  }
  // memory_graph resolves implicit outputs (every sink): writing them explicitly means the same.
  g[boost::graph_bundle].outputs = std::vector<std::size_t>(m.outputs().begin(), m.outputs().end());
  return g;
}

MEMSCHED_DEF void detail::write_dataflow_graph(const std::filesystem::path& path, graph_file_format format, const dataflow_graph& g) {
  switch (format) {
    case graph_file_format::json: return write_json_graph(path, g);
    case graph_file_format::graphml: return write_graphml_graph(path, g);
    case graph_file_format::dot: return write_dot_graph(path, g);
  }
}

}  // namespace memsched
