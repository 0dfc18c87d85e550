#pragma once
// Reads and writes a graph file of any supported format, chosen by the file's extension.

#include <memsched/core/errors.hpp>
#include <memsched/graph/dataflow_graph.hpp>
#include <memsched/graph/dot_io.hpp>
#include <memsched/graph/graphml_io.hpp>
#include <memsched/graph/json_io.hpp>

#include <filesystem>
#include <string>

namespace memsched {

/// Reads `path` as memsched JSON (.json), GraphML (.graphml) or Graphviz DOT (.dot, .gv).
/// O((n + m) log m). Throws file_error naming the path for an unknown extension, and whatever the
/// format's reader throws (file_error naming the path and the field or node).
[[nodiscard]] inline dataflow_graph read_graph(const std::filesystem::path& path) {
  const std::string ext = path.extension().string();
  if (ext == ".json") return read_json_graph(path);
  if (ext == ".graphml") return read_graphml_graph(path);
  if (ext == ".dot" || ext == ".gv") return read_dot_graph(path);
  throw file_error(path.string() + ": unknown graph file extension '" + ext + "' (expected .json, .graphml or .dot)");
}

/// Writes `g` to `path` in the format of its extension (.json, .graphml, .dot or .gv). O(n + m).
/// Throws file_error naming the path for an unknown extension or a file that cannot be written,
/// graph_error when the graph's outputs or order hold a non-vertex.
inline void write_graph(const std::filesystem::path& path, const dataflow_graph& g) {
  const std::string ext = path.extension().string();
  if (ext == ".json") return write_json_graph(path, g);
  if (ext == ".graphml") return write_graphml_graph(path, g);
  if (ext == ".dot" || ext == ".gv") return write_dot_graph(path, g);
  throw file_error(path.string() + ": unknown graph file extension '" + ext + "' (expected .json, .graphml or .dot)");
}

}  // namespace memsched
