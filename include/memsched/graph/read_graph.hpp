#pragma once
// Reads a graph file of any supported format, chosen by the file's extension.

#include <memsched/core/errors.hpp>
#include <memsched/graph/dataflow_graph.hpp>
#include <memsched/graph/json_io.hpp>

#include <filesystem>
#include <string>

namespace memsched {

/// Reads `path` as memsched JSON (.json). Throws file_error naming the path for an unknown
/// extension, and whatever the format's reader throws.
[[nodiscard]] inline dataflow_graph read_graph(const std::filesystem::path& path) {
  const std::string ext = path.extension().string();
  if (ext == ".json") return read_json_graph(path);
  throw file_error(path.string() + ": unknown graph file extension '" + ext + "' (expected .json)");
}

}  // namespace memsched
