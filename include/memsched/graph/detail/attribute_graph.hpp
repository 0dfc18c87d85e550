#pragma once
// Internals shared by the GraphML and DOT readers and writers. Both formats go through Boost.Graph's
// dynamic_properties with the attribute names of docs/graph-format.md:
//   node: id (GraphML only; in DOT the node name is the id), name, op, bytes, cost, workspace,
//         role (forward/backward/loss; written for every node when some node needs it, see
//         role_written), backward (legacy, read only), grad_of, inplace (true/false, written
//         only when some node is in-place), output (0/1, written only when the graph has
//         explicit outputs),
//         order_position (0-based position in the input order, -1 for none; written only when the
//         graph has an order);
//   graph: name, kind.
// Reading fills an attribute_graph whose vertices hold the raw attribute text; record_from_attributes
// then converts the text with messages that name the node and the attribute, and the result goes
// through the same validation as JSON (build_dataflow_graph).

#include <memsched/core/errors.hpp>
#include <memsched/graph/dataflow_graph.hpp>
#include <memsched/graph/detail/graph_record.hpp>

#include <boost/any.hpp>
#include <boost/graph/adjacency_list.hpp>
#include <boost/property_map/dynamic_property_map.hpp>
#include <boost/property_map/property_map.hpp>
#include <boost/shared_ptr.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <typeinfo>
#include <utility>
#include <vector>

namespace memsched::detail {

/// The text `bytes` keeps until the file sets it: the one attribute every node needs, so that
/// an absent one and an empty one (bytes="") get their own messages.
inline const std::string& absent_attribute() {
  static const std::string text(1, '\0');
  return text;
}

/// The raw text of a node's attributes (empty: absent; `bytes`: absent_attribute()).
struct attribute_node {
  std::string node_id;  ///< The DOT node name.
  std::string id, name, op, bytes = absent_attribute(), cost, workspace, role, backward, grad_of, inplace, output, order_position;
};
struct attribute_graph_info {
  std::string name, kind;
};
using attribute_graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, attribute_node,
                                              boost::no_property, attribute_graph_info>;

/// The node attribute names (besides the id), in the order they are written.
inline constexpr const char* attribute_names[] = {"name",    "op",      "bytes",  "cost",          "workspace", "role", "backward",
                                                  "grad_of", "inplace", "output", "order_position"};

inline std::string attribute_node::*attribute_member(std::string_view name) {
  if (name == "name") return &attribute_node::name;
  if (name == "op") return &attribute_node::op;
  if (name == "bytes") return &attribute_node::bytes;
  if (name == "cost") return &attribute_node::cost;
  if (name == "workspace") return &attribute_node::workspace;
  if (name == "role") return &attribute_node::role;
  if (name == "backward") return &attribute_node::backward;
  if (name == "grad_of") return &attribute_node::grad_of;
  if (name == "inplace") return &attribute_node::inplace;
  if (name == "output") return &attribute_node::output;
  return &attribute_node::order_position;
}

/// dynamic_properties that store every known attribute of `g` as text and ignore the others.
/// `id_attribute` is "id" for GraphML and "node_id" (the node name) for DOT.
inline boost::dynamic_properties attribute_properties(attribute_graph& g, const std::string& id_attribute) {
  boost::dynamic_properties dp(boost::ignore_other_properties);
  dp.property(id_attribute, get(id_attribute == "id" ? &attribute_node::id : &attribute_node::node_id, g));
  for (const char* name : attribute_names) dp.property(name, get(attribute_member(name), g));
  auto& info = g[boost::graph_bundle];
  dp.property("name", boost::ref_property_map<attribute_graph*, std::string>(info.name));
  dp.property("kind", boost::ref_property_map<attribute_graph*, std::string>(info.kind));
  return dp;
}

/// Which format an attribute_graph came from (for the node id and the messages).
enum class attribute_format { graphml, dot };

/// Converts the attribute text of one file into values; every failure throws file_error naming
/// the file and `field` (which names the node and the attribute).
struct attribute_text_parser {
  const std::string& source;

  [[nodiscard]] std::int64_t integer(const std::string& text, const std::string& field) const {
    bool out_of_range = false;
    const auto value = parse_int64(text, out_of_range);
    if (out_of_range) fail_file(source, field + " = " + text + " does not fit in 64 bits");
    if (!value) fail_file(source, field + " must be an integer, got '" + text + "'");
    return *value;
  }
  [[nodiscard]] std::int64_t size(const std::string& text, const std::string& field) const {
    bool out_of_range = false;
    const auto value = parse_int64(text, out_of_range);
    if (out_of_range) fail_file(source, field + " = " + text + " does not fit in 64 bits");
    if (!value) fail_file(source, field + " must be an integer >= 0, got '" + text + "'");
    return *value;
  }
  /// `named` is "node N: " (the field name follows).
  [[nodiscard]] double cost(const std::string& text, const std::string& named) const {
    bool out_of_range = false;
    const auto value = parse_double(text, out_of_range);
    if (out_of_range) fail_file(source, named + "cost = " + text + " is out of the range of double");
    if (!value) fail_file(source, named + "cost must be a number >= 0, got '" + text + "'");
    return *value;
  }
  [[nodiscard]] bool boolean(const std::string& text, const std::string& field) const {
    if (text == "1" || text == "true" || text == "True") return true;
    if (text == "0" || text == "false" || text == "False") return false;
    fail_file(source, field + " must be true/false or 1/0, got '" + text + "'");
  }
};

/// How messages name vertex i of `g` before its id is known.
inline std::string attribute_node_where(const attribute_graph& g, std::size_t i, attribute_format format) {
  return format == attribute_format::dot ? "node '" + g[i].node_id + "'" : "nodes[" + std::to_string(i) + "] (in file order)";
}

/// GraphML nodes either all have an `id` or none has; throws for the first one without when
/// others have one.
inline void check_graphml_ids_all_or_none(const attribute_graph& g, const std::string& source) {
  const std::size_t n = num_vertices(g);
  bool any_id = false, all_ids = true;
  for (std::size_t i = 0; i < n; ++i) {
    if (g[i].id.empty())
      all_ids = false;
    else
      any_id = true;
  }
  if (any_id && !all_ids)
    for (std::size_t i = 0; i < n; ++i)
      if (g[i].id.empty()) fail_file(source, attribute_node_where(g, i, attribute_format::graphml) + ": missing attribute 'id' (other nodes have one)");
}

/// The file id of each vertex: the DOT node name, the GraphML `id`, or the GraphML file position
/// when no node has an `id`.
inline std::vector<std::int64_t> attribute_node_ids(const attribute_graph& g, const attribute_text_parser& parse, attribute_format format) {
  const std::size_t n = num_vertices(g);
  std::vector<std::int64_t> ids(n);
  for (std::size_t i = 0; i < n; ++i) {
    const attribute_node& a = g[i];
    if (format == attribute_format::dot) {
      bool out_of_range = false;
      const auto id = parse_int64(a.node_id, out_of_range);
      if (!id) fail_file(parse.source, "DOT node name '" + a.node_id + "' is not an integer node id");
      ids[i] = *id;
    } else {
      ids[i] = a.id.empty() ? static_cast<std::int64_t>(i) : parse.integer(a.id, attribute_node_where(g, i, format) + ": id");
    }
  }
  return ids;
}

/// The vertices in the order the record lists them: DOT vertices in increasing id order (Boost's
/// DOT parser keeps nodes in a map by name, so the file's order is lost); GraphML in the file's
/// order. Sets the record's node_where to match.
inline std::vector<std::size_t> attribute_node_sequence(const attribute_graph& g, const std::vector<std::int64_t>& ids, attribute_format format,
                                                        graph_record& r) {
  const std::size_t n = num_vertices(g);
  std::vector<std::size_t> sequence(n);
  for (std::size_t i = 0; i < n; ++i) sequence[i] = i;
  if (format == attribute_format::dot) {
    std::stable_sort(sequence.begin(), sequence.end(), [&](std::size_t a, std::size_t b) { return ids[a] < ids[b]; });
    std::vector<std::string> names(n);
    for (std::size_t k = 0; k < n; ++k) names[k] = "node '" + g[sequence[k]].node_id + "'";
    r.node_where = [names = std::move(names)](std::size_t k) { return names[k]; };
  } else {
    r.node_where = [](std::size_t k) { return "nodes[" + std::to_string(k) + "] (in file order)"; };
  }
  return sequence;
}

/// The node and role fields one vertex's attributes spell (all but output and order_position).
inline node node_from_attributes(const attribute_node& a, std::int64_t id, const attribute_text_parser& parse, role_fields& roles) {
  node v;
  v.id = id;
  const std::string named = node_label(v.id) + ": ";
  if (a.bytes == absent_attribute()) fail_file(parse.source, named + "missing attribute 'bytes'");
  v.bytes = parse.size(a.bytes, named + "bytes");
  if (!a.workspace.empty()) v.workspace = parse.size(a.workspace, named + "workspace");
  if (!a.cost.empty()) v.cost = parse.cost(a.cost, named);
  v.name = a.name;
  v.op = a.op;
  if (!a.role.empty()) {
    roles.role = parse_node_role(a.role);
    if (!roles.role) fail_file(parse.source, named + "role must be forward, backward or loss, got '" + a.role + "'");
  }
  if (!a.backward.empty()) roles.backward = parse.boolean(a.backward, named + "backward");
  if (!a.grad_of.empty()) v.grad_of = parse.integer(a.grad_of, named + "grad_of");
  if (!a.inplace.empty()) v.inplace = parse.boolean(a.inplace, named + "inplace");
  return v;
}

/// A vertex's order_position: -1 when absent; throws unless it is -1 or in 0..n-1.
inline std::int64_t order_position_from_attributes(const attribute_node& a, std::int64_t id, std::size_t n, const attribute_text_parser& parse) {
  if (a.order_position.empty()) return -1;
  const std::string named = node_label(id) + ": ";
  const std::int64_t position = parse.integer(a.order_position, named + "order_position");
  if (position < -1 || position >= static_cast<std::int64_t>(n))
    fail_file(parse.source, named + "order_position " + a.order_position + " is not -1 or in 0.." + std::to_string(n - 1));
  return position;
}

inline void record_edges_from_attributes(const attribute_graph& g, const std::vector<std::int64_t>& ids, graph_record& r) {
  r.edges.reserve(num_edges(g));
  for (auto [e, end] = boost::edges(g); e != end; ++e) r.edges.emplace_back(ids[boost::source(*e, g)], ids[boost::target(*e, g)]);
  r.edge_where = [edges = r.edges](std::size_t k) {
    return "edge " + std::to_string(edges[k].first) + " -> " + std::to_string(edges[k].second);
  };
}

/// The record's outputs: the vertices whose `output` is true, in record order.
inline void record_outputs_from_attributes(const attribute_graph& g, const std::vector<std::int64_t>& ids, const std::vector<std::size_t>& sequence,
                                           const attribute_text_parser& parse, graph_record& r) {
  r.outputs.emplace();
  for (const std::size_t i : sequence)
    if (!g[i].output.empty() && parse.boolean(g[i].output, node_label(ids[i]) + ": output")) r.outputs->push_back(ids[i]);
}

/// The record's order from every vertex's order_position (-1: none); throws unless they are a
/// permutation of 0..n-1.
inline void record_order_from_positions(const std::vector<std::int64_t>& position, const std::vector<std::int64_t>& ids, const std::string& source,
                                        graph_record& r) {
  const std::size_t n = position.size();
  std::vector<std::size_t> at(n, n);
  for (std::size_t i = 0; i < n; ++i) {
    if (position[i] < 0)
      fail_file(source, node_label(ids[i]) + ": no order_position, but other nodes have one (the order must list every node)");
    std::size_t& slot = at[static_cast<std::size_t>(position[i])];
    if (slot != n)
      fail_file(source, node_label(ids[i]) + ": order_position " + std::to_string(position[i]) + " is also the position of " +
                            node_label(ids[slot]));
    slot = i;
  }
  r.order.emplace();
  for (std::size_t k = 0; k < n; ++k) r.order->push_back(ids[at[k]]);
  r.order_where = [](std::size_t k) { return "order_position " + std::to_string(k); };
}

/// Converts the attribute text of a GraphML or DOT file into a graph_record. O(n + m).
/// Throws file_error naming `source`, the node and the attribute for text of the wrong type, a
/// missing `bytes`, a DOT node name or GraphML `id` that is not an integer, and `output` or
/// `order_position` values that do not describe a set of outputs or a complete order.
inline graph_record record_from_attributes(const attribute_graph& g, const std::string& source, attribute_format format) {
  const std::size_t n = num_vertices(g);
  const attribute_text_parser parse{source};
  graph_record r;
  r.name = g[boost::graph_bundle].name;
  r.kind = g[boost::graph_bundle].kind;
  if (format != attribute_format::dot) check_graphml_ids_all_or_none(g, source);
  const std::vector<std::int64_t> ids = attribute_node_ids(g, parse, format);
  const std::vector<std::size_t> sequence = attribute_node_sequence(g, ids, format, r);

  std::vector<std::int64_t> position(n, -1);
  bool any_output = false, any_position = false;
  r.nodes.reserve(n);
  for (const std::size_t i : sequence) {
    const attribute_node& a = g[i];
    role_fields roles;
    node v = node_from_attributes(a, ids[i], parse, roles);
    r.roles.push_back(roles);
    if (!a.output.empty()) any_output = true;
    position[i] = order_position_from_attributes(a, ids[i], n, parse);
    if (position[i] >= 0) any_position = true;
    r.nodes.push_back(std::move(v));
  }
  record_edges_from_attributes(g, ids, r);
  if (any_output) record_outputs_from_attributes(g, ids, sequence, parse, r);
  if (any_position) record_order_from_positions(position, ids, source, r);
  return r;
}

/// A read-only dynamic property whose text is computed by a function: lets the writers choose the
/// exact text (costs with enough digits to read back exactly, "true"/"false", empty for "none")
/// and the declared GraphML type.
template <class Key>
class text_property : public boost::dynamic_property_map {
 public:
  text_property(std::function<std::string(const Key&)> text, const std::type_info& type)
      : text_(std::move(text)), type_(type) {}
  boost::any get(const boost::any& key) override { return boost::any(text_(boost::any_cast<Key>(key))); }
  std::string get_string(const boost::any& key) override { return text_(boost::any_cast<Key>(key)); }
  void put(const boost::any&, const boost::any&) override { throw boost::dynamic_const_put_error(); }
  [[nodiscard]] const std::type_info& key() const override { return typeid(Key); }
  [[nodiscard]] const std::type_info& value() const override { return type_; }

 private:
  std::function<std::string(const Key&)> text_;
  const std::type_info& type_;
};

/// The dynamic_properties that write `g` (which must outlive them): the node attributes above, the
/// id under `id_attribute` ("id" for GraphML, "node_id" for DOT), and the graph's name and kind.
inline boost::dynamic_properties written_properties(const dataflow_graph& g, const std::string& id_attribute) {
  using vertex = boost::graph_traits<dataflow_graph>::vertex_descriptor;
  boost::dynamic_properties dp;
  const dataflow_graph* gp = &g;
  auto add = [&](const std::string& name, const std::type_info& type, std::function<std::string(const vertex&)> text) {
    dp.insert(name, boost::shared_ptr<boost::dynamic_property_map>(new text_property<vertex>(std::move(text), type)));
  };
  const auto& info = g[boost::graph_bundle];
  add(id_attribute, typeid(long), [gp](const vertex& v) { return std::to_string((*gp)[v].id); });
  add("name", typeid(std::string), [gp](const vertex& v) { return (*gp)[v].name; });
  add("op", typeid(std::string), [gp](const vertex& v) { return (*gp)[v].op; });
  add("bytes", typeid(long), [gp](const vertex& v) { return std::to_string((*gp)[v].bytes); });
  add("cost", typeid(double), [gp](const vertex& v) { return format_double((*gp)[v].cost); });
  add("workspace", typeid(long), [gp](const vertex& v) { return std::to_string((*gp)[v].workspace); });
  bool any_role = false;
  for (std::size_t v = 0; v < num_vertices(g); ++v) any_role = any_role || role_written(g[v]);
  if (any_role) add("role", typeid(std::string), [gp](const vertex& v) { return std::string(to_string((*gp)[v].role)); });
  bool any_grad_of = false;
  for (std::size_t v = 0; v < num_vertices(g); ++v) any_grad_of = any_grad_of || g[v].grad_of.has_value();
  if (any_grad_of)
    add("grad_of", typeid(std::string), [gp](const vertex& v) {
      const auto& grad_of = (*gp)[v].grad_of;
      return grad_of ? std::to_string(*grad_of) : std::string();
    });
  bool any_inplace = false;
  for (std::size_t v = 0; v < num_vertices(g); ++v) any_inplace = any_inplace || g[v].inplace;
  if (any_inplace) add("inplace", typeid(bool), [gp](const vertex& v) { return std::string((*gp)[v].inplace ? "true" : "false"); });
  if (info.outputs) {
    auto flags = std::make_shared<std::vector<char>>(num_vertices(g), 0);
    for (std::size_t v : *info.outputs) (*flags)[v] = 1;
    add("output", typeid(int), [flags](const vertex& v) { return std::string((*flags)[v] ? "1" : "0"); });
  }
  if (!info.order.empty()) {
    auto position = std::make_shared<std::vector<std::int64_t>>(num_vertices(g), -1);
    for (std::size_t k = 0; k < info.order.size(); ++k) (*position)[info.order[k]] = static_cast<std::int64_t>(k);
    add("order_position", typeid(long), [position](const vertex& v) { return std::to_string((*position)[v]); });
  }
  auto add_graph = [&](const std::string& name, const std::string& value) {
    if (value.empty()) return;
    dp.insert(name, boost::shared_ptr<boost::dynamic_property_map>(new text_property<dataflow_graph*>(
                        [value](dataflow_graph* const&) { return value; }, typeid(std::string))));
  };
  add_graph("name", info.name);
  add_graph("kind", info.kind);
  return dp;
}

}  // namespace memsched::detail
