#pragma once
// memory_graph: the compact, validated form of a dataflow graph that every memsched algorithm runs
// on. Generic entry points convert the user's Boost graph and property maps into it once (O(n + m)),
// so validation, in-edges and the topological order are computed in one place.

#include <memsched/core/config.hpp>
#include <memsched/core/errors.hpp>
#include <memsched/graph/concepts.hpp>
#include <memsched/graph/node_maps.hpp>
#include <memsched/graph/node_role.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace memsched {

/// Everything needed to build a memory_graph from plain vectors. `cost`, `workspace`, `ids`, `roles`,
/// `grad_of` and `inplace` may be left empty (cost 1, workspace 0, id = index, every vertex
/// forward, no gradients, no in-place output); `outputs` nullopt means every vertex without
/// consumers. `grad_of[v]` is the INDEX of the forward vertex whose gradient v computes;
/// `inplace[v]` != 0 lets v's output take over an input's buffer (the rule: docs/simulator.md).
struct memory_graph_data {
  std::size_t num_nodes = 0;
  std::vector<std::pair<std::size_t, std::size_t>> edges;  ///< (producer, consumer) pairs.
  std::vector<std::int64_t> bytes;
  std::vector<double> cost;
  std::vector<std::int64_t> workspace;
  std::optional<std::vector<std::size_t>> outputs;
  std::vector<std::int64_t> ids;
  std::vector<node_role> roles;
  std::vector<std::optional<std::size_t>> grad_of;
  std::vector<char> inplace;
};

/// A validated DAG with per-vertex sizes, costs, workspaces and training roles, stored as two CSR
/// adjacency arrays (successors and predecessors, each sorted, duplicates merged) plus a
/// topological order. Vertices are 0..size()-1. Immutable after construction.
class memory_graph {
 public:
  using vertex = std::uint32_t;

  memory_graph() = default;

  /// Validates and builds. `context` prefixes error messages (the calling function or file).
  /// O((n + m) log m). Throws graph_error on an out-of-range vertex, a self loop, a negative
  /// size or workspace, sizes whose sum overflows 64 bits, a negative or non-finite cost, costs
  /// whose sum is not finite, a bad output, roles, grad_of or inplace of the wrong length, a grad_of that is not a forward vertex or
  /// that is set on a forward vertex, a forward vertex that reads the loss or a backward vertex, or
  /// more than 2^32-1 vertices; cycle_error (a boost::not_a_dag) on a cycle, naming a
  /// vertex on it.
  explicit memory_graph(memory_graph_data data, std::string_view context = "memory_graph") {
    build(std::move(data), context);
  }

  [[nodiscard]] std::size_t size() const noexcept { return bytes_.size(); }
  [[nodiscard]] bool empty() const noexcept { return bytes_.empty(); }
  [[nodiscard]] std::size_t num_edges() const noexcept { return succ_list_.size(); }

  [[nodiscard]] std::span<const vertex> successors(std::size_t v) const noexcept {
    return {succ_list_.data() + succ_offsets_[v], succ_list_.data() + succ_offsets_[v + 1]};
  }
  [[nodiscard]] std::span<const vertex> predecessors(std::size_t v) const noexcept {
    return {pred_list_.data() + pred_offsets_[v], pred_list_.data() + pred_offsets_[v + 1]};
  }
  [[nodiscard]] std::size_t out_degree(std::size_t v) const noexcept { return succ_offsets_[v + 1] - succ_offsets_[v]; }
  [[nodiscard]] std::size_t in_degree(std::size_t v) const noexcept { return pred_offsets_[v + 1] - pred_offsets_[v]; }

  [[nodiscard]] std::int64_t bytes(std::size_t v) const noexcept { return bytes_[v]; }
  [[nodiscard]] std::int64_t workspace(std::size_t v) const noexcept { return workspace_[v]; }
  [[nodiscard]] double cost(std::size_t v) const noexcept { return cost_[v]; }
  [[nodiscard]] std::int64_t id(std::size_t v) const noexcept { return ids_[v]; }
  /// True for graph outputs: they stay resident to the end of an ordering.
  [[nodiscard]] bool is_output(std::size_t v) const noexcept { return is_output_[v] != 0; }
  [[nodiscard]] std::span<const vertex> outputs() const noexcept { return outputs_; }

  [[nodiscard]] const std::vector<std::int64_t>& all_bytes() const noexcept { return bytes_; }
  [[nodiscard]] const std::vector<std::int64_t>& all_workspace() const noexcept { return workspace_; }
  [[nodiscard]] const std::vector<double>& all_costs() const noexcept { return cost_; }
  [[nodiscard]] const std::vector<std::int64_t>& all_ids() const noexcept { return ids_; }

  /// The training role of v (forward in a graph without roles).
  [[nodiscard]] node_role role(std::size_t v) const noexcept { return roles_[v]; }
  [[nodiscard]] bool is_forward(std::size_t v) const noexcept { return roles_[v] == node_role::forward; }
  /// The index of the forward vertex whose gradient v computes, if any.
  [[nodiscard]] std::optional<std::size_t> grad_of(std::size_t v) const noexcept {
    if (grad_of_.empty() || grad_of_[v] == no_vertex) return std::nullopt;
    return grad_of_[v];
  }
  /// True when some vertex is not forward (a training graph).
  [[nodiscard]] bool has_training_roles() const noexcept { return has_training_roles_; }
  [[nodiscard]] const std::vector<node_role>& all_roles() const noexcept { return roles_; }

  /// True when v's output may take over the buffer of an equal-size input that dies at v (the
  /// rule is sim/memory_model.hpp's; false in a graph without in-place vertices).
  [[nodiscard]] bool inplace(std::size_t v) const noexcept { return !inplace_.empty() && inplace_[v] != 0; }
  /// True when some vertex is in-place.
  [[nodiscard]] bool has_inplace() const noexcept { return !inplace_.empty(); }

  /// A topological order (Kahn's algorithm, smallest index first among ready vertices).
  [[nodiscard]] const std::vector<vertex>& topological_order() const noexcept { return topo_; }
  /// Sum of bytes + workspace over all vertices (fits in int64, checked at construction).
  [[nodiscard]] std::int64_t total_bytes() const noexcept { return total_bytes_; }
  [[nodiscard]] double total_cost() const noexcept { return total_cost_; }

  /// "node 17" (its id), with " (vertex 3)" added when the id differs from the index.
  [[nodiscard]] std::string label(std::size_t v) const {
    std::string s = "node " + std::to_string(ids_[v]);
    if (ids_[v] < 0 || static_cast<std::size_t>(ids_[v]) != v) s += " (vertex " + std::to_string(v) + ")";
    return s;
  }

  /// The same graph data as plain vectors (edges in CSR order; roles and grad_of empty when the
  /// graph has no training roles, inplace empty when no vertex is in-place).
  [[nodiscard]] memory_graph_data data() const {
    memory_graph_data d{.num_nodes = size(),
                        .edges = {},
                        .bytes = bytes_,
                        .cost = cost_,
                        .workspace = workspace_,
                        .outputs = std::vector<std::size_t>(outputs_.begin(), outputs_.end()),
                        .ids = ids_,
                        .roles = {},
                        .grad_of = {},
                        .inplace = inplace_};
    if (has_training_roles_) {
      d.roles = roles_;
      d.grad_of.resize(size());
      for (std::size_t v = 0; v < size(); ++v) d.grad_of[v] = grad_of(v);
    }
    d.edges.reserve(num_edges());
    for (std::size_t u = 0; u < size(); ++u)
      for (vertex v : successors(u)) d.edges.emplace_back(u, v);
    return d;
  }

 private:
  static constexpr vertex no_vertex = std::numeric_limits<vertex>::max();

  MEMSCHED_DECL void build(memory_graph_data d, std::string_view context);

  MEMSCHED_DECL void build_roles(memory_graph_data& d, const std::string& where);

  static void fill_csr(const std::vector<std::pair<std::size_t, std::size_t>>& sorted_edges, std::size_t n,
                       std::vector<std::uint32_t>& offsets, std::vector<vertex>& list) {
    offsets.assign(n + 1, 0);
    list.resize(sorted_edges.size());
    for (auto [u, v] : sorted_edges) ++offsets[u + 1];
    for (std::size_t i = 0; i < n; ++i) offsets[i + 1] += offsets[i];
    for (std::size_t i = 0; i < sorted_edges.size(); ++i) list[i] = static_cast<vertex>(sorted_edges[i].second);
  }

  MEMSCHED_DECL void compute_topological_order(const std::string& where);

  std::vector<std::uint32_t> succ_offsets_{0}, pred_offsets_{0};
  std::vector<vertex> succ_list_, pred_list_;
  std::vector<std::int64_t> bytes_, workspace_, ids_;
  std::vector<double> cost_;
  std::vector<node_role> roles_;
  std::vector<vertex> grad_of_;  // empty when no vertex has a grad_of, else no_vertex for none
  bool has_training_roles_ = false;
  std::vector<char> inplace_;  // empty when no vertex is in-place, else 0/1 per vertex
  std::vector<char> is_output_;
  std::vector<vertex> outputs_, topo_;
  std::int64_t total_bytes_ = 0;
  double total_cost_ = 0;
};

namespace detail {
template <>
struct not_a_boost_graph<memory_graph> : std::true_type {};
}  // namespace detail

/// Builds the memory_graph of any Boost graph through its property maps (roles, grad_of and inplace
/// included: grad_of ids are turned into vertex indices). O((n + m) log m).
/// Throws graph_error when the index map is not a bijection onto 0..n-1, when a grad_of names an id
/// that no vertex has (naming the vertex), and everything the memory_graph constructor throws
/// (self loops, negative sizes, overflow, cycles, a grad_of that is not a forward vertex).
template <schedulable_graph G, class IndexMap, class IdMap, class BytesMap, class CostMap, class WorkspaceMap,
          class RoleMap, class GradOfMap, class InplaceMap>
[[nodiscard]] memory_graph make_memory_graph(
    const G& g, const node_maps<IndexMap, IdMap, BytesMap, CostMap, WorkspaceMap, RoleMap, GradOfMap, InplaceMap>& maps,
    std::string_view context = "make_memory_graph") {
  memory_graph_data d;
  d.num_nodes = static_cast<std::size_t>(num_vertices(g));
  const std::size_t n = d.num_nodes;
  d.bytes.assign(n, 0);
  d.cost.assign(n, 1.0);
  d.workspace.assign(n, 0);
  d.ids.assign(n, 0);
  std::vector<char> seen(n, 0);
  std::vector<std::optional<std::int64_t>> grad_of_ids;  // by index; empty while no vertex has one
  auto index_of = [&](auto v) {
    const auto i = static_cast<std::size_t>(get(maps.index, v));
    if (i >= n) throw graph_error(std::string(context) + ": vertex index " + std::to_string(i) + " is not below num_vertices " + std::to_string(n));
    return i;
  };
  for (auto [it, end] = vertices(g); it != end; ++it) {
    const std::size_t i = index_of(*it);
    if (seen[i]) throw graph_error(std::string(context) + ": two vertices have index " + std::to_string(i));
    seen[i] = 1;
    d.ids[i] = static_cast<std::int64_t>(get(maps.id, *it));
    d.bytes[i] = static_cast<std::int64_t>(get(maps.bytes, *it));
    d.cost[i] = static_cast<double>(get(maps.cost, *it));
    d.workspace[i] = static_cast<std::int64_t>(get(maps.workspace, *it));
    const node_role role = get(maps.role, *it);
    if (role != node_role::forward) {
      if (d.roles.empty()) d.roles.assign(n, node_role::forward);
      d.roles[i] = role;
    }
    const std::optional<std::int64_t> grad_of = get(maps.grad_of, *it);
    if (grad_of) {
      if (grad_of_ids.empty()) grad_of_ids.assign(n, std::nullopt);
      grad_of_ids[i] = *grad_of;
    }
    if (static_cast<bool>(get(maps.inplace, *it))) {
      if (d.inplace.empty()) d.inplace.assign(n, 0);
      d.inplace[i] = 1;
    }
  }
  if (!grad_of_ids.empty()) {
    std::unordered_map<std::int64_t, std::size_t> index_of_id;
    index_of_id.reserve(n);
    for (std::size_t i = 0; i < n; ++i) index_of_id.emplace(d.ids[i], i);
    d.grad_of.assign(n, std::nullopt);
    for (std::size_t i = 0; i < n; ++i) {
      if (!grad_of_ids[i]) continue;
      const std::int64_t id = *grad_of_ids[i];
      const auto found = index_of_id.find(id);
      if (found == index_of_id.end()) {
        std::string label = "node " + std::to_string(d.ids[i]);
        if (d.ids[i] < 0 || static_cast<std::size_t>(d.ids[i]) != i) label += " (vertex " + std::to_string(i) + ")";
        throw graph_error(std::string(context) + ": " + label + ": grad_of names id " + std::to_string(id) + ", which no vertex has");
      }
      d.grad_of[i] = found->second;
    }
  }
  for (auto [it, end] = vertices(g); it != end; ++it) {
    const std::size_t i = index_of(*it);
    if constexpr (bidirectional_graph<G>) {
      for (auto [e, e_end] = in_edges(*it, g); e != e_end; ++e) d.edges.emplace_back(index_of(source(*e, g)), i);
    } else {
      for (auto [e, e_end] = out_edges(*it, g); e != e_end; ++e) d.edges.emplace_back(i, index_of(target(*e, g)));
    }
  }
  d.outputs = maps.outputs;
  return memory_graph(std::move(d), context);
}

/// The memory_graph of a graph with memsched::node bundles and a built-in vertex index.
template <schedulable_graph G>
  requires requires(const G& g) { default_node_maps(g); }
[[nodiscard]] memory_graph make_memory_graph(const G& g, std::string_view context = "make_memory_graph") {
  return make_memory_graph(g, default_node_maps(g), context);
}

/// What the generic entry points accept: a memory_graph, or a Boost graph with node maps (or with
/// memsched::node bundles and a built-in index when no maps are given).
template <class G, class... Maps>
concept memory_graph_source =
    (std::is_same_v<G, memory_graph> && sizeof...(Maps) == 0) ||
    (schedulable_graph<G> && requires(const G& g, const Maps&... maps) { make_memory_graph(g, maps...); });

namespace detail {
/// A memory_graph argument is passed through by reference; anything else is converted once.
template <class G, class... Maps>
decltype(auto) to_memory_graph(const G& g, const Maps&... maps) {
  if constexpr (std::is_same_v<G, memory_graph>)
    return (g);
  else
    return make_memory_graph(g, maps...);
}
}  // namespace detail

}  // namespace memsched

#ifndef MEMSCHED_SEPARATE_COMPILATION
#include <memsched/graph/impl/memory_graph.ipp>
#endif
