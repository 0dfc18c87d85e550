#pragma once
// Test support: small random DAGs, the same graph as several Boost graph types, and brute force
// over all topological orders.

#include <memsched/graph/dataflow_graph.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/sim/simulate_order.hpp>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/compressed_sparse_row_graph.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <utility>
#include <vector>

namespace memsched::testing {

/// A random DAG on n vertices whose edges are the pairs i < j for which edge_rule(i, j, rng) is
/// true (asked in the order (0, 1), (0, 2), ..., (1, 2), ...), then vertices relabelled by a random
/// permutation so that indices are not a topological order. Bytes in [1, max_bytes], cost in
/// [1, 10], workspace 0 unless `with_workspace`. Deterministic for a seed.
template <class EdgeRule>
memory_graph_data random_dag_with(std::size_t n, std::uint64_t seed, EdgeRule edge_rule, std::int64_t max_bytes = 100,
                                  bool with_workspace = false) {
  std::mt19937_64 rng(seed);
  std::vector<std::size_t> label(n);
  for (std::size_t i = 0; i < n; ++i) label[i] = i;
  std::shuffle(label.begin(), label.end(), rng);
  std::uniform_int_distribution<std::int64_t> size(1, max_bytes), ws(0, max_bytes / 2);
  std::uniform_int_distribution<int> cost(1, 10);
  memory_graph_data d;
  d.num_nodes = n;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j)
      if (edge_rule(i, j, rng)) d.edges.emplace_back(label[i], label[j]);
  d.bytes.resize(n);
  d.cost.resize(n);
  d.workspace.assign(n, 0);
  for (std::size_t v = 0; v < n; ++v) {
    d.bytes[v] = size(rng);
    d.cost[v] = cost(rng);
    if (with_workspace) d.workspace[v] = ws(rng);
  }
  return d;
}

/// random_dag_with where every pair i < j is an edge with probability p.
inline memory_graph_data random_dag(std::size_t n, double p, std::uint64_t seed, std::int64_t max_bytes = 100,
                                    bool with_workspace = false) {
  std::bernoulli_distribution edge(p);
  return random_dag_with(n, seed, [&](std::size_t, std::size_t, std::mt19937_64& rng) { return edge(rng); }, max_bytes,
                         with_workspace);
}

/// Calls f(order) for every topological order of g (as a vector of vertex indices). Exponential:
/// for graphs up to ~10 vertices.
inline void for_each_topological_order(const memory_graph& g, const std::function<void(const std::vector<std::size_t>&)>& f) {
  const std::size_t n = g.size();
  std::vector<std::uint32_t> indegree(n);
  for (std::size_t v = 0; v < n; ++v) indegree[v] = static_cast<std::uint32_t>(g.in_degree(v));
  std::vector<std::size_t> order;
  std::vector<char> used(n, 0);
  std::function<void()> extend = [&] {
    if (order.size() == n) {
      f(order);
      return;
    }
    for (std::size_t v = 0; v < n; ++v) {
      if (used[v] || indegree[v] != 0) continue;
      used[v] = 1;
      order.push_back(v);
      for (auto s : g.successors(v)) --indegree[s];
      extend();
      for (auto s : g.successors(v)) ++indegree[s];
      order.pop_back();
      used[v] = 0;
    }
  };
  extend();
}

/// A random training graph: a random forward DAG on n_forward vertices (random_dag), a loss that
/// reads every forward sink, and for every forward vertex f that is not a source a gradient g(f)
/// (role backward, grad_of f) reading f, its inputs and the gradients of f's consumers (or the
/// loss), as Checkmate's rule builds them. Vertices are shuffled, so indices are not topological.
inline memory_graph_data random_training_dag(std::size_t n_forward, double p, std::uint64_t seed, std::int64_t max_bytes = 100) {
  const memory_graph_data fwd = random_dag(n_forward, p, seed, max_bytes);
  const memory_graph fg(fwd);
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ULL);
  memory_graph_data d;
  std::vector<std::size_t> grad(n_forward, n_forward);  // forward vertex -> its gradient (temporary numbering)
  std::size_t next = n_forward + 1;                     // n_forward is the loss
  for (std::size_t f = 0; f < n_forward; ++f)
    if (fg.in_degree(f) != 0) grad[f] = next++;
  const std::size_t n = next;
  std::vector<std::size_t> label(n);
  for (std::size_t i = 0; i < n; ++i) label[i] = i;
  std::shuffle(label.begin(), label.end(), rng);
  d.num_nodes = n;
  d.bytes.assign(n, 0);
  d.cost.assign(n, 1.0);
  d.workspace.assign(n, 0);
  d.roles.assign(n, node_role::forward);
  d.grad_of.assign(n, std::nullopt);
  std::uniform_int_distribution<std::int64_t> size(1, max_bytes);
  for (std::size_t f = 0; f < n_forward; ++f) {
    d.bytes[label[f]] = fwd.bytes[f];
    d.cost[label[f]] = fwd.cost[f];
  }
  for (auto [u, v] : fwd.edges) d.edges.emplace_back(label[u], label[v]);
  const std::size_t loss = label[n_forward];
  d.roles[loss] = node_role::loss;
  d.bytes[loss] = 4;
  for (std::size_t f = 0; f < n_forward; ++f)
    if (fg.out_degree(f) == 0) d.edges.emplace_back(label[f], loss);
  for (std::size_t f = 0; f < n_forward; ++f) {
    if (grad[f] == n_forward) continue;
    const std::size_t gf = label[grad[f]];
    d.roles[gf] = node_role::backward;
    d.grad_of[gf] = label[f];
    d.bytes[gf] = fwd.bytes[f];
    d.cost[gf] = 2 * fwd.cost[f];
    d.edges.emplace_back(label[f], gf);
    for (auto p : fg.predecessors(f)) d.edges.emplace_back(label[p], gf);
    bool reads_successor_gradient = false;
    for (auto s : fg.successors(f))
      if (grad[s] != n_forward) {
        d.edges.emplace_back(label[grad[s]], gf);
        reads_successor_gradient = true;
      }
    if (!reads_successor_gradient) d.edges.emplace_back(loss, gf);
  }
  return d;
}

/// The same graph as memsched::dataflow_graph (bundled node data, ids = 1000 + index, roles,
/// grad_of and inplace when d has them).
inline dataflow_graph to_dataflow_graph(const memory_graph_data& d) {
  dataflow_graph g(d.num_nodes);
  for (std::size_t v = 0; v < d.num_nodes; ++v) {
    g[v].id = 1000 + static_cast<std::int64_t>(v);
    g[v].bytes = d.bytes[v];
    g[v].cost = d.cost.empty() ? 1.0 : d.cost[v];
    g[v].workspace = d.workspace.empty() ? 0 : d.workspace[v];
    if (!d.roles.empty()) g[v].role = d.roles[v];
    if (!d.grad_of.empty() && d.grad_of[v]) g[v].grad_of = 1000 + static_cast<std::int64_t>(*d.grad_of[v]);
    g[v].inplace = !d.inplace.empty() && d.inplace[v] != 0;
  }
  for (auto [u, v] : d.edges) add_edge(u, v, g);
  g[boost::graph_bundle].outputs = d.outputs;
  return g;
}

/// The three Boost graph types every generic algorithm is tested on.
using vecs_graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, node>;
using lists_graph = boost::adjacency_list<boost::listS, boost::listS, boost::bidirectionalS,
                                          boost::property<boost::vertex_index_t, std::size_t, node>>;
using csr_graph = boost::compressed_sparse_row_graph<boost::directedS, node>;

/// A graph of type G holding `d`, and the node maps an algorithm reads it through.
template <class G>
struct typed_graph {
  std::optional<std::vector<std::size_t>> outputs;  // declared first: make() sets it
  G graph;
  explicit typed_graph(const memory_graph_data& d) : outputs(d.outputs), graph(make(d)) {}
  [[nodiscard]] auto maps() const {
    if constexpr (std::is_same_v<G, lists_graph>) {
      auto m = default_node_maps(graph, get(boost::vertex_index, graph));
      m.outputs = outputs;
      return m;
    } else {
      auto m = default_node_maps(graph);
      m.outputs = outputs;
      return m;
    }
  }

 private:
  static void fill(node& n, const memory_graph_data& d, std::size_t v) {
    n.id = static_cast<std::int64_t>(v);
    n.bytes = d.bytes[v];
    n.cost = d.cost.empty() ? 1.0 : d.cost[v];
    n.workspace = d.workspace.empty() ? 0 : d.workspace[v];
    if (!d.roles.empty()) n.role = d.roles[v];
    if (!d.grad_of.empty() && d.grad_of[v]) n.grad_of = static_cast<std::int64_t>(*d.grad_of[v]);
    n.inplace = !d.inplace.empty() && d.inplace[v] != 0;
  }
  static G make(const memory_graph_data& d) {
    if constexpr (std::is_same_v<G, csr_graph>) {
      auto edges = d.edges;
      std::sort(edges.begin(), edges.end());
      G g(boost::edges_are_sorted, edges.begin(), edges.end(), d.num_nodes);
      for (std::size_t v = 0; v < d.num_nodes; ++v) fill(g[v], d, v);
      return g;
    } else if constexpr (std::is_same_v<G, lists_graph>) {
      G g;
      std::vector<typename G::vertex_descriptor> vs;
      for (std::size_t v = 0; v < d.num_nodes; ++v) {
        vs.push_back(add_vertex(g));
        put(boost::vertex_index, g, vs.back(), v);
        fill(g[vs.back()], d, v);
      }
      for (auto [u, v] : d.edges) add_edge(vs[u], vs[v], g);
      return g;
    } else {
      G g(d.num_nodes);
      for (std::size_t v = 0; v < d.num_nodes; ++v) fill(g[v], d, v);
      for (auto [u, v] : d.edges) add_edge(u, v, g);
      return g;
    }
  }
};

/// The minimum peak over every topological order of g (exponential: small graphs only).
inline std::int64_t brute_force_peak(const memory_graph& g) {
  std::int64_t best = std::numeric_limits<std::int64_t>::max();
  for_each_topological_order(g, [&](const std::vector<std::size_t>& order) {
    best = std::min(best, memsched::detail::order_peak_unchecked(g, order));
  });
  return best;
}

/// d with its vertices renumbered along its (smallest-index-first) topological order, so that
/// every edge runs to a higher index; sizes, costs, workspaces, ids, outputs and in-place flags
/// move with their vertices (d has no roles).
inline memory_graph_data numbered_in_topological_order(memory_graph_data d) {
  const std::size_t n = d.num_nodes;
  const memory_graph g(d);
  std::vector<std::size_t> position(n);
  for (std::size_t i = 0; i < n; ++i) position[g.topological_order()[i]] = i;
  for (auto& [u, v] : d.edges) u = position[u], v = position[v];
  if (d.outputs)
    for (auto& o : *d.outputs) o = position[o];
  const auto move_with_vertices = [&](auto& values) {
    if (values.empty()) return;
    auto moved = values;
    for (std::size_t v = 0; v < n; ++v) moved[position[v]] = values[v];
    values = std::move(moved);
  };
  move_with_vertices(d.bytes);
  move_with_vertices(d.cost);
  move_with_vertices(d.workspace);
  move_with_vertices(d.ids);
  move_with_vertices(d.inplace);
  return d;
}

/// d with random explicit outputs: some inner vertices become outputs, some sinks do not.
inline memory_graph_data with_random_outputs(memory_graph_data d, std::uint64_t seed) {
  std::mt19937_64 rng(seed * 7919 + 1);
  std::vector<std::size_t> outs;
  for (std::size_t v = 0; v < d.num_nodes; ++v)
    if (rng() % 3 == 0) outs.push_back(v);
  d.outputs = outs;
  return d;
}

/// d with random in-place vertices (each with probability 1/2) and, so that reuse happens often,
/// every in-place vertex with a predecessor given the bytes of a random one of its predecessors.
/// Deterministic for a seed.
inline memory_graph_data with_random_inplace(memory_graph_data d, std::uint64_t seed) {
  std::mt19937_64 rng(seed * 104729 + 3);
  std::vector<std::vector<std::size_t>> preds(d.num_nodes);
  for (auto [u, v] : d.edges) preds[v].push_back(u);
  d.inplace.assign(d.num_nodes, 0);
  for (std::size_t v = 0; v < d.num_nodes; ++v) {
    if (rng() % 2 == 0) continue;
    d.inplace[v] = 1;
    if (!preds[v].empty() && rng() % 4 != 0) d.bytes[v] = d.bytes[preds[v][rng() % preds[v].size()]];
  }
  return d;
}

}  // namespace memsched::testing
