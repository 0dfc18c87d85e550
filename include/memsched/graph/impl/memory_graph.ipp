#pragma once
// The definitions of memory_graph's validating constructor parts (declared in
// graph/memory_graph.hpp). Header-only mode: that header includes this file at its end and they are
// compiled in the TUs that call them (core/config.hpp). With MEMSCHED_SEPARATE_COMPILATION only
// src/memsched.cpp includes it.

#include <memsched/graph/memory_graph.hpp>

namespace memsched {

MEMSCHED_DEF void memory_graph::build(memory_graph_data d, std::string_view context) {
  const std::string where = std::string(context) + ": ";
  const std::size_t n = d.num_nodes;
  if (n >= std::numeric_limits<vertex>::max()) throw graph_error(where + "more than 2^32-2 vertices");
  if (d.bytes.size() != n) throw graph_error(where + "bytes has " + std::to_string(d.bytes.size()) + " entries for " + std::to_string(n) + " vertices");
  if (d.cost.empty()) d.cost.assign(n, 1.0);
  if (d.workspace.empty()) d.workspace.assign(n, 0);
  if (d.ids.empty()) {
    d.ids.resize(n);
    for (std::size_t v = 0; v < n; ++v) d.ids[v] = static_cast<std::int64_t>(v);
  }
  if (d.cost.size() != n || d.workspace.size() != n || d.ids.size() != n)
    throw graph_error(where + "cost, workspace and ids must have one entry per vertex");
  bytes_ = std::move(d.bytes);
  cost_ = std::move(d.cost);
  workspace_ = std::move(d.workspace);
  ids_ = std::move(d.ids);

  total_bytes_ = 0;
  total_cost_ = 0;
  for (std::size_t v = 0; v < n; ++v) {
    if (bytes_[v] < 0) throw graph_error(where + label(v) + ": negative bytes (" + std::to_string(bytes_[v]) + ")");
    if (workspace_[v] < 0)
      throw graph_error(where + label(v) + ": negative workspace (" + std::to_string(workspace_[v]) + ")");
    if (!std::isfinite(cost_[v]) || cost_[v] < 0)
      throw graph_error(where + label(v) + ": cost must be a finite number >= 0");
    if (__builtin_add_overflow(total_bytes_, bytes_[v], &total_bytes_) ||
        __builtin_add_overflow(total_bytes_, workspace_[v], &total_bytes_))
      throw graph_error(where + "the sum of bytes and workspace overflows 64 bits at " + label(v));
    total_cost_ += cost_[v];
    // Finite costs can still sum to infinity (1e308 twice): every total and plan cost would be inf.
    if (!std::isfinite(total_cost_))
      throw graph_error(where + "the sum of costs over all vertices overflows to infinity at " + label(v) + ": scale the costs down");
  }

  for (auto [u, v] : d.edges) {
    if (u >= n || v >= n)
      throw graph_error(where + "edge (" + std::to_string(u) + ", " + std::to_string(v) + ") names a vertex >= " + std::to_string(n));
    if (u == v) throw graph_error(where + label(u) + ": self loop");
  }
  std::sort(d.edges.begin(), d.edges.end());
  d.edges.erase(std::unique(d.edges.begin(), d.edges.end()), d.edges.end());
  fill_csr(d.edges, n, succ_offsets_, succ_list_);
  for (auto& e : d.edges) std::swap(e.first, e.second);
  std::sort(d.edges.begin(), d.edges.end());
  fill_csr(d.edges, n, pred_offsets_, pred_list_);

  is_output_.assign(n, 0);
  if (d.outputs) {
    for (std::size_t o : *d.outputs) {
      if (o >= n) throw graph_error(where + "output " + std::to_string(o) + " is not a vertex");
      is_output_[o] = 1;
    }
  } else {
    for (std::size_t v = 0; v < n; ++v) is_output_[v] = out_degree(v) == 0;
  }
  outputs_.clear();
  for (std::size_t v = 0; v < n; ++v)
    if (is_output_[v]) outputs_.push_back(static_cast<vertex>(v));

  build_roles(d, where);
  if (!d.inplace.empty() && d.inplace.size() != n)
    throw graph_error(where + "inplace has " + std::to_string(d.inplace.size()) + " entries for " + std::to_string(n) + " vertices");
  // Stored only when some vertex is in-place, so has_inplace() is one test and a graph without
  // in-place vertices compares and round-trips as before.
  inplace_.clear();
  if (std::any_of(d.inplace.begin(), d.inplace.end(), [](char c) { return c != 0; })) {
    inplace_.resize(n);
    for (std::size_t v = 0; v < n; ++v) inplace_[v] = d.inplace[v] != 0 ? 1 : 0;
  }
  compute_topological_order(where);
}

MEMSCHED_DEF void memory_graph::build_roles(memory_graph_data& d, const std::string& where) {
  const std::size_t n = size();
  if (!d.roles.empty() && d.roles.size() != n)
    throw graph_error(where + "roles has " + std::to_string(d.roles.size()) + " entries for " + std::to_string(n) + " vertices");
  if (!d.grad_of.empty() && d.grad_of.size() != n)
    throw graph_error(where + "grad_of has " + std::to_string(d.grad_of.size()) + " entries for " + std::to_string(n) + " vertices");
  roles_ = std::move(d.roles);
  roles_.resize(n, node_role::forward);
  has_training_roles_ = false;
  for (std::size_t v = 0; v < n; ++v) {
    const auto r = static_cast<std::uint8_t>(roles_[v]);
    if (r > static_cast<std::uint8_t>(node_role::loss))
      throw graph_error(where + label(v) + ": role " + std::to_string(r) + " is not a node_role");
    has_training_roles_ = has_training_roles_ || roles_[v] != node_role::forward;
  }
  grad_of_.clear();
  for (std::size_t v = 0; v < d.grad_of.size(); ++v) {
    if (!d.grad_of[v]) continue;
    const std::size_t f = *d.grad_of[v];
    if (f >= n)
      throw graph_error(where + label(v) + ": grad_of names vertex " + std::to_string(f) + ", not below " + std::to_string(n));
    // A gradient that is itself forward, or the gradient of a non-forward value, is a mislabelled graph:
    // remat would recompute the one or keep the other, silently.
    if (roles_[v] == node_role::forward)
      throw graph_error(where + label(v) + ": has a grad_of (" + label(f) + ") but its role is forward");
    if (roles_[f] != node_role::forward)
      throw graph_error(where + label(v) + ": grad_of names " + label(f) + ", whose role is " + std::string(to_string(roles_[f])) +
                        ", not forward");
    if (grad_of_.empty()) grad_of_.assign(n, no_vertex);
    grad_of_[v] = static_cast<vertex>(f);
  }
  // The forward pass runs before the loss and the gradients; a forward vertex reading one of them is
  // a mislabelled graph that every remat algorithm would reject (or plan wrongly) on its own terms.
  if (!has_training_roles_) return;
  for (std::size_t v = 0; v < n; ++v) {
    if (roles_[v] != node_role::forward) continue;
    for (const vertex p : predecessors(v))
      if (roles_[p] != node_role::forward)
        throw graph_error(where + "forward " + label(v) + " reads " + std::string(to_string(roles_[p])) + " " + label(p) +
                          "; forward vertices must not depend on the loss or on backward vertices");
  }
}

MEMSCHED_DEF void memory_graph::compute_topological_order(const std::string& where) {
  const std::size_t n = size();
  topo_.clear();
  topo_.reserve(n);
  // Numbered in topological order already (every edge to a higher index, as graph files, the
  // generators and Serenity's segments mostly are): the smallest-index-first order below is
  // 0, 1, ..., n - 1, since the smallest vertex not placed yet has all its predecessors placed.
  // Predecessor lists are sorted, so each vertex's last one is its largest.
  bool numbered_in_order = true;
  for (std::size_t v = 0; v < n && numbered_in_order; ++v)
    numbered_in_order = pred_offsets_[v] == pred_offsets_[v + 1] || pred_list_[pred_offsets_[v + 1] - 1] < v;
  if (numbered_in_order) {
    for (std::size_t v = 0; v < n; ++v) topo_.push_back(static_cast<vertex>(v));
    return;
  }
  std::vector<std::uint32_t> indegree(n);
  // A min-heap of ready vertices gives the smallest-index-first order, deterministic across graph types.
  std::vector<vertex> heap;
  for (std::size_t v = 0; v < n; ++v) {
    indegree[v] = static_cast<std::uint32_t>(in_degree(v));
    if (indegree[v] == 0) heap.push_back(static_cast<vertex>(v));
  }
  std::make_heap(heap.begin(), heap.end(), std::greater<>());
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), std::greater<>());
    vertex u = heap.back();
    heap.pop_back();
    topo_.push_back(u);
    for (vertex v : successors(u))
      if (--indegree[v] == 0) {
        heap.push_back(v);
        std::push_heap(heap.begin(), heap.end(), std::greater<>());
      }
  }
  if (topo_.size() == n) return;
  // Every unplaced vertex has an unplaced predecessor, so walking predecessors must revisit one.
  std::size_t start = 0;
  while (indegree[start] == 0) ++start;
  std::vector<char> seen(n, 0);
  std::size_t v = start;
  while (!seen[v]) {
    seen[v] = 1;
    for (vertex p : predecessors(v))
      if (indegree[p] != 0) {
        v = p;
        break;
      }
  }
  throw cycle_error(where + "the graph has a cycle through " + label(v), v);
}

}  // namespace memsched
