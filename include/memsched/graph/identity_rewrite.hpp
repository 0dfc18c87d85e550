#pragma once
// Serenity's identity graph rewriting (Ahn, Lee, Jin, Yoo, Esmaeilzadeh: "Ordering Chaos: Memory-
// Aware Scheduling of Irregularly Wired Neural Networks for Edge Devices", MLSys 2020, Sec. 3.3):
// a `concat` feeding convolutions is replaced by per-input partial operations, so that the
// concatenated tensor is never materialized.

#include <memsched/core/errors.hpp>
#include <memsched/graph/dataflow_graph.hpp>
#include <memsched/graph/memory_graph.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <queue>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace memsched {

/// Options of rewrite_identities.
struct identity_rewrite_options {
  bool channel_wise = true;            ///< Rewrite concat -> conv2d into accumulating partial convolutions.
  bool kernel_wise = true;             ///< Rewrite concat -> depthwise conv into per-input depthwise convs + concat.
  bool through_elementwise = true;     ///< Allow per-channel elementwise ops (relu, relu6, batchnorm, ...) in between.
  bool pooling_is_kernel_wise = false; ///< Also treat maxpool2d / avgpool2d as kernel-wise ops (not in the paper).
  std::size_t max_passes = 16;         ///< Kernel-wise rewrites create new concats; repeat up to this many passes.
};

/// The rewritten graph and where its vertices come from.
struct [[nodiscard]] identity_rewrite_result {
  dataflow_graph graph;                ///< The rewritten graph (a copy of the input when nothing applies).
  std::vector<std::size_t> original;   ///< For each vertex of `graph`, the input-graph vertex it comes from.
  std::size_t concat_conv_rewrites = 0;       ///< Convolutions partitioned channel-wise.
  std::size_t concat_depthwise_rewrites = 0;  ///< Depthwise convs (or pools) partitioned kernel-wise.
  std::size_t concats_removed = 0;            ///< Concat nodes removed (in any pass).
  std::size_t passes = 0;                     ///< Passes that changed the graph.
};

/// True for the op names identity rewriting treats as per-channel elementwise (they commute with a
/// channel concat): relu, relu6, batchnorm, sigmoid, silu, gelu, hardswish, hardsigmoid, tanh, dropout.
[[nodiscard]] inline bool is_channel_elementwise_op(std::string_view op) noexcept {
  for (std::string_view e : {"relu", "relu6", "batchnorm", "sigmoid", "silu", "gelu", "hardswish", "hardsigmoid", "tanh", "dropout"})
    if (op == e) return true;
  return false;
}

/// True when the node is a depthwise convolution: op `depthwise_conv2d`, or op `conv2d` whose name's
/// last dot-separated component starts with `dw` (the convention of the torch exports, e.g.
/// `nodes.3.dw`; the exports do not record groups, so other depthwise convs there look dense).
[[nodiscard]] inline bool is_depthwise_conv(const node& n) noexcept {
  if (n.op == "depthwise_conv2d") return true;
  if (n.op != "conv2d") return false;
  const auto dot = n.name.rfind('.');
  const std::string_view last = dot == std::string::npos ? std::string_view(n.name) : std::string_view(n.name).substr(dot + 1);
  return last.substr(0, 2) == "dw";
}

/// True when the node is a dense (channel-mixing) convolution: op `conv2d` and not depthwise.
[[nodiscard]] inline bool is_dense_conv(const node& n) noexcept { return n.op == "conv2d" && !is_depthwise_conv(n); }

namespace detail {

/// bytes split in proportion to weights (cumulative rounding: parts sum to exactly `total`).
inline std::vector<std::int64_t> split_bytes(std::int64_t total, const std::vector<std::int64_t>& weights) {
  std::vector<std::int64_t> parts(weights.size());
  long double sum = 0;
  for (auto w : weights) sum += static_cast<long double>(w);
  long double cum = 0;
  std::int64_t given = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    cum += sum > 0 ? static_cast<long double>(weights[i]) : 1.0L;
    const long double denom = sum > 0 ? sum : static_cast<long double>(weights.size());
    const auto upto = i + 1 == weights.size() ? total : static_cast<std::int64_t>(static_cast<long double>(total) * cum / denom);
    parts[i] = upto - given;
    given = upto;
  }
  return parts;
}

class identity_rewriter {
 public:
  identity_rewriter(const dataflow_graph& g, const identity_rewrite_options& o) : g_(g), o_(o) {}

  enum class leaf_kind { channel, kernel };
  struct match {
    std::size_t concat;
    std::vector<std::size_t> inputs;                       // x_1..x_k, by index
    std::vector<std::size_t> tree;                         // elementwise nodes, parents first
    std::vector<std::pair<std::size_t, leaf_kind>> leaves; // convs
  };

  [[nodiscard]] bool is_output(std::size_t v) const {
    const auto& outs = g_[boost::graph_bundle].outputs;
    if (outs) return std::find(outs->begin(), outs->end(), v) != outs->end();
    return out_degree(v, g_) == 0;
  }
  [[nodiscard]] std::size_t only_pred(std::size_t v) const {
    if (in_degree(v, g_) != 1) return std::numeric_limits<std::size_t>::max();
    return source(*in_edges(v, g_).first, g_);
  }
  [[nodiscard]] bool is_kernel_wise(const node& n) const {
    if (!o_.kernel_wise) return false;
    if (is_depthwise_conv(n)) return true;
    return o_.pooling_is_kernel_wise && (n.op == "maxpool2d" || n.op == "avgpool2d");
  }

  /// The match rooted at concat c, or false. See rewrite_identities for the rule.
  bool try_match(std::size_t c, match& m) const {
    const node& cn = g_[c];
    if (cn.op != "concat" || cn.role != node_role::forward || in_degree(c, g_) < 2 || out_degree(c, g_) == 0 || is_output(c)) return false;
    m = match{c, {}, {}, {}};
    for (auto [e, end] = in_edges(c, g_); e != end; ++e) m.inputs.push_back(source(*e, g_));
    std::sort(m.inputs.begin(), m.inputs.end());
    std::vector<std::size_t> frontier{c};
    for (std::size_t f = 0; f < frontier.size(); ++f) {
      for (auto [e, end] = out_edges(frontier[f], g_); e != end; ++e) {
        const std::size_t v = target(*e, g_);
        const node& n = g_[v];
        if (n.role != node_role::forward || only_pred(v) != frontier[f]) return false;
        if (o_.channel_wise && is_dense_conv(n)) {
          m.leaves.emplace_back(v, leaf_kind::channel);
        } else if (is_kernel_wise(n)) {
          m.leaves.emplace_back(v, leaf_kind::kernel);
        } else if (o_.through_elementwise && is_channel_elementwise_op(n.op) && out_degree(v, g_) > 0 && !is_output(v)) {
          m.tree.push_back(v);
          frontier.push_back(v);
        } else {
          return false;
        }
      }
    }
    return !m.leaves.empty();
  }

  /// One pass: every matching concat is rewritten. Returns false when nothing matched.
  bool pass(dataflow_graph& out, std::vector<std::size_t>& origin, std::size_t& channel, std::size_t& kernel, std::size_t& removed) {
    std::vector<char> taken(num_vertices(g_), 0);
    const std::vector<match> matches = disjoint_matches(taken);
    if (matches.empty()) return false;
    out = dataflow_graph();
    origin.clear();
    rewrite_pass_state s(out, origin, largest_id(), num_vertices(g_));
    copy_untouched_vertices(s, taken);
    for (const match& m : matches) {
      rewrite_match(s, m, channel, kernel);
      ++removed;
    }
    add_untouched_edges(s, taken);
    map_outputs(s);
    return true;
  }

 private:
  /// The graph a pass builds: its vertices, where each comes from, the ids handed out so far and
  /// which new vertices stand for each old one.
  struct rewrite_pass_state {
    rewrite_pass_state(dataflow_graph& graph, std::vector<std::size_t>& origins, std::int64_t largest_id, std::size_t old_vertices)
        : out(graph), origin(origins), max_id(largest_id), next_id(largest_id), rep(old_vertices) {}

    dataflow_graph& out;
    std::vector<std::size_t>& origin;
    std::int64_t max_id;   // the largest id of the pass's input graph
    std::int64_t next_id;  // the last id handed out
    std::vector<std::vector<std::size_t>> rep;  // new vertices holding v's output
    std::vector<std::pair<std::size_t, std::size_t>> edges;

    std::size_t add(node nd, std::size_t from) {
      const std::size_t v = add_vertex(std::move(nd), out);
      origin.push_back(from);
      return v;
    }
    /// A copy of `base` with the next free id. New vertices take the ids after the largest; past
    /// 2^63 - 1 they would wrap onto existing ids.
    node fresh(const node& base, std::string name, std::int64_t bytes, double cost) {
      node nd = base;
      if (next_id == std::numeric_limits<std::int64_t>::max())
        throw graph_error("rewrite_identities: the new nodes need ids above the largest id " + std::to_string(max_id) +
                          ", beyond 2^63 - 1: renumber the graph's node ids");
      nd.id = ++next_id;
      nd.name = std::move(name);
      nd.bytes = bytes;
      nd.cost = cost;
      return nd;
    }
  };

  /// How a match splits bytes and costs: in proportion to the bytes of the concat's inputs.
  struct match_shares {
    std::vector<std::int64_t> weights;
    long double sum = 0;

    [[nodiscard]] std::size_t parts() const noexcept { return weights.size(); }
    [[nodiscard]] double share(double cost, std::size_t i) const {
      return sum > 0 ? static_cast<double>(static_cast<long double>(cost) * static_cast<long double>(weights[i]) / sum)
                     : cost / static_cast<double>(weights.size());
    }
  };

  /// The matches of this pass, in topological order of their concats, skipping any that shares a
  /// vertex with an earlier one; marks their vertices in `taken`.
  [[nodiscard]] std::vector<match> disjoint_matches(std::vector<char>& taken) const {
    std::vector<match> matches;
    const memory_graph mg = make_memory_graph(g_, "rewrite_identities");
    for (auto c : mg.topological_order()) {
      match m;
      if (!try_match(c, m)) continue;
      bool clash = taken[c] != 0;
      for (auto v : m.tree) clash = clash || taken[v];
      for (auto [v, k] : m.leaves) clash = clash || taken[v];
      if (clash) continue;
      taken[c] = 1;
      for (auto v : m.tree) taken[v] = 1;
      for (auto [v, k] : m.leaves) taken[v] = 1;
      matches.push_back(std::move(m));
    }
    return matches;
  }

  [[nodiscard]] std::int64_t largest_id() const {
    std::int64_t max_id = std::numeric_limits<std::int64_t>::min();
    for (std::size_t v = 0; v < num_vertices(g_); ++v) max_id = std::max(max_id, g_[v].id);
    return max_id;
  }

  void copy_untouched_vertices(rewrite_pass_state& s, const std::vector<char>& taken) const {
    for (std::size_t v = 0; v < num_vertices(g_); ++v)
      if (!taken[v]) s.rep[v] = {s.add(g_[v], v)};
  }

  /// The new vertices a part i of a node whose input is `parent` reads: the concat's i-th input, or
  /// the i-th replica of a tree node.
  [[nodiscard]] static std::vector<std::size_t> partial_inputs(const rewrite_pass_state& s, const match& m, std::size_t parent, std::size_t i) {
    return parent == m.concat ? s.rep[m.inputs[i]] : std::vector<std::size_t>{s.rep[parent][i]};
  }

  void rewrite_match(rewrite_pass_state& s, const match& m, std::size_t& channel, std::size_t& kernel) const {
    match_shares shares;
    for (auto x : m.inputs) shares.weights.push_back(g_[x].bytes), shares.sum += static_cast<long double>(g_[x].bytes);
    for (auto t : m.tree) split_elementwise(s, m, shares, t);
    std::size_t kernel_leaves = 0;
    for (auto [f, kind] : m.leaves) kernel_leaves += kind == leaf_kind::kernel;
    for (auto [f, kind] : m.leaves) {
      if (kind == leaf_kind::channel) {
        split_channel_wise(s, m, shares, f);
        ++channel;
      } else {
        split_kernel_wise(s, m, shares, f, kernel_leaves);
        ++kernel;
      }
    }
  }

  /// Elementwise tree node t becomes one replica per concat input.
  void split_elementwise(rewrite_pass_state& s, const match& m, const match_shares& shares, std::size_t t) const {
    const std::size_t parent = only_pred(t);
    const auto bytes = split_bytes(g_[t].bytes, shares.weights);
    std::vector<std::size_t> replicas;
    for (std::size_t i = 0; i < shares.parts(); ++i) {
      const std::size_t r = s.add(s.fresh(g_[t], g_[t].name + ".part" + std::to_string(i), bytes[i], shares.share(g_[t].cost, i)), t);
      for (auto p : partial_inputs(s, m, parent, i)) s.edges.emplace_back(p, r);
      replicas.push_back(r);
    }
    s.rep[t] = std::move(replicas);
  }

  /// Dense conv f becomes partial convs: p_1 allocates the output; p_2..p_k accumulate into it
  /// (0 bytes) and read p_1 so that it stays resident; consumers of the conv read p_k (for the
  /// order) and p_1 (the buffer).
  void split_channel_wise(rewrite_pass_state& s, const match& m, const match_shares& shares, std::size_t f) const {
    const std::size_t parent = only_pred(f), k = shares.parts();
    const node& fn = g_[f];
    std::vector<std::size_t> p;
    for (std::size_t i = 0; i < k; ++i) {
      node nd = s.fresh(fn, fn.name + ".part" + std::to_string(i), i == 0 ? fn.bytes : 0, shares.share(fn.cost, i));
      nd.op = "partial_conv2d";
      p.push_back(s.add(std::move(nd), f));
      for (auto in : partial_inputs(s, m, parent, i)) s.edges.emplace_back(in, p.back());
      if (i > 0) s.edges.emplace_back(p[i - 1], p[i]), s.edges.emplace_back(p[0], p[i]);
    }
    s.rep[f] = k > 1 ? std::vector<std::size_t>{p.front(), p.back()} : std::vector<std::size_t>{p.front()};
  }

  /// Depthwise conv (or pool) f becomes one part per concat input followed by a new concat that
  /// holds f's output and takes a share of the removed concat's cost.
  void split_kernel_wise(rewrite_pass_state& s, const match& m, const match_shares& shares, std::size_t f, std::size_t kernel_leaves) const {
    const std::size_t parent = only_pred(f);
    const node& fn = g_[f];
    const auto bytes = split_bytes(fn.bytes, shares.weights);
    node cat = s.fresh(g_[m.concat], fn.name + ".concat", fn.bytes, kernel_leaves > 0 ? g_[m.concat].cost / static_cast<double>(kernel_leaves) : 0.0);
    std::vector<std::size_t> d;
    for (std::size_t i = 0; i < shares.parts(); ++i) {
      d.push_back(s.add(s.fresh(fn, fn.name + ".part" + std::to_string(i), bytes[i], shares.share(fn.cost, i)), f));
      for (auto in : partial_inputs(s, m, parent, i)) s.edges.emplace_back(in, d.back());
    }
    const std::size_t cv = s.add(std::move(cat), f);
    for (auto part : d) s.edges.emplace_back(part, cv);
    s.rep[f] = {cv};
  }

  /// Edges of the untouched part: each kept consumer reads every vertex representing its input.
  /// Then all edges go into the graph, sorted and without duplicates.
  void add_untouched_edges(rewrite_pass_state& s, const std::vector<char>& taken) const {
    for (auto [e, end] = boost::edges(g_); e != end; ++e) {
      const std::size_t u = source(*e, g_), v = target(*e, g_);
      if (taken[v]) continue;
      for (auto r : s.rep[u]) s.edges.emplace_back(r, s.rep[v].front());
    }
    std::sort(s.edges.begin(), s.edges.end());
    s.edges.erase(std::unique(s.edges.begin(), s.edges.end()), s.edges.end());
    for (auto [u, v] : s.edges) add_edge(u, v, s.out);
  }

  /// The new graph's bundle: the old one without its order, with outputs mapped to the vertices
  /// representing them.
  void map_outputs(rewrite_pass_state& s) const {
    auto& info = s.out[boost::graph_bundle];
    info = g_[boost::graph_bundle];
    info.order.clear();
    std::vector<std::size_t> outs;
    if (info.outputs) {
      for (auto v : *info.outputs)
        for (auto r : s.rep[v]) outs.push_back(r);
      std::sort(outs.begin(), outs.end());
      outs.erase(std::unique(outs.begin(), outs.end()), outs.end());
    } else {
      // Default outputs were the sinks; keep exactly the vertices representing them.
      for (std::size_t v = 0; v < num_vertices(g_); ++v)
        if (out_degree(v, g_) == 0)
          for (auto r : s.rep[v]) outs.push_back(r);
      std::sort(outs.begin(), outs.end());
    }
    info.outputs = std::move(outs);
  }

  const dataflow_graph& g_;
  const identity_rewrite_options& o_;
};

}  // namespace detail

/// Serenity's identity graph rewriting. A concat node c (op `concat`, >= 2 inputs x_1..x_k taken in
/// vertex-index order, not a graph output, not `backward`) is rewritten when every path out of it
/// leads, through zero or more per-channel elementwise nodes (is_channel_elementwise_op; only with
/// through_elementwise), to a convolution, where every node after c has c's path as its only input
/// and each elementwise node has consumers and is not an output. Then c disappears and:
/// - each elementwise node e on the way becomes k partials e_i (on x_i's share);
/// - a dense conv f (is_dense_conv; channel_wise) becomes partial convs p_1..p_k (op
///   `partial_conv2d`): p_i reads the i-th partial input; p_1 allocates bytes(f), p_2..p_k have 0
///   bytes and read p_{i-1} and p_1: they accumulate in place into p_1's buffer. Consumers of f read
///   p_k and p_1, so the buffer lives until they have run. Memory while p_i runs: x_i + bytes(f)
///   (plus the rest), i.e. channel-wise partitioning turns sum(x_i) + y into max_i(x_i) + y.
/// - a depthwise conv f (is_depthwise_conv; kernel_wise; or a maxpool2d / avgpool2d with
///   pooling_is_kernel_wise) becomes d_1..d_k (same op) followed by a new `concat` holding f's output.
/// Bytes and costs of split nodes are split in proportion to bytes(x_i) (bytes rounded so that the
/// parts sum exactly); the removed concat's cost is shared by the new concats (dropped when there
/// are none). Workspaces are copied to every part. Kept nodes keep their ids; new nodes get ids
/// above the maximum. Kernel-wise rewrites create concats that may match again: passes repeat until
/// nothing matches or max_passes. The result's `order` is empty; outputs are mapped (a rewritten
/// output conv is represented by p_1 and p_k). When nothing matches the graph is returned unchanged.
/// O(passes * (n + m) log m). Throws what make_memory_graph throws for an invalid graph (cycle_error,
/// graph_error); graph_error when the new nodes' ids would pass 2^63 - 1.
[[nodiscard]] inline identity_rewrite_result rewrite_identities(const dataflow_graph& g, const identity_rewrite_options& options = {}) {
  identity_rewrite_result result;
  (void)make_memory_graph(g, "rewrite_identities");  // validate
  result.graph = g;
  result.original.resize(num_vertices(g));
  for (std::size_t v = 0; v < result.original.size(); ++v) result.original[v] = v;
  for (std::size_t pass = 0; pass < options.max_passes; ++pass) {
    dataflow_graph next;
    std::vector<std::size_t> origin;
    detail::identity_rewriter rw(result.graph, options);
    if (!rw.pass(next, origin, result.concat_conv_rewrites, result.concat_depthwise_rewrites, result.concats_removed)) break;
    std::vector<std::size_t> composed(origin.size());
    for (std::size_t v = 0; v < origin.size(); ++v) composed[v] = result.original[origin[v]];
    result.original = std::move(composed);
    result.graph = std::move(next);
    ++result.passes;
  }
  return result;
}

/// Maps an order of `rewrite.graph` (e.g. serenity_order of the rewritten graph) back to an order of
/// `original`, the graph rewrite_identities was given: each original node runs at the position of
/// its last rewritten part; nodes with no part (removed concats) run as soon as their inputs have
/// run. A priority topological sort by those positions keeps the result a valid order of
/// `original` (ties by vertex index). Its peak is the original graph's, not the rewritten one's.
/// Complexity: O((n + m) log n + n') for n' rewritten vertices.
/// Throws: std::invalid_argument naming the function when `rewritten_order` is not a permutation
/// of the rewritten graph's vertices or `rewrite.original` does not match `original`; what
/// make_memory_graph throws for an invalid `original`.
[[nodiscard]] inline std::vector<std::size_t> original_order(const identity_rewrite_result& rewrite, const dataflow_graph& original,
                                                             std::span<const std::size_t> rewritten_order) {
  const std::size_t n = num_vertices(original), rn = num_vertices(rewrite.graph);
  if (rewrite.original.size() != rn)
    throw std::invalid_argument("original_order: the rewrite maps " + std::to_string(rewrite.original.size()) +
                                " vertices, its graph has " + std::to_string(rn));
  if (rewritten_order.size() != rn)
    throw std::invalid_argument("original_order: the order has " + std::to_string(rewritten_order.size()) +
                                " vertices, the rewritten graph " + std::to_string(rn));
  // Priority of each original node: 1 + the position of its last part; 0 (first among the ready
  // nodes) for a node without parts.
  std::vector<std::size_t> key(n, 0);
  std::vector<char> seen(rn, 0);
  for (std::size_t k = 0; k < rn; ++k) {
    const std::size_t v = rewritten_order[k];
    if (v >= rn || seen[v]) throw std::invalid_argument("original_order: the order repeats or exceeds vertex " + std::to_string(v));
    seen[v] = 1;
    const std::size_t orig = rewrite.original[v];
    if (orig >= n)
      throw std::invalid_argument("original_order: rewritten vertex " + std::to_string(v) + " maps to " + std::to_string(orig) +
                                  ", beyond the original graph's " + std::to_string(n) + " vertices");
    key[orig] = k + 1;
  }
  const memory_graph g = make_memory_graph(original, "original_order");
  using item = std::pair<std::size_t, std::size_t>;
  std::priority_queue<item, std::vector<item>, std::greater<>> ready;
  std::vector<std::size_t> indegree(n), order;
  order.reserve(n);
  for (std::size_t v = 0; v < n; ++v)
    if ((indegree[v] = g.in_degree(v)) == 0) ready.emplace(key[v], v);
  while (!ready.empty()) {
    const std::size_t v = ready.top().second;
    ready.pop();
    order.push_back(v);
    for (auto w : g.successors(v))
      if (--indegree[w] == 0) ready.emplace(key[w], w);
  }
  return order;
}

}  // namespace memsched
