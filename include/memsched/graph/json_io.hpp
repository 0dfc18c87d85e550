#pragma once
// Reading and writing memsched graph JSON (format version 1, see docs/graph-format.md).

#include <memsched/core/errors.hpp>
#include <memsched/graph/dataflow_graph.hpp>
#include <memsched/graph/detail/graph_record.hpp>
#include <memsched/graph/detail/input_limits.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace memsched {

namespace detail {

/// A JSON node id (or grad_of, edge end, output, order entry): an integer that fits in int64.
inline std::int64_t json_id(const nlohmann::json& value, const std::string& source, const std::string& field) {
  if (value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    fail_file(source, field + ": node id " + value.dump() + " does not fit in 64 bits");
  if (!value.is_number_integer()) fail_file(source, field + ": node id must be an integer, got " + value.dump());
  return value.get<std::int64_t>();
}

/// A JSON size (bytes, workspace): an integer that fits in int64 (the sign is checked later).
inline std::int64_t json_size(const nlohmann::json& value, const std::string& source, const std::string& field) {
  if (value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    fail_file(source, field + " = " + value.dump() + " does not fit in 64 bits");
  if (!value.is_number_integer()) fail_file(source, field + " must be an integer >= 0, got " + value.dump());
  return value.get<std::int64_t>();
}

inline std::vector<std::int64_t> json_id_list(const nlohmann::json& list, const char* key, const std::string& source) {
  if (!list.is_array()) fail_file(source, std::string("'") + key + "' must be an array of node ids, got " + list.dump());
  std::vector<std::int64_t> out;
  out.reserve(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) out.push_back(json_id(list[i], source, std::string(key) + "[" + std::to_string(i) + "]"));
  return out;
}

inline std::string json_string(const nlohmann::json& object, const char* key, const std::string& source, const std::string& where) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return {};
  if (!it->is_string()) fail_file(source, where + key + " must be a string, got " + it->dump());
  return it->get<std::string>();
}

/// The graph_record of a parsed JSON document (types checked here, meaning in build_dataflow_graph).
inline graph_record json_record(const nlohmann::json& doc, const std::string& source) {
  using nlohmann::json;
  if (!doc.is_object()) fail_file(source, "the top level must be a JSON object");
  graph_record r;
  r.name = json_string(doc, "name", source, "");
  r.kind = json_string(doc, "kind", source, "");
  const auto nodes = doc.find("nodes");
  if (nodes == doc.end() || !nodes->is_array()) fail_file(source, "missing field 'nodes' (an array of node objects)");
  r.nodes.reserve(nodes->size());
  for (std::size_t i = 0; i < nodes->size(); ++i) {
    const json& n = (*nodes)[i];
    const std::string where = "nodes[" + std::to_string(i) + "]";
    if (!n.is_object()) fail_file(source, where + " must be an object");
    if (!n.contains("id")) fail_file(source, where + ": missing field 'id'");
    node v;
    v.id = json_id(n.at("id"), source, where + ".id");
    const std::string named = node_label(v.id) + ": ";
    if (!n.contains("bytes")) fail_file(source, named + "missing field 'bytes'");
    v.bytes = json_size(n.at("bytes"), source, named + "bytes");
    if (n.contains("workspace") && !n.at("workspace").is_null())
      v.workspace = json_size(n.at("workspace"), source, named + "workspace");
    if (n.contains("cost") && !n.at("cost").is_null()) {
      if (!n.at("cost").is_number()) fail_file(source, named + "cost must be a number >= 0, got " + n.at("cost").dump());
      v.cost = n.at("cost").get<double>();
    }
    v.name = json_string(n, "name", source, named);
    v.op = json_string(n, "op", source, named);
    role_fields roles;
    if (n.contains("role") && !n.at("role").is_null()) {
      const json& role = n.at("role");
      if (!role.is_string() || !parse_node_role(role.get<std::string>()))
        fail_file(source, named + "role must be \"forward\", \"backward\" or \"loss\", got " + role.dump());
      roles.role = parse_node_role(role.get<std::string>());
    }
    if (n.contains("backward") && !n.at("backward").is_null()) {
      if (!n.at("backward").is_boolean()) fail_file(source, named + "backward must be true or false, got " + n.at("backward").dump());
      roles.backward = n.at("backward").get<bool>();
    }
    if (n.contains("grad_of") && !n.at("grad_of").is_null()) v.grad_of = json_id(n.at("grad_of"), source, named + "grad_of");
    r.nodes.push_back(std::move(v));
    r.roles.push_back(roles);
  }
  if (const auto edges = doc.find("edges"); edges != doc.end() && !edges->is_null()) {
    if (!edges->is_array()) fail_file(source, "'edges' must be an array of [producer, consumer] pairs");
    r.edges.reserve(edges->size());
    for (std::size_t i = 0; i < edges->size(); ++i) {
      const json& e = (*edges)[i];
      const std::string where = "edges[" + std::to_string(i) + "]";
      if (!e.is_array() || e.size() != 2) fail_file(source, where + " must be a [producer, consumer] pair, got " + e.dump());
      r.edges.emplace_back(json_id(e[0], source, where), json_id(e[1], source, where));
    }
  }
  if (const auto outputs = doc.find("outputs"); outputs != doc.end() && !outputs->is_null())
    r.outputs = json_id_list(*outputs, "outputs", source);
  if (const auto order = doc.find("order"); order != doc.end() && !order->is_null())
    r.order = json_id_list(*order, "order", source);
  return r;
}

}  // namespace detail

/// Parses a graph in memsched JSON; `source` names the input in error messages. O((n + m) log m).
/// Throws file_error, whose message starts with `source` and names the field or node, for text that
/// is not JSON, a missing or ill-typed field, a negative or non-integer size, sizes whose sum
/// overflows 64 bits, a duplicate or unknown node id, a self loop, a cycle (naming a node on it), an
/// `order` that is not a topological order of all nodes, an `outputs` entry that is not a node,
/// costs whose sum is not finite, a key repeated in one object (naming the node), or arrays/objects
/// nested deeper than 256 levels (naming the line).
/// Unknown fields are ignored; duplicate edges and outputs are merged.
[[nodiscard]] inline dataflow_graph parse_json_graph(std::string_view text, const std::string& source = "<json>") {
  detail::check_json_nesting(text, source);
  // nlohmann keeps the last of two equal keys: {"bytes": 1, "bytes": 2} would silently read 2.
  std::vector<std::vector<std::string>> keys;  // the keys of each open object
  const auto reject_repeated_keys = [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using event_t = nlohmann::json::parse_event_t;
    if (event == event_t::object_start) {
      keys.emplace_back();
    } else if (event == event_t::key && !keys.empty()) {
      keys.back().push_back(parsed.get<std::string>());
    } else if (event == event_t::object_end && !keys.empty()) {
      auto& mine = keys.back();
      std::sort(mine.begin(), mine.end());
      if (const auto twice = std::adjacent_find(mine.begin(), mine.end()); twice != mine.end()) {
        std::string where = keys.size() == 1 ? "the top-level object" : "an object";
        if (keys.size() > 1 && parsed.contains("id") && parsed["id"].is_number_integer())
          where = detail::node_label(parsed["id"].get<std::int64_t>());
        detail::fail_file(source, where + ": key \"" + *twice + "\" appears twice");
      }
      keys.pop_back();
    }
    return true;
  };
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text, reject_repeated_keys);
  } catch (const nlohmann::json::exception& e) {
    throw file_error(source + ": not valid JSON (" + e.what() + ")");
  }
  return detail::build_dataflow_graph(detail::json_record(doc, source), source);
}

/// Reads a graph file in memsched JSON. Throws file_error naming the path when it is a directory or
/// cannot be opened or read, and everything parse_json_graph throws.
[[nodiscard]] inline dataflow_graph read_json_graph(const std::filesystem::path& path) {
  return parse_json_graph(detail::read_text_file(path), path.string());
}

/// The graph as a memsched JSON document (version 1): every node's id, bytes and cost, the other
/// node fields when set (`role` when not forward, or when op "loss" would otherwise read as the loss), the edges as [producer id, consumer id], `outputs` when explicit and `order`
/// when set. O(n + m). Throws graph_error when `outputs` or `order` holds a non-vertex, or a name,
/// op or kind is not valid UTF-8 (JSON cannot hold it).
[[nodiscard]] inline nlohmann::json to_json(const dataflow_graph& g) {
  using nlohmann::json;
  detail::check_graph_lists(g, "to_json");
  const auto& info = g[boost::graph_bundle];
  // nlohmann's dump() would throw its own type_error on the first bad byte, naming nothing.
  auto check_utf8 = [](const std::string& text, const std::string& what) {
    if (!detail::valid_utf8(text)) throw graph_error("to_json: " + what + " is not valid UTF-8");
  };
  check_utf8(info.name, "the graph name");
  check_utf8(info.kind, "the graph kind");
  for (std::size_t i = 0; i < num_vertices(g); ++i) {
    check_utf8(g[i].name, detail::node_label(g[i].id) + ": name");
    check_utf8(g[i].op, detail::node_label(g[i].id) + ": op");
  }
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
    if (detail::role_written(v)) n["role"] = to_string(v.role);
    if (v.grad_of) n["grad_of"] = *v.grad_of;
    nodes.push_back(std::move(n));
  }
  doc["nodes"] = std::move(nodes);
  json edges = json::array();
  for (auto [e, end] = boost::edges(g); e != end; ++e) edges.push_back({g[boost::source(*e, g)].id, g[boost::target(*e, g)].id});
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

/// Writes the graph as memsched JSON. O(n + m). Throws file_error naming the path when the file
/// cannot be written, graph_error as to_json.
inline void write_json_graph(const std::filesystem::path& path, const dataflow_graph& g) {
  const std::string text = to_json(g).dump(1) + '\n';
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.flush();
  if (!out) throw file_error(path.string() + ": cannot write the file");
}

}  // namespace memsched
