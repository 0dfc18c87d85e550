#pragma once
// Reading and writing memsched graph JSON (format version 1, see docs/graph-format.md).
// Reading and writing use the library's own small JSON reader and writer
// (graph/detail/json_reader.hpp), not nlohmann/json (~3 s of compile time in every translation
// unit); only to_json, which returns an nlohmann::json, needs <nlohmann/json.hpp> where it is called.

#include <memsched/core/config.hpp>
#include <memsched/core/errors.hpp>
#include <memsched/graph/dataflow_graph.hpp>

#include <nlohmann/json_fwd.hpp>

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace memsched {

/// Parses a graph in memsched JSON; `source` names the input in error messages. O((n + m) log m).
/// Throws file_error, whose message starts with `source` and names the field or node, for text that
/// is not JSON, a missing or ill-typed field, a negative or non-integer size, sizes whose sum
/// overflows 64 bits, a duplicate or unknown node id, a self loop, a cycle (naming a node on it), an
/// `order` that is not a topological order of all nodes, an `outputs` entry that is not a node,
/// costs whose sum is not finite, a key repeated in one object (naming the node), or arrays/objects
/// nested deeper than 256 levels (naming the line; the reader stops there).
/// Unknown fields are ignored; duplicate edges and outputs are merged.
[[nodiscard]] MEMSCHED_INLINE dataflow_graph parse_json_graph(std::string_view text, const std::string& source = "<json>");

/// Reads a graph file in memsched JSON. Throws file_error naming the path when it is a directory or
/// cannot be opened or read, and everything parse_json_graph throws.
[[nodiscard]] MEMSCHED_INLINE dataflow_graph read_json_graph(const std::filesystem::path& path);

namespace detail {

/// What to_json and write_json_graph check before writing: lists of vertices, and UTF-8 text.
/// Throws graph_error naming `function`.
MEMSCHED_DECL void check_json_writable(const dataflow_graph& g, const char* function);

}  // namespace detail

/// The graph as a memsched JSON document (version 1): every node's id, bytes and cost, the other
/// node fields when set (`role` when not forward, or when op "loss" would otherwise read as the
/// loss; `inplace` only when true), the edges as [producer id, consumer id], `outputs` when explicit and `order` when set.
/// A template only so that json_io.hpp needs no more than <nlohmann/json_fwd.hpp>: include
/// <nlohmann/json.hpp> where you call it (write_json_graph writes the same document without it).
/// O(n + m). Throws graph_error when `outputs` or `order` holds a non-vertex, or a name, op or kind
/// is not valid UTF-8 (JSON cannot hold it).
template <class Json = nlohmann::json>
[[nodiscard]] Json to_json(const dataflow_graph& g) {
  detail::check_json_writable(g, "to_json");
  const auto& info = g[boost::graph_bundle];
  Json doc = Json::object();
  doc["format"] = "memsched-graph";
  doc["version"] = 1;
  if (!info.name.empty()) doc["name"] = info.name;
  if (!info.kind.empty()) doc["kind"] = info.kind;
  Json nodes = Json::array();
  for (std::size_t i = 0; i < num_vertices(g); ++i) {
    const node& v = g[i];
    Json n = Json::object();
    n["id"] = v.id;
    if (!v.name.empty()) n["name"] = v.name;
    if (!v.op.empty()) n["op"] = v.op;
    n["bytes"] = v.bytes;
    n["cost"] = v.cost;
    if (v.workspace != 0) n["workspace"] = v.workspace;
    if (detail::role_written(v)) n["role"] = std::string(to_string(v.role));
    if (v.grad_of) n["grad_of"] = *v.grad_of;
    if (v.inplace) n["inplace"] = true;
    nodes.push_back(std::move(n));
  }
  doc["nodes"] = std::move(nodes);
  Json edges = Json::array();
  for (auto [e, end] = boost::edges(g); e != end; ++e) {
    Json pair = Json::array();
    pair.push_back(g[boost::source(*e, g)].id);
    pair.push_back(g[boost::target(*e, g)].id);
    edges.push_back(std::move(pair));
  }
  doc["edges"] = std::move(edges);
  auto ids_of = [&](const std::vector<std::size_t>& list) {
    Json a = Json::array();
    for (auto v : list) a.push_back(g[v].id);
    return a;
  };
  if (info.outputs) doc["outputs"] = ids_of(*info.outputs);
  if (!info.order.empty()) doc["order"] = ids_of(info.order);
  return doc;
}

/// Writes the graph as memsched JSON (the document of to_json, formatted as nlohmann's dump(1)).
/// O(n + m). Throws file_error naming the path when the file cannot be written, graph_error as
/// to_json (naming write_json_graph).
MEMSCHED_INLINE void write_json_graph(const std::filesystem::path& path, const dataflow_graph& g);

}  // namespace memsched

#ifndef MEMSCHED_SEPARATE_COMPILATION
#include <memsched/graph/impl/json_io.ipp>
#endif
