#pragma once
// The cheapest execution plan of a training graph that respects a checkpoint set (Checkmate's
// "optimal R for a given S"), the checkpoint-all baseline, and the pieces every rematerialization
// heuristic shares: which vertices are forward nodes, the options, and turning a sequence of
// computations into a simulated remat_result.
//
// Model. A training graph's vertices are split into forward nodes and backward nodes (gradients,
// the loss). No forward node may read a backward node. A plan for checkpoint set S (forward
// vertices) runs in two phases:
//   1. forward phase: every forward vertex once, in topological order; a forward value that is not
//      in S (and not a graph output) is freed after its last forward consumer;
//   2. backward phase: every backward vertex once, in topological order; a forward value it reads
//      that is not resident is recomputed just before, together with the non-resident forward
//      values that value needs (recursively), in topological order. Recomputed values stay until
//      their last use, so each is recomputed at most once.
// Every tensor is freed right after its last use. Forward graph outputs are always kept.
// A graph without backward nodes (an inference graph) has only the forward phase: every strategy
// then returns the plain topological-order plan (overhead 0), since nothing is read after the
// forward pass.

#include <memsched/core/errors.hpp>
#include <memsched/core/status.hpp>
#include <memsched/graph/dataflow_graph.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/graph/node_maps.hpp>
#include <memsched/remat/remat_result.hpp>
#include <memsched/sim/execution_plan.hpp>
#include <memsched/sim/plan_from_computes.hpp>
#include <memsched/sim/simulate_plan.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace memsched {

/// A budget that every plan meets (for "no limit").
inline constexpr std::int64_t unlimited_budget = std::numeric_limits<std::int64_t>::max();

/// Options shared by every rematerialization heuristic (plain aggregate).
struct remat_heuristic_options {
  /// forward[v] != 0 marks vertex index v as a forward node. Empty: taken from the node bundles
  /// when the graph has them (see is_forward_node), otherwise every vertex is forward.
  std::vector<char> forward;
  /// Budgets b tried by the Chen greedy budget search (geometric grid between the smallest and
  /// the total forward size, plus b = 0).
  std::size_t greedy_budgets = 24;
  /// Revolve never builds a schedule with more than this many forward steps per chain step
  /// (t(l, s) <= max_revolve_factor * l); fewer snapshots than that count as infeasible.
  std::size_t max_revolve_factor = 32;
  /// Use the memory the budget leaves spare: after a strategy has built its plan, skip
  /// recomputations (keep the earlier value instead) as long as the peak stays within the budget,
  /// most expensive first. Applies only with a finite budget (not unlimited_budget), so a strategy
  /// without a budget returns its own plan.
  bool use_spare_memory = true;
};

/// The default rule for memsched::node bundles: a node is a forward node unless it is marked
/// `backward`, has a `grad_of`, or is the loss (op "loss"). O(1), never throws.
[[nodiscard]] inline bool is_forward_node(const node& n) noexcept {
  return n.role == node_role::forward;
}

/// forward[v] for every vertex index v of a graph with memsched::node bundles, using the given
/// index map (use this overload for listS graphs). O(n). Throws graph_error on a bad index.
template <class G, class IndexMap>
  requires detail::has_node_bundle<G>
[[nodiscard]] std::vector<char> forward_vertices(const G& g, IndexMap index) {
  const auto n = static_cast<std::size_t>(num_vertices(g));
  std::vector<char> fwd(n, 1);
  for (auto [it, end] = vertices(g); it != end; ++it) {
    const auto i = static_cast<std::size_t>(get(index, *it));
    if (i >= n) throw graph_error("forward_vertices: vertex index " + std::to_string(i) + " is not below " + std::to_string(n));
    fwd[i] = is_forward_node(g[*it]) ? 1 : 0;
  }
  return fwd;
}

/// forward[v] for a graph with memsched::node bundles and a built-in vertex index. O(n).
template <class G>
  requires detail::has_node_bundle<G> && detail::has_vertex_index<G>
[[nodiscard]] std::vector<char> forward_vertices(const G& g) {
  return forward_vertices(g, get(boost::vertex_index, g));
}

namespace detail {

/// The forward mask for `graph` as an algorithm sees it: options.forward, else the node bundles,
/// else every vertex.
template <class G, class... Maps>
std::vector<char> resolve_forward(const G& graph, const memory_graph& g, const std::vector<char>& given,
                                  std::string_view context, const Maps&... maps) {
  if (!given.empty()) {
    if (given.size() != g.size())
      throw graph_error(std::string(context) + ": options.forward has " + std::to_string(given.size()) + " entries for " +
                        std::to_string(g.size()) + " vertices");
    return given;
  }
  if constexpr (std::is_same_v<G, memory_graph>) {
    return std::vector<char>(g.size(), 1);
  } else if constexpr (has_node_bundle<G>) {
    if constexpr (sizeof...(Maps) == 0) {
      return forward_vertices(graph);
    } else {
      return forward_vertices(graph, (maps.index, ...));
    }
  } else {
    return std::vector<char>(g.size(), 1);
  }
}

/// The forward and backward vertices, each in topological order.
struct training_split {
  std::vector<std::uint32_t> forward_order;
  std::vector<std::uint32_t> backward_order;
};

/// Splits the topological order; throws graph_error when a forward node reads a backward node.
inline training_split split_training(const memory_graph& g, const std::vector<char>& fwd, std::string_view context) {
  training_split s;
  for (auto v : g.topological_order()) {
    if (fwd[v]) {
      for (auto p : g.predecessors(v))
        if (!fwd[p])
          throw graph_error(std::string(context) + ": forward " + g.label(v) + " reads backward " + g.label(p) +
                            "; forward nodes must not depend on backward nodes");
      s.forward_order.push_back(v);
    } else {
      s.backward_order.push_back(v);
    }
  }
  return s;
}

/// Builds a compute sequence, recomputing missing inputs on demand (iteratively, no recursion).
class compute_sequencer {
 public:
  explicit compute_sequencer(const memory_graph& g) : g_(g), available_(g.size(), 0) {}

  /// Appends v after every non-available predecessor (recursively), in topological order.
  void ensure(std::size_t v) {
    if (available_[v]) return;
    stack_.clear();
    stack_.emplace_back(static_cast<std::uint32_t>(v), 0u);
    while (!stack_.empty()) {
      auto& [u, next] = stack_.back();
      const auto preds = g_.predecessors(u);
      bool pushed = false;
      while (next < preds.size()) {
        const auto p = preds[next++];
        if (!available_[p]) {
          stack_.emplace_back(p, 0u);
          pushed = true;
          break;
        }
      }
      if (pushed) continue;
      const auto done = u;
      stack_.pop_back();
      if (!available_[done]) {  // a diamond may have computed it already
        sequence.push_back(done);
        available_[done] = 1;
      }
    }
  }
  void drop(std::size_t v) { available_[v] = 0; }
  [[nodiscard]] bool available(std::size_t v) const { return available_[v] != 0; }

  std::vector<std::size_t> sequence;

 private:
  const memory_graph& g_;
  std::vector<char> available_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> stack_;
};

/// Peak and cost of the plan plan_from_computes would build for `seq`, without building it.
/// O(len + sum of in-degrees). Precondition: seq is a valid compute sequence.
inline std::pair<std::int64_t, double> sequence_peak_cost(const memory_graph& g, std::span<const std::size_t> seq) {
  const std::size_t len = seq.size();
  constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> last_use(len, none), current(g.size(), none), free_count(len + 1, 0);
  std::vector<char> superseded(len, 0);
  for (std::size_t k = 0; k < len; ++k) {
    const std::size_t v = seq[k];
    for (auto p : g.predecessors(v))
      if (current[p] != none) last_use[current[p]] = static_cast<std::uint32_t>(k);
    if (current[v] != none) superseded[current[v]] = 1;
    current[v] = static_cast<std::uint32_t>(k);
  }
  // freed_bytes[k]: bytes freed right after position k.
  std::vector<std::int64_t> freed_bytes(len, 0);
  for (std::size_t k = 0; k < len; ++k) {
    const std::size_t v = seq[k];
    if (!superseded[k] && g.is_output(v)) continue;
    freed_bytes[last_use[k] == none ? k : last_use[k]] += g.bytes(v);
  }
  std::int64_t live = 0, peak = 0;
  double cost = 0;
  for (std::size_t k = 0; k < len; ++k) {
    const std::size_t v = seq[k];
    peak = std::max(peak, live + g.bytes(v) + g.workspace(v));
    live += g.bytes(v) - freed_bytes[k];
    cost += g.cost(v);
  }
  return {peak, cost};
}

/// Range add / range max / point assign over positions (a lazy segment tree).
class max_tree {
 public:
  explicit max_tree(const std::vector<std::int64_t>& values) : n_(std::max<std::size_t>(values.size(), 1)) {
    size_ = 1;
    while (size_ < n_) size_ *= 2;
    max_.assign(2 * size_, lowest);
    add_.assign(2 * size_, 0);
    for (std::size_t i = 0; i < values.size(); ++i) max_[size_ + i] = values[i];
    for (std::size_t i = size_; i-- > 1;) max_[i] = std::max(max_[2 * i], max_[2 * i + 1]);
  }
  [[nodiscard]] std::int64_t max(std::size_t lo, std::size_t hi) { return query(1, 0, size_ - 1, lo, hi); }
  void add(std::size_t lo, std::size_t hi, std::int64_t d) { update(1, 0, size_ - 1, lo, hi, d); }
  void erase(std::size_t pos) { assign(1, 0, size_ - 1, pos); }

  static constexpr std::int64_t lowest = std::numeric_limits<std::int64_t>::min() / 4;

 private:
  std::int64_t query(std::size_t node, std::size_t l, std::size_t r, std::size_t lo, std::size_t hi) {
    if (hi < l || r < lo) return lowest;
    if (lo <= l && r <= hi) return max_[node];
    const std::size_t mid = (l + r) / 2;
    return add_[node] + std::max(query(2 * node, l, mid, lo, hi), query(2 * node + 1, mid + 1, r, lo, hi));
  }
  void update(std::size_t node, std::size_t l, std::size_t r, std::size_t lo, std::size_t hi, std::int64_t d) {
    if (hi < l || r < lo) return;
    if (lo <= l && r <= hi) {
      max_[node] += d;
      add_[node] += d;
      return;
    }
    const std::size_t mid = (l + r) / 2;
    update(2 * node, l, mid, lo, hi, d);
    update(2 * node + 1, mid + 1, r, lo, hi, d);
    max_[node] = add_[node] + std::max(max_[2 * node], max_[2 * node + 1]);
  }
  void assign(std::size_t node, std::size_t l, std::size_t r, std::size_t pos) {
    if (l == r) {
      max_[node] = lowest;
      add_[node] = 0;
      return;
    }
    const std::size_t mid = (l + r) / 2;
    if (pos <= mid) assign(2 * node, l, mid, pos);
    else assign(2 * node + 1, mid + 1, r, pos);
    max_[node] = add_[node] + std::max(max_[2 * node], max_[2 * node + 1]);
  }
  std::size_t n_, size_ = 1;
  std::vector<std::int64_t> max_, add_;
};

/// Skips recomputations of a valid compute sequence while the peak of its plan (frees at last
/// use) stays within `budget`: a recomputation of v is dropped when keeping v's previous value
/// from its last use up to the recomputation fits; recomputations that then have no reader are
/// dropped too. Candidates by decreasing cost (then position). The memory estimate never
/// under-estimates, so the result is within budget when the input was. O(L log L + sum of
/// in-degrees) for a sequence of length L.
inline std::vector<std::size_t> use_spare_memory(const memory_graph& g, const std::vector<std::size_t>& seq, std::int64_t budget) {
  const std::size_t len = seq.size();
  if (len == 0) return seq;
  constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> prev(len, none), current(g.size(), none), last_use(len, none), uses(len, 0), parent(len),
      read_offset(len + 1, 0);
  std::vector<std::uint32_t> reads;
  std::vector<char> superseded(len, 0), alive(len, 1);
  for (std::size_t k = 0; k < len; ++k) {
    const std::size_t v = seq[k];
    for (auto p : g.predecessors(v)) {
      const auto r = current[p];  // valid sequence: every input has an instance
      reads.push_back(r);
      last_use[r] = static_cast<std::uint32_t>(k);
      ++uses[r];
    }
    read_offset[k + 1] = static_cast<std::uint32_t>(reads.size());
    prev[k] = current[v];
    if (current[v] != none) superseded[current[v]] = 1;
    current[v] = static_cast<std::uint32_t>(k);
    parent[k] = static_cast<std::uint32_t>(k);
  }
  // Transient memory at each position, as sequence_peak_cost computes it.
  std::vector<std::int64_t> freed(len, 0), transient(len, 0);
  for (std::size_t k = 0; k < len; ++k) {
    if (!superseded[k] && g.is_output(seq[k])) continue;
    freed[last_use[k] == none ? k : last_use[k]] += g.bytes(seq[k]);
  }
  std::int64_t live = 0;
  for (std::size_t k = 0; k < len; ++k) {
    transient[k] = live + g.bytes(seq[k]) + g.workspace(seq[k]);
    live += g.bytes(seq[k]) - freed[k];
  }
  max_tree tree(transient);
  auto find = [&](std::uint32_t x) {
    while (parent[x] != x) {
      parent[x] = parent[parent[x]];
      x = parent[x];
    }
    return x;
  };
  auto removable = [&](std::size_t k) { return prev[k] != none && !g.is_output(seq[k]); };
  std::vector<std::uint32_t> candidates;
  for (std::size_t k = 0; k < len; ++k)
    if (removable(k)) candidates.push_back(static_cast<std::uint32_t>(k));
  std::stable_sort(candidates.begin(), candidates.end(), [&](auto a, auto b) { return g.cost(seq[a]) > g.cost(seq[b]); });
  std::vector<std::uint32_t> unread;
  auto release_reads = [&](std::uint32_t k) {
    unread.assign(1, k);
    while (!unread.empty()) {
      const auto x = unread.back();
      unread.pop_back();
      for (auto i = read_offset[x]; i < read_offset[x + 1]; ++i) {
        const auto r = find(reads[i]);
        if (--uses[r] == 0 && alive[r] && removable(r)) {
          alive[r] = 0;
          tree.erase(r);
          parent[r] = find(prev[r]);
          unread.push_back(r);
        }
      }
    }
  };
  for (const auto k : candidates) {
    if (!alive[k]) continue;
    const std::size_t v = seq[k];
    const auto p = find(prev[k]);
    const std::size_t f = last_use[p] == none ? p : std::max<std::size_t>(p, last_use[p]);
    if (uses[k] > 0 && f + 1 < k) {
      if (tree.max(f + 1, k - 1) + g.bytes(v) > budget) continue;
      tree.add(f + 1, k - 1, g.bytes(v));
    }
    alive[k] = 0;
    tree.erase(k);
    parent[k] = p;
    uses[p] += uses[k];
    if (last_use[k] != none && (last_use[p] == none || last_use[k] > last_use[p])) last_use[p] = last_use[k];
    release_reads(k);
  }
  std::vector<std::size_t> out;
  out.reserve(len);
  for (std::size_t k = 0; k < len; ++k)
    if (alive[k]) out.push_back(seq[k]);
  return out;
}

/// Turns a compute sequence into a simulated result; infeasible (empty plan, but peak and cost
/// filled in) when the peak exceeds the budget.
inline remat_result finish_plan(const memory_graph& g, std::span<const std::size_t> seq, std::int64_t budget,
                                std::chrono::steady_clock::time_point start) {
  remat_result r;
  r.plan = plan_from_computes(g, seq);
  const plan_simulation sim = simulate_plan(g, r.plan);
  r.peak_bytes = sim.peak_bytes;
  r.total_cost = sim.total_cost;
  r.overhead = sim.overhead;
  r.status = sim.peak_bytes <= budget ? solve_status::feasible : solve_status::infeasible;
  if (r.status == solve_status::infeasible) r.plan.steps.clear();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

/// finish_plan after use_spare_memory, when the options ask for it and the budget is finite.
inline remat_result finish_strategy_plan(const memory_graph& g, std::vector<std::size_t> seq, std::int64_t budget,
                                         const remat_heuristic_options& options, std::chrono::steady_clock::time_point start) {
  if (options.use_spare_memory && budget != unlimited_budget && sequence_peak_cost(g, seq).first <= budget)
    seq = use_spare_memory(g, seq, budget);
  return finish_plan(g, seq, budget, start);
}

/// A result for "this strategy does not apply to this graph".
inline remat_result unsupported_result(std::chrono::steady_clock::time_point start) {
  remat_result r;
  r.status = solve_status::unsupported;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

/// The compute sequence of the two-phase plan for checkpoint set `keep` (keep[v] != 0).
inline std::vector<std::size_t> checkpoint_sequence(const memory_graph& g, const std::vector<char>& fwd,
                                                    const training_split& split, const std::vector<char>& keep) {
  compute_sequencer seq(g);
  seq.sequence.reserve(g.size() + g.size() / 2);
  for (auto v : split.forward_order) seq.ensure(v);
  for (auto v : split.forward_order)
    if (!keep[v] && !g.is_output(v)) seq.drop(v);
  for (auto b : split.backward_order) seq.ensure(b);
  (void)fwd;
  return std::move(seq.sequence);
}

/// Checkpoint set from a list of vertices, validated.
inline std::vector<char> checkpoint_mask(const memory_graph& g, const std::vector<char>& fwd,
                                         std::span<const std::size_t> checkpoints, std::string_view context) {
  std::vector<char> keep(g.size(), 0);
  for (std::size_t i = 0; i < checkpoints.size(); ++i) {
    const std::size_t v = checkpoints[i];
    if (v >= g.size())
      throw graph_error(std::string(context) + ": checkpoint " + std::to_string(i) + " (" + std::to_string(v) + ") is not a vertex");
    if (!fwd[v]) throw graph_error(std::string(context) + ": checkpoint " + g.label(v) + " is not a forward node");
    keep[v] = 1;
  }
  return keep;
}

}  // namespace detail

/// The cheapest plan that respects checkpoint set `checkpoints` (forward vertex indices): the
/// two-phase plan described at the top of this header. Its cost is minimal among plans whose
/// forward phase keeps exactly the checkpoints (and forward outputs) for the backward phase: each
/// non-checkpoint forward value that the backward phase needs, directly or to recompute another,
/// is recomputed exactly once. Status `feasible` when the simulated peak is within `budget`,
/// else `infeasible` (empty plan; peak and cost still describe it). O((n + m) log n) for the
/// conversion, then O(n + m) for the plan. Throws graph_error when a checkpoint is not a forward
/// vertex, a forward node reads a backward node, or options.forward has the wrong size; what
/// make_memory_graph throws for a bad graph.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] remat_result checkpoint_plan(const G& graph, std::span<const std::size_t> checkpoints, std::int64_t budget,
                                           const remat_heuristic_options& options, const Maps&... maps) {
  const auto start = std::chrono::steady_clock::now();
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  const auto fwd = detail::resolve_forward(graph, g, options.forward, "checkpoint_plan", maps...);
  const auto split = detail::split_training(g, fwd, "checkpoint_plan");
  const auto keep = detail::checkpoint_mask(g, fwd, checkpoints, "checkpoint_plan");
  const auto seq = detail::checkpoint_sequence(g, fwd, split, keep);
  return detail::finish_plan(g, seq, budget, start);
}

/// checkpoint_plan with default options and no budget.
template <class G>
  requires memory_graph_source<G>
[[nodiscard]] remat_result checkpoint_plan(const G& graph, std::span<const std::size_t> checkpoints) {
  return checkpoint_plan(graph, checkpoints, unlimited_budget, remat_heuristic_options{});
}

/// Checkpoint all: every forward value is kept for the backward phase, nothing is recomputed
/// (overhead exactly 0). Its peak is the "no-remat peak" every budget is measured against.
/// `infeasible` when that peak exceeds `budget`. O((n + m) log n). Throws as checkpoint_plan.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] remat_result checkpoint_all_plan(const G& graph, std::int64_t budget, const remat_heuristic_options& options,
                                               const Maps&... maps) {
  const auto start = std::chrono::steady_clock::now();
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  const auto fwd = detail::resolve_forward(graph, g, options.forward, "checkpoint_all_plan", maps...);
  const auto split = detail::split_training(g, fwd, "checkpoint_all_plan");
  const auto seq = detail::checkpoint_sequence(g, fwd, split, fwd);
  return detail::finish_plan(g, seq, budget, start);
}

/// checkpoint_all_plan with default options and no budget.
template <class G>
  requires memory_graph_source<G>
[[nodiscard]] remat_result checkpoint_all_plan(const G& graph) {
  return checkpoint_all_plan(graph, unlimited_budget, remat_heuristic_options{});
}

}  // namespace memsched
