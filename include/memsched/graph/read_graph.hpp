#pragma once
// Reads a graph file of any supported format, chosen by the file's extension (write_graph.hpp writes).

#include <memsched/core/errors.hpp>
#include <memsched/graph/dataflow_graph.hpp>
#include <memsched/graph/dot_io.hpp>
#include <memsched/graph/graphml_io.hpp>
#include <memsched/graph/json_io.hpp>
#include <memsched/graph/write_graph.hpp>  // write_graph: its writing counterpart, long declared here

#if defined(MEMSCHED_HAVE_ONNX)  // linked with memsched::onnx: .onnx models too
#include <memsched/graph/onnx_io.hpp>
#endif

#include <filesystem>
#include <string>

namespace memsched {

namespace detail {
#if defined(MEMSCHED_HAVE_ONNX)
inline constexpr const char* read_graph_extensions = "(expected .json, .graphml, .dot or .onnx)";
#else
inline constexpr const char* read_graph_extensions = "(expected .json, .graphml or .dot; .onnx needs memsched::onnx)";
#endif
}  // namespace detail

/// Reads `path` as memsched JSON (.json), GraphML (.graphml), Graphviz DOT (.dot, .gv) or, when
/// linked with memsched::onnx (MEMSCHED_HAVE_ONNX), an ONNX model (.onnx) with default
/// onnx_read_options. O((n + m) log m). Throws file_error naming the path for an unknown extension,
/// and whatever the format's reader throws (file_error naming the path and the field or node).
[[nodiscard]] inline dataflow_graph read_graph(const std::filesystem::path& path) {
  const std::string ext = path.extension().string();
  if (ext == ".json") return read_json_graph(path);
  if (ext == ".graphml") return read_graphml_graph(path);
  if (ext == ".dot" || ext == ".gv") return read_dot_graph(path);
#if defined(MEMSCHED_HAVE_ONNX)
  if (ext == ".onnx") return read_onnx_graph(path);
#endif
  throw file_error(path.string() + ": unknown graph file extension '" + ext + "' " + detail::read_graph_extensions);
}

#if defined(MEMSCHED_HAVE_ONNX)
/// read_graph, reading an .onnx model with `onnx` (symbolic dimensions, views). Same complexity
/// and throws.
[[nodiscard]] inline dataflow_graph read_graph(const std::filesystem::path& path, const onnx_read_options& onnx) {
  if (path.extension() == ".onnx") return read_onnx_graph(path, onnx);
  return read_graph(path);
}
#endif

}  // namespace memsched
