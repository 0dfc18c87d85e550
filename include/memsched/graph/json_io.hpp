#pragma once
// Reading and writing memsched graph JSON (format version 1, see docs/graph-format.md).
// Reading and writing use the library's own small JSON reader and writer
// (graph/detail/json_reader.hpp), not nlohmann/json (~3 s of compile time in every translation
// unit); only to_json, which returns an nlohmann::json, needs <nlohmann/json.hpp> where it is called.

#include <memsched/core/errors.hpp>
#include <memsched/graph/dataflow_graph.hpp>
#include <memsched/graph/detail/graph_record.hpp>
#include <memsched/graph/detail/input_limits.hpp>
#include <memsched/graph/detail/json_reader.hpp>

#include <nlohmann/json_fwd.hpp>

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
inline std::int64_t json_id(const json_value& value, const std::string& source, const std::string& field) {
  if (value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    fail_file(source, field + ": node id " + value.dump() + " does not fit in 64 bits");
  if (!value.is_number_integer()) fail_file(source, field + ": node id must be an integer, got " + value.dump());
  return value.get<std::int64_t>();
}

/// A JSON size (bytes, workspace): an integer that fits in int64 (the sign is checked later).
inline std::int64_t json_size(const json_value& value, const std::string& source, const std::string& field) {
  if (value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    fail_file(source, field + " = " + value.dump() + " does not fit in 64 bits");
  if (!value.is_number_integer()) fail_file(source, field + " must be an integer >= 0, got " + value.dump());
  return value.get<std::int64_t>();
}

inline std::vector<std::int64_t> json_id_list(const json_value& list, const char* key, const std::string& source) {
  if (!list.is_array()) fail_file(source, std::string("'") + key + "' must be an array of node ids, got " + list.dump());
  std::vector<std::int64_t> out;
  out.reserve(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) out.push_back(json_id(list[i], source, std::string(key) + "[" + std::to_string(i) + "]"));
  return out;
}

inline std::string json_string(const json_value& object, const char* key, const std::string& source, const std::string& where) {
  const json_value* it = object.find(key);
  if (it == nullptr || it->is_null()) return {};
  if (!it->is_string()) fail_file(source, where + key + " must be a string, got " + it->dump());
  return it->get<std::string>();
}

/// The graph_record of a parsed JSON document (types checked here, meaning in build_dataflow_graph).
inline graph_record json_record(const json_value& doc, const std::string& source) {
  using json = json_value;
  if (!doc.is_object()) fail_file(source, "the top level must be a JSON object");
  graph_record r;
  r.name = json_string(doc, "name", source, "");
  r.kind = json_string(doc, "kind", source, "");
  const json* nodes = doc.find("nodes");
  if (nodes == nullptr || !nodes->is_array()) fail_file(source, "missing field 'nodes' (an array of node objects)");
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
    if (n.contains("inplace") && !n.at("inplace").is_null()) {
      if (!n.at("inplace").is_boolean()) fail_file(source, named + "inplace must be true or false, got " + n.at("inplace").dump());
      v.inplace = n.at("inplace").get<bool>();
    }
    r.nodes.push_back(std::move(v));
    r.roles.push_back(roles);
  }
  if (const auto edges = doc.find("edges"); edges != nullptr && !edges->is_null()) {
    if (!edges->is_array()) fail_file(source, "'edges' must be an array of [producer, consumer] pairs");
    r.edges.reserve(edges->size());
    for (std::size_t i = 0; i < edges->size(); ++i) {
      const json& e = (*edges)[i];
      const std::string where = "edges[" + std::to_string(i) + "]";
      if (!e.is_array() || e.size() != 2) fail_file(source, where + " must be a [producer, consumer] pair, got " + e.dump());
      r.edges.emplace_back(json_id(e[0], source, where), json_id(e[1], source, where));
    }
  }
  if (const auto outputs = doc.find("outputs"); outputs != nullptr && !outputs->is_null())
    r.outputs = json_id_list(*outputs, "outputs", source);
  if (const auto order = doc.find("order"); order != nullptr && !order->is_null())
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
  detail::check_json_nesting(text, source);  // names the line of the first level too deep
  const detail::json_value doc = detail::parse_json(text, source);
  return detail::build_dataflow_graph(detail::json_record(doc, source), source);
}

/// Reads a graph file in memsched JSON. Throws file_error naming the path when it is a directory or
/// cannot be opened or read, and everything parse_json_graph throws.
[[nodiscard]] inline dataflow_graph read_json_graph(const std::filesystem::path& path) {
  return parse_json_graph(detail::read_text_file(path), path.string());
}

namespace detail {

/// What to_json and write_json_graph check before writing: lists of vertices, and UTF-8 text.
inline void check_json_writable(const dataflow_graph& g, const char* function) {
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

/// The document of to_json as text, as nlohmann's dump(1) writes it (keys sorted, one value per
/// line, one space of indent per level), without building a DOM. O(n + m).
inline std::string json_graph_text(const dataflow_graph& g) {
  const auto& info = g[boost::graph_bundle];
  std::string out;
  out.reserve(64 * (num_vertices(g) + num_edges(g)) + 256);
  const auto key = [&](int indent, const char* k) {
    out.append(static_cast<std::size_t>(indent), ' ');
    append_json_string(out, k);
    out += ": ";
  };
  const auto id_list = [&](const std::vector<std::size_t>& list) {
    if (list.empty()) {
      out += "[]";
      return;
    }
    out += "[\n";
    for (std::size_t k = 0; k < list.size(); ++k) {
      out += "  " + std::to_string(g[list[k]].id);
      out += k + 1 < list.size() ? ",\n" : "\n";
    }
    out += " ]";
  };
  out += "{\n";
  key(1, "edges");
  if (num_edges(g) == 0) {
    out += "[]";
  } else {
    out += "[\n";
    std::size_t left = num_edges(g);
    for (auto [e, end] = boost::edges(g); e != end; ++e) {
      out += "  [\n   " + std::to_string(g[boost::source(*e, g)].id) + ",\n   " + std::to_string(g[boost::target(*e, g)].id) + "\n  ]";
      out += --left > 0 ? ",\n" : "\n";
    }
    out += " ]";
  }
  out += ",\n";
  key(1, "format");
  out += "\"memsched-graph\",\n";
  if (!info.kind.empty()) {
    key(1, "kind");
    append_json_string(out, info.kind);
    out += ",\n";
  }
  if (!info.name.empty()) {
    key(1, "name");
    append_json_string(out, info.name);
    out += ",\n";
  }
  key(1, "nodes");
  if (num_vertices(g) == 0) {
    out += "[]";
  } else {
    out += "[\n";
    for (std::size_t i = 0; i < num_vertices(g); ++i) {
      const node& v = g[i];
      out += "  {\n";
      key(3, "bytes");
      out += std::to_string(v.bytes) + ",\n";
      key(3, "cost");
      append_json_double(out, v.cost);
      if (v.grad_of) {
        out += ",\n";
        key(3, "grad_of");
        out += std::to_string(*v.grad_of);
      }
      out += ",\n";
      key(3, "id");
      out += std::to_string(v.id);
      if (v.inplace) {
        out += ",\n";
        key(3, "inplace");
        out += "true";
      }
      if (!v.name.empty()) {
        out += ",\n";
        key(3, "name");
        append_json_string(out, v.name);
      }
      if (!v.op.empty()) {
        out += ",\n";
        key(3, "op");
        append_json_string(out, v.op);
      }
      if (role_written(v)) {
        out += ",\n";
        key(3, "role");
        append_json_string(out, to_string(v.role));
      }
      if (v.workspace != 0) {
        out += ",\n";
        key(3, "workspace");
        out += std::to_string(v.workspace);
      }
      out += i + 1 < num_vertices(g) ? "\n  },\n" : "\n  }\n";
    }
    out += " ]";
  }
  out += ",\n";
  if (!info.order.empty()) {
    key(1, "order");
    id_list(info.order);
    out += ",\n";
  }
  if (info.outputs) {
    key(1, "outputs");
    id_list(*info.outputs);
    out += ",\n";
  }
  key(1, "version");
  out += "1\n}";
  return out;
}

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
/// to_json.
inline void write_json_graph(const std::filesystem::path& path, const dataflow_graph& g) {
  detail::check_json_writable(g, "to_json");
  const std::string text = detail::json_graph_text(g) + '\n';
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.flush();
  if (!out) throw file_error(path.string() + ": cannot write the file");
}

}  // namespace memsched
