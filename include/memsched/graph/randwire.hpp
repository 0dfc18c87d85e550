#pragma once
// RandWire networks (Xie, Kirillov, Girshick, He: "Exploring Randomly Wired Neural Networks for
// Image Recognition", ICCV 2019) as memsched dataflow graphs, with realistic tensor sizes
// (float32, batch 1) and costs (FLOPs = 2 x multiply-adds).

#include <memsched/core/errors.hpp>
#include <memsched/graph/dataflow_graph.hpp>
#include <memsched/graph/detail/generator_support.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace memsched {

/// Options of make_randwire. The defaults are the paper's small regime with WS(32, 4, 0.75):
/// three random stages with 78, 156, 312 channels at 28x28, 14x14, 7x7 for a 224x224 input.
struct randwire_options {
  std::size_t stages = 3;          ///< Number of random stages (each its own random graph).
  std::size_t nodes = 32;          ///< Nodes per stage (WS N).
  std::size_t k = 4;               ///< WS ring degree K (even, 2 <= K < N).
  double p = 0.75;                 ///< WS rewiring probability P in [0, 1].
  std::uint64_t seed = 0;          ///< Seed; stage s uses a stream derived from (seed, s).
  std::int64_t channels = 78;      ///< Channels of the first random stage; doubled at each next stage.
  std::int64_t resolution = 224;   ///< Input image side. The first stage reads a resolution/4 map.
  bool expand_ops = true;          ///< One node per op (wsum, relu, dw, pw, bn); false: one node per RandWire node.
  bool stem_and_head = true;       ///< Add the stem (two stride-2 3x3 convs) and the classifier head.
  std::int64_t classes = 1000;     ///< Classifier outputs (with stem_and_head).
};

namespace detail {

/// Undirected WS(n, k, p) edges (u < v), following networkx.watts_strogatz_graph: a ring lattice
/// where each node links to its k/2 clockwise neighbours, then for each neighbour distance j =
/// 1..k/2 and node u, with probability p, edge (u, u+j) is replaced by (u, w) for a uniform w that
/// is not u and not already linked to u.
inline std::vector<std::pair<std::size_t, std::size_t>> watts_strogatz_edges(std::size_t n, std::size_t k, double p, portable_rng& rng) {
  std::set<std::pair<std::size_t, std::size_t>> edges;
  std::vector<std::size_t> degree(n, 0);
  auto key = [](std::size_t a, std::size_t b) { return std::pair{std::min(a, b), std::max(a, b)}; };
  for (std::size_t j = 1; j <= k / 2; ++j)
    for (std::size_t u = 0; u < n; ++u)
      if (edges.insert(key(u, (u + j) % n)).second) ++degree[u], ++degree[(u + j) % n];
  for (std::size_t j = 1; j <= k / 2; ++j)
    for (std::size_t u = 0; u < n; ++u) {
      if (!rng.bernoulli(p)) continue;
      const std::size_t v = (u + j) % n;
      if (!edges.count(key(u, v)) || degree[u] >= n - 1) continue;
      std::size_t w = rng.below(n);
      while (w == u || edges.count(key(u, w))) w = rng.below(n);
      edges.erase(key(u, v));
      --degree[v];
      edges.insert(key(u, w));
      ++degree[w];
    }
  return {edges.begin(), edges.end()};
}

struct feature_map {
  std::int64_t c = 0, h = 0, w = 0;
  [[nodiscard]] std::int64_t elements() const { return c * h * w; }
  [[nodiscard]] std::int64_t bytes() const { return float_bytes * elements(); }
};

inline std::int64_t halved(std::int64_t side) { return (side + 1) / 2; }  // 3x3 conv, pad 1, stride 2

}  // namespace detail

/// Builds a RandWire network. Each stage is a WS(nodes, k, p) graph made a DAG by orienting every
/// edge from the lower to the higher node index. Each RandWire node computes
///   [wsum of its inputs, when in-degree > 1] -> relu -> depthwise 3x3 conv -> pointwise 1x1 conv -> batchnorm;
/// nodes without predecessors read the stage input (their depthwise conv has stride 2, halving the
/// side; their pointwise conv maps the input channels to the stage's channels); nodes without
/// successors are averaged (`mean_n`, omitted when there is only one) into the stage output.
/// Ops: input, conv2d, batchnorm, relu, wsum, depthwise_conv2d (names end in `.dw`), conv2d
/// (pointwise, names end in `.pw`), mean_n, adaptive_avgpool2d, linear. With stem_and_head: input
/// 3 x R x R -> conv1 (3x3 s2, C/2) -> bn -> relu -> conv2 (3x3 s2, C) -> bn -> stages -> relu ->
/// conv 1x1 (1280) -> bn -> relu -> adaptive_avgpool2d -> linear (classes). Without: the graph
/// starts at an input of C x R/4 x R/4 and ends at the last stage output.
/// With expand_ops = false each RandWire node is one `randwire_node` whose workspace is the largest
/// pair of its internal tensors alive at once. Node ids are 0..n-1 in a topological order (also
/// stored as the graph's `order`). Deterministic for the options. O(stages * (nodes * k + log)).
/// Throws option_error (a std::invalid_argument) naming the field for stages == 0, nodes < 2, k odd, k < 2 or
/// k >= nodes, p outside [0, 1], channels < 1, resolution < 4 or classes < 1.
[[nodiscard]] inline dataflow_graph make_randwire(const randwire_options& o = {}) {
  auto fail = [](const char* option, const std::string& requirement) { throw option_error("make_randwire", option, requirement); };
  if (o.stages == 0) fail("stages", "must be >= 1");
  if (o.nodes < 2) fail("nodes", "must be >= 2, got " + std::to_string(o.nodes));
  if (o.k < 2 || o.k % 2 != 0 || o.k >= o.nodes) fail("k", "must be even with 2 <= k < nodes, got " + std::to_string(o.k));
  if (!(o.p >= 0.0 && o.p <= 1.0)) fail("p", "must be in [0, 1], got " + std::to_string(o.p));
  if (o.channels < 1) fail("channels", "must be >= 1");
  if (o.resolution < 4) fail("resolution", "must be >= 4");
  if (o.classes < 1) fail("classes", "must be >= 1");
  using detail::feature_map;
  detail::graph_builder b;
  const std::int64_t c0 = o.channels;
  auto conv_cost = [](std::int64_t cin_per_group, std::int64_t kernel, const feature_map& out) {
    return 2.0 * static_cast<double>(cin_per_group) * static_cast<double>(kernel * kernel) * static_cast<double>(out.elements());
  };
  std::size_t x = 0;
  feature_map cur;
  if (o.stem_and_head) {
    feature_map in{3, o.resolution, o.resolution};
    x = b.add("x", "input", in.bytes(), 0);
    feature_map m1{std::max<std::int64_t>(c0 / 2, 1), detail::halved(in.h), detail::halved(in.w)};
    x = b.add("conv1.conv", "conv2d", m1.bytes(), conv_cost(3, 3, m1), {x});
    x = b.add("conv1.bn", "batchnorm", m1.bytes(), 2.0 * m1.elements(), {x});
    x = b.add("conv2.relu", "relu", m1.bytes(), double(m1.elements()), {x});
    feature_map m2{c0, detail::halved(m1.h), detail::halved(m1.w)};
    x = b.add("conv2.conv", "conv2d", m2.bytes(), conv_cost(m1.c, 3, m2), {x});
    x = b.add("conv2.bn", "batchnorm", m2.bytes(), 2.0 * m2.elements(), {x});
    cur = m2;
  } else {
    cur = feature_map{c0, std::max<std::int64_t>(o.resolution / 4, 1), std::max<std::int64_t>(o.resolution / 4, 1)};
    x = b.add("x", "input", cur.bytes(), 0);
  }
  std::int64_t channels = c0;
  for (std::size_t s = 0; s < o.stages; ++s, channels *= 2) {
    detail::portable_rng rng(o.seed * 0x100000001b3ULL + s + 1);
    const auto ws = detail::watts_strogatz_edges(o.nodes, o.k, o.p, rng);
    std::vector<std::vector<std::size_t>> preds(o.nodes);
    std::vector<std::size_t> outdeg(o.nodes, 0);
    for (auto [u, v] : ws) preds[v].push_back(u), ++outdeg[u];
    const feature_map out{channels, detail::halved(cur.h), detail::halved(cur.w)};
    std::vector<std::size_t> result(o.nodes);
    const std::string stage = "stage" + std::to_string(s + 1) + ".nodes.";
    for (std::size_t i = 0; i < o.nodes; ++i) {
      const std::string prefix = stage + std::to_string(i) + ".";
      const bool first = preds[i].empty();
      const feature_map in = first ? cur : out;
      const feature_map dw{in.c, out.h, out.w};
      std::vector<std::size_t> sources;
      for (auto u : preds[i]) sources.push_back(result[u]);
      if (first) sources.push_back(x);
      const double agg_cost = sources.size() > 1 ? 2.0 * double(sources.size()) * double(in.elements()) : 0.0;
      const double relu_cost = double(in.elements()), dw_cost = conv_cost(1, 3, dw), pw_cost = conv_cost(in.c, 1, out),
                   bn_cost = 2.0 * double(out.elements());
      if (o.expand_ops) {
        std::size_t a = sources.front();
        if (sources.size() > 1) a = b.add(prefix + "agg", "wsum", in.bytes(), agg_cost, sources);
        a = b.add(prefix + "relu", "relu", in.bytes(), relu_cost, {a});
        a = b.add(prefix + "dw", "depthwise_conv2d", dw.bytes(), dw_cost, {a});
        a = b.add(prefix + "pw", "conv2d", out.bytes(), pw_cost, {a});
        result[i] = b.add(prefix + "bn", "batchnorm", out.bytes(), bn_cost, {a});
      } else {
        result[i] = b.add(prefix + "node", "randwire_node", out.bytes(), agg_cost + relu_cost + dw_cost + pw_cost + bn_cost, sources);
        const std::int64_t agg = sources.size() > 1 ? in.bytes() : 0;
        b[result[i]].workspace = std::max({agg + in.bytes(), in.bytes() + dw.bytes(), dw.bytes() + out.bytes()});
      }
    }
    std::vector<std::size_t> sinks;
    for (std::size_t i = 0; i < o.nodes; ++i)
      if (outdeg[i] == 0) sinks.push_back(result[i]);
    x = sinks.size() == 1 ? sinks.front()
                          : b.add("stage" + std::to_string(s + 1) + ".out", "mean_n", out.bytes(), double(sinks.size()) * double(out.elements()), sinks);
    cur = out;
  }
  if (o.stem_and_head) {
    const feature_map h{1280, cur.h, cur.w};
    x = b.add("head.relu", "relu", cur.bytes(), double(cur.elements()), {x});
    x = b.add("head.conv", "conv2d", h.bytes(), conv_cost(cur.c, 1, h), {x});
    x = b.add("head.bn", "batchnorm", h.bytes(), 2.0 * h.elements(), {x});
    x = b.add("head.relu2", "relu", h.bytes(), double(h.elements()), {x});
    x = b.add("head.avgpool", "adaptive_avgpool2d", detail::float_bytes * h.c, double(h.elements()), {x});
    x = b.add("head.fc", "linear", detail::float_bytes * o.classes, 2.0 * double(h.c) * double(o.classes), {x});
  }
  return b.build("randwire_ws_" + std::to_string(o.nodes) + "_" + std::to_string(o.k) + "_" + std::to_string(o.p).substr(0, 4) + "_" +
                     std::to_string(o.stages) + "stages_seed" + std::to_string(o.seed),
                 "inference", {x});
}

}  // namespace memsched
