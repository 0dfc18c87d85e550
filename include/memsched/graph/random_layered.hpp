#pragma once
// Random layered DAGs in the style of Gagrani et al. 2022 ("Neural Topological Ordering for
// Computation Graphs", App. A), the synthetic graphs of the Moccasin paper (ICML 2023, Table 3).

#include <memsched/core/errors.hpp>
#include <memsched/graph/dataflow_graph.hpp>
#include <memsched/graph/detail/generator_support.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace memsched {

/// How make_random_layered draws the nodes' sizes within [min_bytes, max_bytes].
enum class random_layered_sizes {
  uniform,  ///< Uniform: the recipe's description.
  product,  ///< min + (max - min) x u1 x u2 for two uniform draws: many small values, few large
            ///< ones (mean a quarter of the range), the shape of the Moccasin artifact's sizes.
};

/// Options of make_random_layered. Field names follow the Moccasin artifact's file names
/// (`random_layered_n100_w0.27_nlv0.75_ed0.2_scd0.14`); the defaults are that graph's parameters.
struct random_layered_options {
  std::size_t nodes = 100;         ///< n: total nodes, including the source and the sink.
  double width = 0.27;             ///< w: mean layer width = max(1, round(n^w)).
  double width_variation = 0.75;   ///< nlv: each layer's width is uniform in mean * [1 - nlv, 1 + nlv] (at least 1).
  double edge_density = 0.2;       ///< ed: u in layer l feeds v in layer l+1 when their relative positions differ by <= ed.
  double skip_density = 0.14;      ///< scd: probability that a node also reads a random node >= 2 layers back.
  std::uint64_t seed = 0;
  std::int64_t min_bytes = 10;     ///< Sizes are uniform multiples of byte_step in [min_bytes, max_bytes].
  std::int64_t max_bytes = 8000;
  std::int64_t byte_step = 10;
  std::int64_t min_cost = 1;       ///< Costs are uniform integers in [min_cost, max_cost] (source and sink: 0).
  std::int64_t max_cost = 1000;
  random_layered_sizes sizes = random_layered_sizes::uniform;
};

namespace detail {

/// Checks the options (the throws of make_random_layered).
inline void check_random_layered_options(const random_layered_options& o) {
  auto fail = [](const char* option, const std::string& requirement) { throw option_error("make_random_layered", option, requirement); };
  if (o.nodes < 3) fail("nodes", "must be >= 3, got " + std::to_string(o.nodes));
  if (!(o.width >= 0)) fail("width", "must be >= 0");
  if (!(o.width_variation >= 0 && o.width_variation <= 1)) fail("width_variation", "must be in [0, 1]");
  if (!(o.edge_density >= 0)) fail("edge_density", "must be >= 0");
  if (!(o.skip_density >= 0 && o.skip_density <= 1)) fail("skip_density", "must be in [0, 1]");
  if (o.min_bytes < 0 || o.max_bytes < o.min_bytes) throw std::invalid_argument("make_random_layered: need 0 <= min_bytes <= max_bytes");
  if (o.byte_step < 1) fail("byte_step", "must be >= 1");
  if (o.min_cost < 0 || o.max_cost < o.min_cost) throw std::invalid_argument("make_random_layered: need 0 <= min_cost <= max_cost");
}

/// The layer widths of the graph (the generator's first draws from `rng`): they fill nodes
/// 2..n-1 in order.
inline std::vector<std::size_t> random_layered_widths(const random_layered_options& o, portable_rng& rng) {
  const double mean = std::max(1.0, std::round(std::pow(double(o.nodes), o.width)));
  std::vector<std::size_t> widths;
  for (std::size_t next = 2; next < o.nodes;) {
    const double lo = mean * (1.0 - o.width_variation), hi = mean * (1.0 + o.width_variation);
    auto w = static_cast<std::size_t>(std::max(1.0, std::round(lo + (hi - lo) * rng.uniform01())));
    w = std::min(w, o.nodes - next);
    widths.push_back(w);
    next += w;
  }
  return widths;
}

inline portable_rng random_layered_rng(const random_layered_options& o) { return portable_rng(o.seed ^ 0x5eed1a7e4edULL); }

}  // namespace detail

/// An upper bound on the number of edges make_random_layered(o) gives, computed from the layer
/// widths without building anything: between layers of widths a and c at most a * c edges, and at
/// most a * min(c, 2 * edge_density * c + 2) position-matched edges plus the a + c nearest-node
/// ones; the source's edges (the first layer), the skip edges (counted exactly: the generator's
/// draws are replayed, nothing stored) and the sink's (the last layer: every other node feeds the
/// next layer). O(n) time, O(number of layers) memory.
/// Throws what make_random_layered throws for the options.
[[nodiscard]] inline std::uint64_t random_layered_edge_bound(const random_layered_options& o) {
  detail::check_random_layered_options(o);
  auto rng = detail::random_layered_rng(o);
  const auto widths = detail::random_layered_widths(o, rng);
  long double total = static_cast<long double>(widths.front()) + static_cast<long double>(widths.back());
  for (std::size_t l = 0; l + 1 < widths.size(); ++l) {
    const long double a = static_cast<long double>(widths[l]), c = static_cast<long double>(widths[l + 1]);
    total += std::min(a * c, a * std::min(c, 2.0L * static_cast<long double>(o.edge_density) * c + 2.0L) + a + c);
  }
  // The skip edges: the same draws as make_random_layered (the local edges draw nothing).
  std::size_t layer_start = 2, before_previous_end = 0;  // first id of layer l; last id of layer l - 2
  for (std::size_t l = 0; l < widths.size(); ++l) {
    if (l >= 2) {
      for (std::size_t i = 0; i < widths[l]; ++i)
        if (rng.bernoulli(o.skip_density)) {
          (void)rng.below(before_previous_end - 2 + 1);
          total += 1;
        }
    }
    if (l >= 1) before_previous_end = layer_start - 1;  // the last id of layer l - 1, for layer l + 1
    layer_start += widths[l];
  }
  return total >= 1.8e19L ? std::numeric_limits<std::uint64_t>::max() : static_cast<std::uint64_t>(total);
}

/// A random layered DAG: node 0 is the only source (`input`, cost 0) and node 1 the only sink
/// (`output`, cost 0, the graph output); nodes 2..n-1 (op `op`) fill layers 1..L in order, each
/// layer's width drawn as the options say until the nodes run out. Edges: the source feeds layer
/// 1; between consecutive layers, u (relative position (i + 0.5) / width) feeds v when the
/// positions differ by at most edge_density, and in addition every node of layer l+1 reads the
/// nearest node of layer l and every node of layer l feeds the nearest node of layer l+1; with
/// probability skip_density a node of layer l >= 3 also reads a uniform node of layers 1..l-2; the
/// sink reads every node without successors. Sizes as `sizes` says (uniform: multiples of
/// byte_step; product: skewed towards small). The graph's `order` is 0, 2, 3, ..., n-1, 1.
/// This follows the recipe's description (layers, local edges, skip connections, uniform sizes and
/// costs); it is not the authors' code, so statistics match the artifact's graphs only roughly.
/// Deterministic for the options. O(n + m). Throws option_error naming the field for
/// nodes < 3, width < 0, width_variation outside [0, 1], edge_density < 0, skip_density outside
/// [0, 1] or byte_step < 1; std::invalid_argument naming both fields for min_bytes < 0, max_bytes <
/// min_bytes, min_cost < 0 or max_cost < min_cost.
[[nodiscard]] inline dataflow_graph make_random_layered(const random_layered_options& o = {}) {
  detail::check_random_layered_options(o);
  auto rng = detail::random_layered_rng(o);
  std::vector<std::vector<std::size_t>> layers;
  std::size_t next = 2;
  for (const std::size_t w : detail::random_layered_widths(o, rng)) {
    layers.emplace_back();
    for (std::size_t i = 0; i < w; ++i) layers.back().push_back(next++);
  }
  std::vector<std::pair<std::size_t, std::size_t>> edges;
  for (auto v : layers.front()) edges.emplace_back(0, v);
  auto pos = [](std::size_t i, std::size_t w) { return (double(i) + 0.5) / double(w); };
  auto nearest = [](double p, std::size_t w) { return std::min(w - 1, static_cast<std::size_t>(p * double(w))); };
  for (std::size_t l = 0; l + 1 < layers.size(); ++l) {
    const auto &a = layers[l], &c = layers[l + 1];
    const double cw = double(c.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      // Only the j near position p can match: the test runs on that window (one more on each side
      // for rounding), so the work is the edges made, not a.size() x c.size().
      const double p = pos(i, a.size());
      const double from = std::max(0.0, std::floor((p - o.edge_density) * cw - 0.5) - 1.0);
      const double to = std::min(cw - 1.0, std::ceil((p + o.edge_density) * cw - 0.5) + 1.0);
      for (double jd = from; jd <= to; jd += 1.0) {
        const auto j = static_cast<std::size_t>(jd);
        if (std::abs(p - pos(j, c.size())) <= o.edge_density + 1e-12) edges.emplace_back(a[i], c[j]);
      }
    }
    for (std::size_t j = 0; j < c.size(); ++j) edges.emplace_back(a[nearest(pos(j, c.size()), a.size())], c[j]);
    for (std::size_t i = 0; i < a.size(); ++i) edges.emplace_back(a[i], c[nearest(pos(i, a.size()), c.size())]);
  }
  for (std::size_t l = 2; l < layers.size(); ++l) {
    const std::size_t first = layers[0].front(), last = layers[l - 2].back();  // layers are consecutive ids
    for (auto v : layers[l])
      if (rng.bernoulli(o.skip_density)) edges.emplace_back(first + rng.below(last - first + 1), v);
  }
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  std::vector<char> has_succ(o.nodes, 0);
  for (auto [u, v] : edges) has_succ[u] = 1;
  for (std::size_t v = 2; v < o.nodes; ++v)
    if (!has_succ[v]) edges.emplace_back(v, 1);

  detail::graph_builder b;
  auto bytes = [&] {
    const std::int64_t lo = (o.min_bytes + o.byte_step - 1) / o.byte_step, hi = o.max_bytes / o.byte_step;
    if (lo > hi) return o.min_bytes;
    if (o.sizes == random_layered_sizes::uniform) return rng.between(lo, hi) * o.byte_step;
    const double u = rng.uniform01() * rng.uniform01();
    return std::min(hi, lo + static_cast<std::int64_t>(u * static_cast<double>(hi - lo + 1))) * o.byte_step;
  };
  b.add("source", "input", bytes(), 0);
  b.add("sink", "output", bytes(), 0);
  for (std::size_t v = 2; v < o.nodes; ++v) {
    const std::int64_t size = bytes();
    // Appended: g++ 12 warns (-Wstringop-overflow, a false positive) on "n" + std::to_string(v).
    std::string name = "n";
    name += std::to_string(v);
    b.add(std::move(name), "op", size, double(rng.between(o.min_cost, o.max_cost)));
  }
  for (auto [u, v] : edges) b.connect(u, v);
  dataflow_graph g = b.build("random_layered_n" + std::to_string(o.nodes) + "_seed" + std::to_string(o.seed), "inference", {1});
  auto& order = g[boost::graph_bundle].order;
  order.clear();
  order.push_back(0);
  for (std::size_t v = 2; v < o.nodes; ++v) order.push_back(v);
  order.push_back(1);
  return g;
}

}  // namespace memsched
