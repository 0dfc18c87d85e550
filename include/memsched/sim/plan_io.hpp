#pragma once
// Order and plan files: node ids in files, vertex indices in memory.
//
//   order file: {"order": [id, ...], ...}  (other fields are kept for the reader: ignored here),
//               or a bare array [id, ...]
//   plan file:  {"steps": [{"op": "compute" | "free", "node": id}, ...], ...}
//
// The documents `memsched order --out` and `memsched remat --out` write are such files. Every
// function takes the graph's ids by vertex index (`memory_graph::all_ids()`, or vertex_ids(g) of
// any graph with node maps). Reading checks the format and the ids only: whether the order or plan
// is valid for the graph is the simulator's verdict (simulate_order, simulate_plan).

#include <memsched/core/errors.hpp>
#include <memsched/graph/detail/input_limits.hpp>
#include <memsched/sim/execution_plan.hpp>

#include <boost/graph/graph_traits.hpp>
#include <boost/property_map/property_map.hpp>
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace memsched {

/// The ids of a graph's vertices by index, through its node maps (`maps.index`, `maps.id`): what
/// the functions below translate through. O(n).
template <class G, class Maps>
[[nodiscard]] std::vector<std::int64_t> vertex_ids(const G& g, const Maps& maps) {
  std::vector<std::int64_t> ids(num_vertices(g));
  for (auto [it, end] = vertices(g); it != end; ++it)
    ids[static_cast<std::size_t>(get(maps.index, *it))] = static_cast<std::int64_t>(get(maps.id, *it));
  return ids;
}

namespace detail {

[[nodiscard]] inline nlohmann::json read_json_document(const std::string& path) {
  // The graph readers' file reading and nesting limit: a directory and deep nesting (nlohmann's
  // dump() in error messages recurses) are file errors naming the file.
  const std::string text = read_text_file(path);
  check_json_nesting(text, path);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, and out_of_range for numbers beyond double
    throw file_error(path + ": not valid JSON (" + e.what() + ")");
  }
}

inline void write_json_document(const std::string& path, const nlohmann::json& doc) {
  std::ofstream out(path, std::ios::binary);
  out << doc.dump(1) << '\n';
  out.flush();
  if (!out) throw file_error(path + ": cannot write the file");
}

/// ids[v], or std::out_of_range naming `v` (a vertex index beyond the graph).
[[nodiscard]] inline std::int64_t id_of_vertex(std::span<const std::int64_t> ids, std::size_t v) {
  if (v >= ids.size())
    throw std::out_of_range("memsched: vertex index " + std::to_string(v) + " is not a vertex of a graph with " + std::to_string(ids.size()) +
                            " vertices");
  return ids[v];
}

/// Id -> vertex index. Ids are unique in every graph memsched builds; the first wins otherwise.
[[nodiscard]] inline std::unordered_map<std::int64_t, std::size_t> index_of_ids(std::span<const std::int64_t> ids) {
  std::unordered_map<std::int64_t, std::size_t> index;
  index.reserve(ids.size());
  for (std::size_t v = 0; v < ids.size(); ++v) index.emplace(ids[v], v);
  return index;
}

/// The vertex of `value` (a node id at `where`), or file_error naming `where`.
[[nodiscard]] inline std::size_t vertex_of_id(const std::unordered_map<std::int64_t, std::size_t>& index, const nlohmann::json& value,
                                              const std::string& where) {
  if (!value.is_number_integer()) throw file_error(where + ": not an integer node id (" + value.dump() + ")");
  const auto it = index.find(value.get<std::int64_t>());
  if (it == index.end()) throw file_error(where + ": unknown node id " + value.dump());
  return it->second;
}

}  // namespace detail

/// The ids of `order` (vertex indices) as a JSON array. O(length).
/// Throws std::out_of_range when an index is not a vertex.
[[nodiscard]] inline nlohmann::json order_to_json(std::span<const std::int64_t> ids, std::span<const std::size_t> order) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto v : order) a.push_back(detail::id_of_vertex(ids, v));
  return a;
}

/// The vertex indices of an order document (`{"order": [ids]}` or a bare array); `where` (the file
/// name) starts every message. O(n + length).
/// Throws file_error naming `where` and the entry: not an array, a non-integer or unknown id.
[[nodiscard]] inline std::vector<std::size_t> order_from_json(const nlohmann::json& doc, std::span<const std::int64_t> ids,
                                                              const std::string& where) {
  const nlohmann::json* entries = &doc;
  if (doc.is_object()) {
    if (!doc.contains("order")) throw file_error(where + ": expected {\"order\": [ids]} or an array of ids");
    entries = &doc["order"];
  }
  if (!entries->is_array()) throw file_error(where + ": order: expected an array of node ids");
  const auto index = detail::index_of_ids(ids);
  std::vector<std::size_t> order;
  order.reserve(entries->size());
  for (std::size_t i = 0; i < entries->size(); ++i)
    order.push_back(detail::vertex_of_id(index, (*entries)[i], where + ": order[" + std::to_string(i) + "]"));
  return order;
}

/// A plan's steps as [{"op": "compute", "node": id}, ...]. O(steps).
/// Throws std::out_of_range when a step's node is not a vertex.
[[nodiscard]] inline nlohmann::json plan_to_json(std::span<const std::int64_t> ids, const execution_plan& plan) {
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& s : plan.steps)
    steps.push_back(nlohmann::json{{"op", std::string(to_string(s.op))}, {"node", detail::id_of_vertex(ids, s.node)}});
  return steps;
}

/// The plan of a plan document (`{"steps": [...]}`); `where` starts every message. O(n + steps).
/// Throws file_error naming `where` and the step: no "steps" array, a step without "op" and
/// "node", an op other than "compute"/"free", a non-integer or unknown node id.
[[nodiscard]] inline execution_plan plan_from_json(const nlohmann::json& doc, std::span<const std::int64_t> ids, const std::string& where) {
  if (!doc.is_object() || !doc.contains("steps") || !doc["steps"].is_array())
    throw file_error(where + ": expected an object with a 'steps' array");
  const nlohmann::json& steps = doc["steps"];
  const auto index = detail::index_of_ids(ids);
  execution_plan plan;
  plan.steps.reserve(steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const std::string at = where + ": steps[" + std::to_string(i) + "]";
    const nlohmann::json& s = steps[i];
    if (!s.is_object() || !s.contains("op") || !s.contains("node")) throw file_error(at + ": expected {\"op\", \"node\"}");
    const std::string op = s["op"].is_string() ? s["op"].get<std::string>() : "";
    if (op != "compute" && op != "free") throw file_error(at + ".op must be \"compute\" or \"free\"");
    plan.steps.push_back({op == "compute" ? plan_op::compute : plan_op::free, detail::vertex_of_id(index, s["node"], at + ".node")});
  }
  return plan;
}

/// Reads the order file `path` (see the top of this header) as vertex indices. O(file + n).
/// Throws file_error naming the file (and the entry): unreadable, not JSON, not an order, an
/// unknown or non-integer id.
[[nodiscard]] inline std::vector<std::size_t> read_order(const std::string& path, std::span<const std::int64_t> ids) {
  return order_from_json(detail::read_json_document(path), ids, path);
}

/// Writes `order` to `path` as `fields` plus "order": [ids] (fields: other members of the document,
/// e.g. the algorithm and its peak; must be an object or null). O(length).
/// Throws file_error naming the file when it cannot be written; std::out_of_range on a bad index.
inline void write_order(const std::string& path, std::span<const std::int64_t> ids, std::span<const std::size_t> order,
                        nlohmann::json fields = nlohmann::json::object()) {
  if (fields.is_null()) fields = nlohmann::json::object();
  fields["order"] = order_to_json(ids, order);
  detail::write_json_document(path, fields);
}

/// Reads the plan file `path` (see the top of this header). O(file + n).
/// Throws file_error naming the file and the step (see plan_from_json).
[[nodiscard]] inline execution_plan read_plan(const std::string& path, std::span<const std::int64_t> ids) {
  return plan_from_json(detail::read_json_document(path), ids, path);
}

/// Writes `plan` to `path` as `fields` plus "steps": [...]. O(steps).
/// Throws file_error naming the file when it cannot be written; std::out_of_range on a bad index.
inline void write_plan(const std::string& path, std::span<const std::int64_t> ids, const execution_plan& plan,
                       nlohmann::json fields = nlohmann::json::object()) {
  if (fields.is_null()) fields = nlohmann::json::object();
  fields["steps"] = plan_to_json(ids, plan);
  detail::write_json_document(path, fields);
}

}  // namespace memsched
