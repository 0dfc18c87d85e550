#pragma once
// Internals shared by the graph generators (randwire.hpp, darts.hpp, random_layered.hpp): a
// portable random number generator (same stream on every platform and standard library) and a
// small builder that assembles a dataflow_graph node by node.

#include <memsched/graph/dataflow_graph.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace memsched::detail {

/// SplitMix64: a tiny generator whose output does not depend on the standard library (unlike
/// std::uniform_int_distribution), so generated graphs are identical everywhere for a seed.
class portable_rng {
 public:
  explicit portable_rng(std::uint64_t seed) noexcept : state_(seed) {}
  std::uint64_t next() noexcept {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1).
  double uniform01() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  /// Uniform integer in [0, n); n > 0. Rejection sampling, so exactly uniform.
  std::uint64_t below(std::uint64_t n) noexcept {
    const std::uint64_t limit = ~std::uint64_t{0} - (~std::uint64_t{0} % n);
    std::uint64_t x = next();
    while (x >= limit) x = next();
    return x % n;
  }
  /// Uniform integer in [lo, hi]; lo <= hi.
  std::int64_t between(std::int64_t lo, std::int64_t hi) noexcept {
    return lo + static_cast<std::int64_t>(below(static_cast<std::uint64_t>(hi - lo) + 1));
  }
  bool bernoulli(double p) noexcept { return uniform01() < p; }

 private:
  std::uint64_t state_;
};

/// Collects nodes (id = insertion index) and edges, then builds the dataflow_graph.
class graph_builder {
 public:
  std::size_t add(std::string name, std::string op, std::int64_t bytes, double cost, const std::vector<std::size_t>& inputs = {}) {
    const std::size_t v = nodes_.size();
    node n;
    n.id = static_cast<std::int64_t>(v);
    n.name = std::move(name);
    n.op = std::move(op);
    n.bytes = bytes;
    n.cost = cost;
    nodes_.push_back(std::move(n));
    for (auto u : inputs) edges_.emplace_back(u, v);
    return v;
  }
  void connect(std::size_t from, std::size_t to) { edges_.emplace_back(from, to); }
  node& operator[](std::size_t v) { return nodes_[v]; }
  [[nodiscard]] std::size_t size() const noexcept { return nodes_.size(); }

  /// The graph; duplicate edges are merged; `order` is set to the insertion order (a topological
  /// order when every edge goes from an earlier to a later node, which the generators guarantee).
  [[nodiscard]] dataflow_graph build(std::string name, std::string kind, std::vector<std::size_t> outputs = {}) const {
    dataflow_graph g;
    for (const node& n : nodes_) add_vertex(n, g);
    auto edges = edges_;
    std::sort(edges.begin(), edges.end());
    edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
    for (auto [u, v] : edges) add_edge(u, v, g);
    auto& info = g[boost::graph_bundle];
    info.name = std::move(name);
    info.kind = std::move(kind);
    if (!outputs.empty()) info.outputs = std::move(outputs);
    info.order.resize(nodes_.size());
    for (std::size_t v = 0; v < nodes_.size(); ++v) info.order[v] = v;
    return g;
  }

 private:
  std::vector<node> nodes_;
  std::vector<std::pair<std::size_t, std::size_t>> edges_;
};

/// float32 activations: 4 bytes per element.
inline constexpr std::int64_t float_bytes = 4;

}  // namespace memsched::detail
