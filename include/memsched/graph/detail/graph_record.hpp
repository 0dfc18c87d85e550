#pragma once
// Internals of the graph file readers: what a reader extracts from a file (graph_record: nodes with
// their file ids, edges, outputs and order by id) and the ONE validation path that turns it into a
// dataflow_graph. The JSON, GraphML and DOT readers all end in build_dataflow_graph, so a bad file
// gives the same checks and the same kind of message whatever its format.

#include <memsched/core/errors.hpp>
#include <memsched/graph/dataflow_graph.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/graph/node_role.hpp>
#include <memsched/graph/detail/utf8.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

namespace memsched::detail {

/// How a file spelled one node's training role: the `role` field and the legacy `backward` flag,
/// each absent or given. build_dataflow_graph resolves them, with grad_of and op, into node::role.
struct role_fields {
  std::optional<node_role> role;
  std::optional<bool> backward;
};

/// A graph as read from a file, before validation. Nodes, outputs and order refer to nodes by file
/// id. The `*_where` functions name the i-th entry in messages ("edges[3]" in JSON, "edge 3" in
/// GraphML); left empty, a generic label is used.
struct graph_record {
  std::string name;
  std::string kind;
  std::vector<node> nodes;
  std::vector<role_fields> roles;  ///< Parallel to nodes (empty: no node spells a role).
  std::vector<std::pair<std::int64_t, std::int64_t>> edges;
  std::optional<std::vector<std::int64_t>> outputs;
  std::optional<std::vector<std::int64_t>> order;
  std::function<std::string(std::size_t)> node_where, edge_where, output_where, order_where;
};

/// Throws file_error("<source>: <what>").
[[noreturn]] inline void fail_file(const std::string& source, const std::string& what) {
  throw file_error(source + ": " + what);
}

/// "node 17": how messages name a node once its id is known.
inline std::string node_label(std::int64_t id) { return "node " + std::to_string(id); }

/// The role of node `v` as its file spells it. Without a `role` field, the legacy rule (what
/// is_forward_node always read): op "loss" -> loss, else `backward` true or a grad_of ->
/// backward, else forward. An explicit `role` wins over op (an op is only a name), but must
/// agree with `backward` and grad_of. Throws file_error naming `source`, the node and the fields.
[[nodiscard]] inline node_role resolve_role(const node& v, const role_fields& f, const std::string& source) {
  const std::string named = node_label(v.id) + ": ";
  if (!f.role) {
    if (v.op == "loss") return node_role::loss;
    return (f.backward.value_or(false) || v.grad_of) ? node_role::backward : node_role::forward;
  }
  const std::string role = "role '" + std::string(to_string(*f.role)) + "'";
  if (*f.role == node_role::forward) {
    if (f.backward.value_or(false)) fail_file(source, named + role + " conflicts with backward = true");
    if (v.grad_of)
      fail_file(source, named + role + " conflicts with grad_of = " + std::to_string(*v.grad_of) + " (a gradient is not forward)");
  } else if (f.backward && !*f.backward) {
    fail_file(source, named + role + " conflicts with backward = false");
  }
  return *f.role;
}

/// Validates a record and builds the graph. `source` (the file name) starts every message.
/// O((n + m) log m + text size). Throws file_error for: no nodes, a graph name or kind or a node name
/// or op that is not valid UTF-8, a duplicate node id, a negative bytes or
/// workspace, bytes + workspace summing past 64 bits, a negative or non-finite cost, costs whose
/// sum is not finite (memory_graph), a grad_of,
/// edge end, output or order entry that is not a node id, a role that conflicts with `backward` or
/// grad_of (resolve_role), a grad_of that names a node that is not forward, a self loop, a cycle
/// (naming a node on it), and an order that is not a topological order of all nodes. Duplicate
/// edges and outputs are merged.
[[nodiscard]] inline dataflow_graph build_dataflow_graph(graph_record record, const std::string& source) {
  auto fail = [&](const std::string& what) { fail_file(source, what); };
  auto where = [](const std::function<std::string(std::size_t)>& f, const char* field, std::size_t i) {
    return f ? f(i) : std::string(field) + "[" + std::to_string(i) + "]";
  };
  const std::size_t n = record.nodes.size();
  if (n == 0) fail("the graph has no nodes");
  // Every reader's strings end here; JSON can only hold UTF-8 (ONNX, GraphML and DOT strings are bytes).
  if (!valid_utf8(record.name)) fail("the graph name is not valid UTF-8");
  if (!valid_utf8(record.kind)) fail("the graph kind is not valid UTF-8");

  std::unordered_map<std::int64_t, std::size_t> index;
  index.reserve(n);
  std::int64_t total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const node& v = record.nodes[i];
    if (!index.emplace(v.id, i).second)
      fail(where(record.node_where, "nodes", i) + ": duplicate node id " + std::to_string(v.id));
    const std::string named = node_label(v.id);
    if (!valid_utf8(v.name)) fail(named + ": name is not valid UTF-8");
    if (!valid_utf8(v.op)) fail(named + ": op is not valid UTF-8");
    if (v.bytes < 0) fail(named + ": bytes must be >= 0, got " + std::to_string(v.bytes));
    if (v.workspace < 0) fail(named + ": workspace must be >= 0, got " + std::to_string(v.workspace));
    if (!std::isfinite(v.cost) || v.cost < 0) fail(named + ": cost must be a finite number >= 0");
    if (__builtin_add_overflow(total, v.bytes, &total) || __builtin_add_overflow(total, v.workspace, &total))
      fail(named + ": the sum of bytes and workspace over all nodes overflows 64 bits");
  }
  auto lookup = [&](std::int64_t id, const std::string& field) {
    const auto it = index.find(id);
    if (it == index.end()) fail(field + ": unknown node id " + std::to_string(id));
    return it->second;
  };
  for (std::size_t i = 0; i < n; ++i)
    record.nodes[i].role = resolve_role(record.nodes[i], record.roles.empty() ? role_fields{} : record.roles[i], source);
  for (const node& v : record.nodes)
    if (v.grad_of) {
      const node& f = record.nodes[lookup(*v.grad_of, node_label(v.id) + ": grad_of")];
      if (f.role != node_role::forward)
        fail(node_label(v.id) + ": grad_of = " + std::to_string(*v.grad_of) + " names a " + std::string(to_string(f.role)) +
             " node; a gradient is of a forward node");
    }

  dataflow_graph g(n);
  for (std::size_t i = 0; i < n; ++i) g[i] = std::move(record.nodes[i]);
  auto& info = g[boost::graph_bundle];
  info.name = std::move(record.name);
  info.kind = std::move(record.kind);

  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  pairs.reserve(record.edges.size());
  for (std::size_t i = 0; i < record.edges.size(); ++i) {
    const std::string field = where(record.edge_where, "edges", i);
    const std::size_t u = lookup(record.edges[i].first, field), v = lookup(record.edges[i].second, field);
    if (u == v) fail(field + ": self loop on " + node_label(g[u].id));
    pairs.emplace_back(u, v);
  }
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  for (auto [u, v] : pairs) add_edge(u, v, g);

  if (record.outputs) {
    std::vector<std::size_t> outputs;
    outputs.reserve(record.outputs->size());
    for (std::size_t i = 0; i < record.outputs->size(); ++i)
      outputs.push_back(lookup((*record.outputs)[i], where(record.output_where, "outputs", i)));
    std::sort(outputs.begin(), outputs.end());
    outputs.erase(std::unique(outputs.begin(), outputs.end()), outputs.end());
    info.outputs = std::move(outputs);
  }

  // Cycles (and everything else the memory model needs) are checked by memory_graph, once.
  try {
    (void)make_memory_graph(g, source);
  } catch (const cycle_error& e) {
    throw file_error(e.what());
  } catch (const graph_error& e) {
    throw file_error(e.what());
  }

  if (record.order) {
    const auto& order = *record.order;
    std::vector<char> done(n, 0);
    info.order.reserve(order.size());
    for (std::size_t k = 0; k < order.size(); ++k) {
      const std::string field = where(record.order_where, "order", k);
      const std::size_t v = lookup(order[k], field);
      if (done[v]) fail(field + ": " + node_label(g[v].id) + " appears twice");
      for (auto [e, end] = in_edges(v, g); e != end; ++e)
        if (!done[boost::source(*e, g)])
          fail(field + ": " + node_label(g[v].id) + " comes before its input " + node_label(g[boost::source(*e, g)].id));
      done[v] = 1;
      info.order.push_back(v);
    }
    if (order.size() != n)
      fail("order lists " + std::to_string(order.size()) + " of the " + std::to_string(n) +
           " nodes: it must be a topological order of all of them");
  }
  return g;
}

/// Checks that the graph-level lists of `g` name vertices (writers call this before writing).
/// Throws graph_error naming `context`.
inline void check_graph_lists(const dataflow_graph& g, std::string_view context) {
  const auto& info = g[boost::graph_bundle];
  const std::size_t n = num_vertices(g);
  auto check = [&](const std::vector<std::size_t>& list, const char* field) {
    for (std::size_t k = 0; k < list.size(); ++k)
      if (list[k] >= n)
        throw graph_error(std::string(context) + ": " + field + "[" + std::to_string(k) + "] = " + std::to_string(list[k]) +
                          " is not a vertex");
  };
  if (info.outputs) check(*info.outputs, "outputs");
  check(info.order, "order");
}

/// Strict text -> int64 (optional surrounding blanks; no '+', no fraction, no exponent).
inline std::optional<std::int64_t> parse_int64(std::string_view text, bool& out_of_range) {
  out_of_range = false;
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t' || text.front() == '\n' || text.front() == '\r'))
    text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\n' || text.back() == '\r'))
    text.remove_suffix(1);
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range && end == text.data() + text.size()) {
    out_of_range = true;
    return std::nullopt;
  }
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

/// Strict text -> double (optional surrounding blanks).
inline std::optional<double> parse_double(std::string_view text, bool& out_of_range) {
  out_of_range = false;
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t' || text.front() == '\n' || text.front() == '\r'))
    text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\n' || text.back() == '\r'))
    text.remove_suffix(1);
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  out_of_range = ec == std::errc::result_out_of_range && end == text.data() + text.size();
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

/// The shortest text that reads back as exactly `value` ("1", "0.1", "2.5e-07").
inline std::string format_double(double value) {
  char buffer[64];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, ec == std::errc() ? end : buffer);
}

}  // namespace memsched::detail
