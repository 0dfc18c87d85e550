#pragma once
// Writes a graph file in the format named by the file's extension: the one writer behind every
// --out of a graph in the tool (rewrite, generate, train, convert).

#include <memsched/core/config.hpp>
#include <memsched/core/errors.hpp>
#include <memsched/graph/dataflow_graph.hpp>
#include <memsched/graph/dot_io.hpp>
#include <memsched/graph/graphml_io.hpp>
#include <memsched/graph/json_io.hpp>
#include <memsched/graph/memory_graph.hpp>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <type_traits>

namespace memsched {

/// The graph file formats write_graph knows, by extension.
enum class graph_file_format { json, graphml, dot };

/// The format of `path` by its extension (.json; .graphml; .dot or .gv), nullopt for any other.
/// O(length of the path).
[[nodiscard]] inline std::optional<graph_file_format> graph_file_format_of(const std::filesystem::path& path) {
  const std::string ext = path.extension().string();
  if (ext == ".json") return graph_file_format::json;
  if (ext == ".graphml") return graph_file_format::graphml;
  if (ext == ".dot" || ext == ".gv") return graph_file_format::dot;
  return std::nullopt;
}

namespace detail {

/// A dataflow_graph holding what a memory_graph knows (no names or ops: property maps carry none).
/// O(n + m).
MEMSCHED_DECL [[nodiscard]] dataflow_graph dataflow_graph_of(const memory_graph& m);

/// Writes `g` to `path` in `format`; throws what that format's writer throws.
MEMSCHED_DECL void write_dataflow_graph(const std::filesystem::path& path, graph_file_format format, const dataflow_graph& g);

}  // namespace detail

/// Writes `g` to `path` as memsched JSON (.json), GraphML (.graphml) or Graphviz DOT (.dot, .gv),
/// chosen by the extension. `g` is a dataflow_graph (everything is written: names, ops, order), a
/// memory_graph, or any Boost graph with its node maps (ids, bytes, costs, workspace, roles,
/// grad_of, inplace and outputs are written). O(n + m) (plus O((n + m) log m) to convert a generic graph).
/// Throws file_error naming the path and the known extensions for another extension (before
/// writing anything; as read_graph does), file_error naming the path when the file cannot be
/// written (a full disk, a directory), graph_error from the format's writer (text it cannot hold) and from
/// make_memory_graph (a generic graph with bad maps).
template <class G, class... Maps>
  requires(std::is_same_v<G, dataflow_graph> && sizeof...(Maps) == 0) || memory_graph_source<G, Maps...>
void write_graph(const std::filesystem::path& path, const G& g, const Maps&... maps) {
  const auto format = graph_file_format_of(path);
  if (!format)
    throw file_error(path.string() + ": unknown graph file extension '" + path.extension().string() +
                     "' (expected .json, .graphml or .dot)");
  if constexpr (std::is_same_v<G, dataflow_graph> && sizeof...(Maps) == 0)
    detail::write_dataflow_graph(path, *format, g);
  else
    detail::write_dataflow_graph(path, *format, detail::dataflow_graph_of(detail::to_memory_graph(g, maps...)));
}

}  // namespace memsched

#ifndef MEMSCHED_SEPARATE_COMPILATION
#include <memsched/graph/impl/write_graph.ipp>
#endif
