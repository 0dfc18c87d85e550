#pragma once
// Reading and writing memsched graph JSON (format version 1, see docs/graph-format.md).

#include <memsched/core/errors.hpp>
#include <memsched/graph/dataflow_graph.hpp>
#include <memsched/graph/memory_graph.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace memsched {

namespace detail {

/// Maps file ids to vertex indices, with errors that name the file and the field.
class id_table {
 public:
  explicit id_table(std::string source) : source_(std::move(source)) {}
  void add(std::int64_t id, std::size_t index, std::string_view field) {
    if (!index_.emplace(id, index).second) fail(std::string(field) + ": duplicate node id " + std::to_string(id));
  }
  [[nodiscard]] std::size_t at(const nlohmann::json& id, std::string_view field) const {
    if (!id.is_number_integer()) fail(std::string(field) + ": node id must be an integer, got " + id.dump());
    const auto it = index_.find(id.get<std::int64_t>());
    if (it == index_.end()) fail(std::string(field) + ": unknown node id " + id.dump());
    return it->second;
  }
  [[noreturn]] void fail(const std::string& what) const { throw file_error(source_ + ": " + what); }
  [[nodiscard]] const std::string& source() const { return source_; }

 private:
  std::string source_;
  std::unordered_map<std::int64_t, std::size_t> index_;
};

inline std::int64_t json_size(const nlohmann::json& value, const id_table& ids, const std::string& field) {
  if (value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    ids.fail(field + " = " + value.dump() + " does not fit in 63 bits");
  if (!value.is_number_integer()) ids.fail(field + " must be an integer >= 0, got " + value.dump());
  const auto n = value.get<std::int64_t>();
  if (n < 0) ids.fail(field + " must be >= 0, got " + std::to_string(n));
  return n;
}

inline std::vector<std::size_t> json_id_list(const nlohmann::json& doc, const char* key, const id_table& ids) {
  const auto& list = doc.at(key);
  if (!list.is_array()) ids.fail(std::string(key) + " must be an array of node ids");
  std::vector<std::size_t> out;
  out.reserve(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) out.push_back(ids.at(list[i], std::string(key) + "[" + std::to_string(i) + "]"));
  return out;
}

}  // namespace detail

/// Parses a graph in memsched JSON; `source` names the input in error messages. O((n + m) log m).
/// Throws file_error, naming the source and the field or node, for text that is not JSON, a missing
/// or ill-typed field, a negative or non-integer size, sizes whose sum overflows 64 bits, a
/// duplicate or unknown node id, a self loop, a cycle (naming a node on it), an `order` that is not
/// a topological order of all nodes, or an `outputs` entry that is not a node. Unknown fields are
/// ignored; duplicate edges are merged.
[[nodiscard]] inline dataflow_graph parse_json_graph(std::string_view text, const std::string& source = "<json>") {
  using nlohmann::json;
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    throw file_error(source + ": not valid JSON (" + e.what() + ")");
  }
  detail::id_table ids(source);
  if (!doc.is_object()) ids.fail("the top level must be a JSON object");
  if (!doc.contains("nodes") || !doc["nodes"].is_array()) ids.fail("missing field 'nodes' (an array)");
  const json& nodes = doc["nodes"];
  if (nodes.empty()) ids.fail("'nodes' is empty: a graph needs at least one node");

  dataflow_graph g(nodes.size());
  auto& info = g[boost::graph_bundle];
  info.name = doc.value("name", std::string());
  if (doc.contains("kind") && doc["kind"].is_string()) info.kind = doc["kind"].get<std::string>();
  std::int64_t total = 0;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const json& n = nodes[i];
    const std::string where = "nodes[" + std::to_string(i) + "]";
    if (!n.is_object()) ids.fail(where + " must be an object");
    if (!n.contains("id")) ids.fail(where + ": missing field 'id'");
    if (!n["id"].is_number_integer()) ids.fail(where + ".id must be an integer, got " + n["id"].dump());
    node& v = g[i];
    v.id = n["id"].get<std::int64_t>();
    const std::string named = "node " + std::to_string(v.id);
    ids.add(v.id, i, where);
    if (!n.contains("bytes")) ids.fail(named + ": missing field 'bytes'");
    v.bytes = detail::json_size(n["bytes"], ids, named + ": bytes");
    if (n.contains("workspace")) v.workspace = detail::json_size(n["workspace"], ids, named + ": workspace");
    if (__builtin_add_overflow(total, v.bytes, &total) || __builtin_add_overflow(total, v.workspace, &total))
      ids.fail(named + ": the sum of bytes and workspace over all nodes overflows 64 bits");
    if (n.contains("cost")) {
      if (!n["cost"].is_number()) ids.fail(named + ": cost must be a number >= 0, got " + n["cost"].dump());
      v.cost = n["cost"].get<double>();
      if (!(v.cost >= 0) || v.cost == std::numeric_limits<double>::infinity())
        ids.fail(named + ": cost must be a finite number >= 0, got " + n["cost"].dump());
    }
    if (n.contains("name") && n["name"].is_string()) v.name = n["name"].get<std::string>();
    if (n.contains("op") && n["op"].is_string()) v.op = n["op"].get<std::string>();
    if (n.contains("backward") && n["backward"].is_boolean()) v.backward = n["backward"].get<bool>();
    if (n.contains("grad_of") && !n["grad_of"].is_null()) {
      if (!n["grad_of"].is_number_integer()) ids.fail(named + ": grad_of must be a node id");
      v.grad_of = n["grad_of"].get<std::int64_t>();
    }
  }
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (g[i].grad_of) (void)ids.at(json(*g[i].grad_of), "node " + std::to_string(g[i].id) + ": grad_of");

  if (doc.contains("edges")) {
    const json& edges = doc["edges"];
    if (!edges.is_array()) ids.fail("'edges' must be an array of [producer, consumer] pairs");
    std::vector<std::pair<std::size_t, std::size_t>> pairs;
    pairs.reserve(edges.size());
    for (std::size_t i = 0; i < edges.size(); ++i) {
      const std::string where = "edges[" + std::to_string(i) + "]";
      if (!edges[i].is_array() || edges[i].size() != 2) ids.fail(where + " must be a [producer, consumer] pair");
      const std::size_t u = ids.at(edges[i][0], where), v = ids.at(edges[i][1], where);
      if (u == v) ids.fail(where + ": self loop on node " + std::to_string(g[u].id));
      pairs.emplace_back(u, v);
    }
    std::sort(pairs.begin(), pairs.end());
    pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
    for (auto [u, v] : pairs) add_edge(u, v, g);
  }
  if (doc.contains("outputs") && !doc["outputs"].is_null()) {
    auto outputs = detail::json_id_list(doc, "outputs", ids);
    std::sort(outputs.begin(), outputs.end());
    outputs.erase(std::unique(outputs.begin(), outputs.end()), outputs.end());
    info.outputs = std::move(outputs);
  }
  // Cycles and everything else the memory model needs are checked once, by memory_graph.
  try {
    (void)make_memory_graph(g, source);
  } catch (const cycle_error& e) {
    throw file_error(e.what());
  } catch (const graph_error& e) {
    throw file_error(e.what());
  }
  if (doc.contains("order") && !doc["order"].is_null()) {
    info.order = detail::json_id_list(doc, "order", ids);
    std::vector<char> done(nodes.size(), 0);
    for (std::size_t k = 0; k < info.order.size(); ++k) {
      const std::size_t v = info.order[k];
      if (done[v]) ids.fail("order[" + std::to_string(k) + "]: node " + std::to_string(g[v].id) + " appears twice");
      for (auto [e, end] = in_edges(v, g); e != end; ++e)
        if (!done[boost::source(*e, g)])
          ids.fail("order[" + std::to_string(k) + "]: node " + std::to_string(g[v].id) + " comes before its input node " +
                   std::to_string(g[boost::source(*e, g)].id));
      done[v] = 1;
    }
    if (info.order.size() != nodes.size())
      ids.fail("order lists " + std::to_string(info.order.size()) + " of " + std::to_string(nodes.size()) + " nodes");
  }
  return g;
}

/// Reads a graph file in memsched JSON. Throws file_error naming the path when it cannot be opened,
/// and everything parse_json_graph throws.
[[nodiscard]] inline dataflow_graph read_json_graph(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw file_error(path.string() + ": cannot open the file");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parse_json_graph(text, path.string());
}

/// The graph as a memsched JSON document (version 1). O(n + m). Never throws but std::bad_alloc.
[[nodiscard]] inline nlohmann::json to_json(const dataflow_graph& g) {
  using nlohmann::json;
  const auto& info = g[boost::graph_bundle];
  json doc = json::object();
  doc["format"] = "memsched-graph";
  doc["version"] = 1;
  if (!info.name.empty()) doc["name"] = info.name;
  if (!info.kind.empty()) doc["kind"] = info.kind;
  json nodes = json::array();
  for (std::size_t i = 0; i < num_vertices(g); ++i) {
    const node& v = g[i];
    json n = {{"id", v.id}};
    if (!v.name.empty()) n["name"] = v.name;
    if (!v.op.empty()) n["op"] = v.op;
    n["bytes"] = v.bytes;
    n["cost"] = v.cost;
    if (v.workspace != 0) n["workspace"] = v.workspace;
    if (v.backward) n["backward"] = true;
    if (v.grad_of) n["grad_of"] = *v.grad_of;
    nodes.push_back(std::move(n));
  }
  doc["nodes"] = std::move(nodes);
  json edges = json::array();
  for (auto [e, end] = boost::edges(g); e != end; ++e) edges.push_back({g[boost::source(*e, g)].id, g[target(*e, g)].id});
  doc["edges"] = std::move(edges);
  auto ids_of = [&](const std::vector<std::size_t>& list) {
    json a = json::array();
    for (auto v : list) a.push_back(g[v].id);
    return a;
  };
  if (info.outputs) doc["outputs"] = ids_of(*info.outputs);
  if (!info.order.empty()) doc["order"] = ids_of(info.order);
  return doc;
}

/// Writes the graph as memsched JSON. Throws file_error when the file cannot be written.
inline void write_json_graph(const std::filesystem::path& path, const dataflow_graph& g) {
  std::ofstream out(path, std::ios::binary);
  out << to_json(g).dump(1) << '\n';
  if (!out) throw file_error(path.string() + ": cannot write the file");
}

}  // namespace memsched
