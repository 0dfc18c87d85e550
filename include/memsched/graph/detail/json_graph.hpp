#pragma once
// The parts of the JSON graph reader and writer (graph/json_io.hpp) behind its functions: the
// graph_record of a parsed document, and the document's text. Included by graph/impl/json_io.ipp;
// tests include it to compare the writer with to_json.

#include <memsched/core/errors.hpp>
#include <memsched/graph/dataflow_graph.hpp>
#include <memsched/graph/detail/graph_record.hpp>
#include <memsched/graph/detail/input_limits.hpp>
#include <memsched/graph/detail/json_reader.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace memsched::detail {


/// What an integer of a graph file is: a node id (also grad_of, edge end, output, order entry) or
/// a size (bytes, workspace; the sign is checked later). Only the messages differ.
enum class json_integer { id, size };

/// A JSON integer that fits in int64. `field()` names it in messages; it is called only on error,
/// so that reading a large graph builds no message text.
template <class Field>
std::int64_t json_int64(const json_value& value, const std::string& source, json_integer what, Field&& field) {
  if (value.is_number_integer() && !value.is_number_unsigned()) return value.get<std::int64_t>();
  const bool id = what == json_integer::id;
  // The reader stores an integer as unsigned only when it is above INT64_MAX, and as a double
  // marked out of range beyond 64 bits.
  if (value.is_number_unsigned() || (value.is_out_of_range() && value.type() == json_value::kind::floating && value.get<double>() != 0))
    fail_file(source, id ? field() + ": node id " + value.dump() + " does not fit in 64 bits"
                         : field() + " = " + value.dump() + " does not fit in 64 bits");
  fail_file(source, id ? field() + ": node id must be an integer, got " + value.dump()
                       : field() + " must be an integer >= 0, got " + value.dump());
}

/// "an object", "a string", ...: what a value is, for messages.
inline const char* json_type_name(const json_value& value) {
  switch (value.type()) {
    case json_value::kind::null: return "null";
    case json_value::kind::boolean: return "a boolean";
    case json_value::kind::string: return "a string";
    case json_value::kind::array: return "an array";
    case json_value::kind::object: return "an object";
    default: return "a number";
  }
}

inline std::vector<std::int64_t> json_id_list(const json_value& list, const char* key, const std::string& source) {
  if (!list.is_array()) fail_file(source, std::string("'") + key + "' must be an array of node ids, got " + list.dump());
  std::vector<std::int64_t> out;
  out.reserve(list.size());
  for (std::size_t i = 0; i < list.size(); ++i)
    out.push_back(json_int64(list[i], source, json_integer::id, [&] { return std::string(key) + "[" + std::to_string(i) + "]"; }));
  return out;
}

/// The member `key` of an object, or nullptr when it is absent. A null is an error naming the
/// field: memsched never writes one, and reading it as "absent" would replace a value the writer
/// could not represent (an infinite cost) by the default. `where()` prefixes the key.
template <class Where>
const json_value* json_field(const json_value& object, const char* key, const std::string& source, Where&& where) {
  const json_value* it = object.find(key);
  if (it != nullptr && it->is_null()) fail_file(source, where() + key + " is null: give a value or leave the field out");
  return it;
}

/// The string member `key` ("" when absent; null is an error). `where()` prefixes the key in the message; it
/// is called only on error, as json_int64's `field`.
template <class Where>
std::string json_string(const json_value& object, const char* key, const std::string& source, Where&& where) {
  const json_value* it = json_field(object, key, source, where);
  if (it == nullptr) return {};
  if (!it->is_string()) fail_file(source, where() + key + " must be a string, got " + it->dump());
  return it->get<std::string>();
}

/// The graph_record of a parsed JSON document (types checked here, meaning in build_dataflow_graph).
inline graph_record json_record(const json_value& doc, const std::string& source) {
  using json = json_value;
  if (!doc.is_object()) fail_file(source, "the top level must be a JSON object");
  graph_record r;
  const auto top_level = [] { return std::string(); };
  r.name = json_string(doc, "name", source, top_level);
  r.kind = json_string(doc, "kind", source, top_level);
  const json* nodes = doc.find("nodes");
  if (nodes == nullptr) fail_file(source, "missing field 'nodes' (an array of node objects)");
  if (!nodes->is_array()) fail_file(source, "'nodes' must be an array of node objects, got " + std::string(json_type_name(*nodes)));
  r.nodes.reserve(nodes->size());
  for (std::size_t i = 0; i < nodes->size(); ++i) {
    const json& n = (*nodes)[i];
    const auto where = [i] { return "nodes[" + std::to_string(i) + "]"; };
    if (!n.is_object()) fail_file(source, where() + " must be an object");
    // One lookup per field; messages are built only on error.
    const json* id = n.find("id");
    if (id == nullptr) fail_file(source, where() + ": missing field 'id'");
    node v;
    v.id = json_int64(*id, source, json_integer::id, [&] { return where() + ".id"; });
    const auto named = [&v] { return node_label(v.id) + ": "; };
    const json* bytes = n.find("bytes");
    if (bytes == nullptr) fail_file(source, named() + "missing field 'bytes'");
    v.bytes = json_int64(*bytes, source, json_integer::size, [&] { return named() + "bytes"; });
    auto field = [&](const char* key) { return json_field(n, key, source, named); };
    if (const json* workspace = field("workspace"))
      v.workspace = json_int64(*workspace, source, json_integer::size, [&] { return named() + "workspace"; });
    if (const json* cost = field("cost")) {
      if (!cost->is_number()) fail_file(source, named() + "cost must be a number >= 0, got " + cost->dump());
      // Every reader refuses a cost its text gives but a double cannot (1e-400 is not 0).
      if (cost->is_out_of_range() && cost->get<double>() == 0)
        fail_file(source, named() + "cost is out of the range of double (nonzero, but it would read as 0)");
      v.cost = cost->get<double>();
    }
    v.name = json_string(n, "name", source, named);
    v.op = json_string(n, "op", source, named);
    role_fields roles;
    if (const json* role = field("role")) {
      if (role->is_string()) roles.role = parse_node_role(role->get<std::string>());
      if (!roles.role) fail_file(source, named() + "role must be \"forward\", \"backward\" or \"loss\", got " + role->dump());
    }
    if (const json* backward = field("backward")) {
      if (!backward->is_boolean()) fail_file(source, named() + "backward must be true or false, got " + backward->dump());
      roles.backward = backward->get<bool>();
    }
    if (const json* grad_of = field("grad_of"))
      v.grad_of = json_int64(*grad_of, source, json_integer::id, [&] { return named() + "grad_of"; });
    if (const json* inplace = field("inplace")) {
      if (!inplace->is_boolean()) fail_file(source, named() + "inplace must be true or false, got " + inplace->dump());
      v.inplace = inplace->get<bool>();
    }
    r.nodes.push_back(std::move(v));
    r.roles.push_back(roles);
  }
  if (const json* edges = json_field(doc, "edges", source, top_level)) {
    if (!edges->is_array()) fail_file(source, "'edges' must be an array of [producer, consumer] pairs");
    r.edges.reserve(edges->size());
    for (std::size_t i = 0; i < edges->size(); ++i) {
      const json& e = (*edges)[i];
      const auto where = [i] { return "edges[" + std::to_string(i) + "]"; };
      if (!e.is_array() || e.size() != 2) fail_file(source, where() + " must be a [producer, consumer] pair, got " + e.dump());
      const std::int64_t producer = json_int64(e[0], source, json_integer::id, where);
      r.edges.emplace_back(producer, json_int64(e[1], source, json_integer::id, where));
    }
  }
  if (const json* outputs = json_field(doc, "outputs", source, top_level)) r.outputs = json_id_list(*outputs, "outputs", source);
  if (const json* order = json_field(doc, "order", source, top_level)) r.order = json_id_list(*order, "order", source);
  return r;
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

}  // namespace memsched::detail
