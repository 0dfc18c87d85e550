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
//
// Reading and writing files use the library's own JSON reader (graph/detail/json_reader.hpp); the
// functions that take or return an nlohmann::json (order_to_json, ..., the `fields` of
// write_order) are templates so that this header needs only <nlohmann/json_fwd.hpp>: include
// <nlohmann/json.hpp> where you call them.

#include <memsched/core/errors.hpp>
#include <memsched/graph/detail/input_limits.hpp>
#include <memsched/graph/detail/json_reader.hpp>
#include <memsched/sim/execution_plan.hpp>

#include <boost/graph/graph_traits.hpp>
#include <boost/property_map/property_map.hpp>
#include <nlohmann/json_fwd.hpp>

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <span>
#include <string>
#include <string_view>
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

template <class Json>
void write_json_document(const std::string& path, const Json& doc) {
  write_text_file(path, doc.dump(1) + '\n');
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

/// The vertex of `value` (a node id at `where()`: called only to name an error), or file_error
/// naming it.
template <class Json, class Where>
[[nodiscard]] std::size_t vertex_of_id(const std::unordered_map<std::int64_t, std::size_t>& index, const Json& value, const Where& where) {
  if (!value.is_number_integer()) throw file_error(where() + ": not an integer node id (" + value.dump() + ")");
  const auto it = index.find(value.template get<std::int64_t>());
  if (it == index.end()) throw file_error(where() + ": unknown node id " + value.dump());
  return it->second;
}

/// Entry i of an order document (see order_from_json).
template <class Json>
[[nodiscard]] std::size_t order_entry_from_json(const Json& entry, const std::unordered_map<std::int64_t, std::size_t>& index,
                                                const std::string& where, std::size_t i) {
  return vertex_of_id(index, entry, [&] { return where + ": order[" + std::to_string(i) + "]"; });
}

/// Step i of a plan document (see plan_from_json).
template <class Json>
[[nodiscard]] plan_step plan_step_from_json(const Json& s, const std::unordered_map<std::int64_t, std::size_t>& index, const std::string& where,
                                            std::size_t i) {
  const auto at = [&] { return where + ": steps[" + std::to_string(i) + "]"; };
  if (!s.is_object() || !s.contains("op") || !s.contains("node")) throw file_error(at() + ": expected {\"op\", \"node\"}");
  const auto& op = s["op"];
  const bool compute = op.is_string() && op.template get<std::string>() == "compute";
  if (!compute && !(op.is_string() && op.template get<std::string>() == "free")) throw file_error(at() + ".op must be \"compute\" or \"free\"");
  return {compute ? plan_op::compute : plan_op::free, vertex_of_id(index, s["node"], [&] { return at() + ".node"; })};
}

/// Parses `text` (`source` names it), handing the elements of its top-level array (when
/// `top_array`) and of its top-level object's array member `member` to `each(i, element)` as they
/// are read, not stored (see parse_json_streaming). The first file_error of `each` is thrown once
/// the whole text is known to be JSON: errors come in the same order as from reading the document,
/// then its entries (a streamed array already has the shape the callers check).
template <class Each>
[[nodiscard]] json_value parse_json_deferring(std::string_view text, const std::string& source, bool top_array, std::string_view member, Each each) {
  std::optional<file_error> first_error;
  json_value doc = parse_json_streaming(text, source, top_array, member, [&](std::size_t i, const json_value& element) {
    if (first_error) return;
    try {
      each(i, element);
    } catch (const file_error& e) {
      first_error = e;
    }
  });
  if (first_error) throw *first_error;
  return doc;
}

/// The array of ids of an order document (`{"order": [ids]}` or a bare array), or file_error
/// naming `where`. Json: nlohmann::json or json_value.
template <class Json>
[[nodiscard]] const Json& order_entries(const Json& doc, const std::string& where) {
  const Json* entries = &doc;
  if (doc.is_object()) {
    if (!doc.contains("order")) throw file_error(where + ": expected {\"order\": [ids]} or an array of ids");
    entries = &doc["order"];
  }
  if (!entries->is_array()) throw file_error(where + ": order: expected an array of node ids");
  return *entries;
}

/// The "steps" array of a plan document, or file_error naming `where`. Json: as order_entries.
template <class Json>
[[nodiscard]] const Json& plan_steps(const Json& doc, const std::string& where) {
  if (!doc.is_object() || !doc.contains("steps") || !doc["steps"].is_array())
    throw file_error(where + ": expected an object with a 'steps' array");
  return doc["steps"];
}

/// read_order on the file's text (`source`: its name). Also what fuzz/plan_files.cpp reads.
[[nodiscard]] inline std::vector<std::size_t> read_order_text(std::string_view text, std::span<const std::int64_t> ids, const std::string& source) {
  // The entries are converted as they are read (no json_value per entry: orders and
  // plans of millions of steps); the document's shape is checked after.
  const auto index = index_of_ids(ids);
  std::vector<std::size_t> order;
  const json_value doc = parse_json_deferring(
      text, source, true, "order", [&](std::size_t i, const json_value& e) { order.push_back(order_entry_from_json(e, index, source, i)); });
  (void)order_entries(doc, source);  // the streamed array reads as empty
  return order;
}

/// read_plan on the file's text (`source`: its name). Also what fuzz/plan_files.cpp reads.
[[nodiscard]] inline execution_plan read_plan_text(std::string_view text, std::span<const std::int64_t> ids, const std::string& source) {
  // As read_order_text: a 2-million-step plan costs its text and its steps (16 bytes each).
  const auto index = index_of_ids(ids);
  execution_plan plan;
  const json_value doc = parse_json_deferring(
      text, source, false, "steps", [&](std::size_t i, const json_value& s) { plan.steps.push_back(plan_step_from_json(s, index, source, i)); });
  (void)plan_steps(doc, source);  // the streamed array reads as empty
  return plan;
}

}  // namespace detail

/// The ids of `order` (vertex indices) as a JSON array. O(length).
/// Throws std::out_of_range when an index is not a vertex.
template <class Json = nlohmann::json>
[[nodiscard]] Json order_to_json(std::span<const std::int64_t> ids, std::span<const std::size_t> order) {
  Json a = Json::array();
  for (const auto v : order) a.push_back(detail::id_of_vertex(ids, v));
  return a;
}

/// The vertex indices of an order document (`{"order": [ids]}` or a bare array); `where` (the file
/// name) starts every message. O(n + length).
/// Json: nlohmann::json, or the library's own detail::json_value.
/// Throws file_error naming `where` and the entry: not an array, a non-integer or unknown id.
template <class Json>
[[nodiscard]] std::vector<std::size_t> order_from_json(const Json& doc, std::span<const std::int64_t> ids, const std::string& where) {
  const Json& entries = detail::order_entries(doc, where);
  const auto index = detail::index_of_ids(ids);
  std::vector<std::size_t> order;
  order.reserve(entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) order.push_back(detail::order_entry_from_json(entries[i], index, where, i));
  return order;
}

/// A plan's steps as [{"op": "compute", "node": id}, ...]. O(steps).
/// Throws std::out_of_range when a step's node is not a vertex.
template <class Json = nlohmann::json>
[[nodiscard]] Json plan_to_json(std::span<const std::int64_t> ids, const execution_plan& plan) {
  Json steps = Json::array();
  for (const auto& s : plan.steps) {
    Json step = Json::object();
    step["op"] = std::string(to_string(s.op));
    step["node"] = detail::id_of_vertex(ids, s.node);
    steps.push_back(std::move(step));
  }
  return steps;
}

/// The plan of a plan document (`{"steps": [...]}`); `where` starts every message. O(n + steps).
/// Throws file_error naming `where` and the step: no "steps" array, a step without "op" and
/// "node", an op other than "compute"/"free", a non-integer or unknown node id. Json: as order_from_json.
template <class Json>
[[nodiscard]] execution_plan plan_from_json(const Json& doc, std::span<const std::int64_t> ids, const std::string& where) {
  const Json& steps = detail::plan_steps(doc, where);
  const auto index = detail::index_of_ids(ids);
  execution_plan plan;
  plan.steps.reserve(steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i) plan.steps.push_back(detail::plan_step_from_json(steps[i], index, where, i));
  return plan;
}

/// Reads the order file `path` (see the top of this header) as vertex indices. O(file + n).
/// Throws file_error naming the file (and the entry): unreadable, not JSON, not an order, an
/// unknown or non-integer id.
[[nodiscard]] inline std::vector<std::size_t> read_order(const std::string& path, std::span<const std::int64_t> ids) {
  return detail::read_order_text(detail::read_text_file(path), ids, path);
}

/// Writes `order` to `path` as `fields` plus "order": [ids] (fields: other members of the document,
/// e.g. the algorithm and its peak; must be an object or null; an nlohmann::json). O(length).
/// Throws file_error naming the file when it cannot be written; std::out_of_range on a bad index.
template <class Json = nlohmann::json>
void write_order(const std::string& path, std::span<const std::int64_t> ids, std::span<const std::size_t> order,
                 std::type_identity_t<Json> fields = std::type_identity_t<Json>::object()) {
  if (fields.is_null()) fields = Json::object();
  fields["order"] = order_to_json<Json>(ids, order);
  detail::write_json_document(path, fields);
}

/// Reads the plan file `path` (see the top of this header). O(file + n).
/// Throws file_error naming the file and the step (see plan_from_json).
[[nodiscard]] inline execution_plan read_plan(const std::string& path, std::span<const std::int64_t> ids) {
  return detail::read_plan_text(detail::read_text_file(path), ids, path);
}

/// Writes `plan` to `path` as `fields` plus "steps": [...]. O(steps).
/// Throws file_error naming the file when it cannot be written; std::out_of_range on a bad index.
template <class Json = nlohmann::json>
void write_plan(const std::string& path, std::span<const std::int64_t> ids, const execution_plan& plan,
                std::type_identity_t<Json> fields = std::type_identity_t<Json>::object()) {
  if (fields.is_null()) fields = Json::object();
  fields["steps"] = plan_to_json<Json>(ids, plan);
  detail::write_json_document(path, fields);
}

}  // namespace memsched
