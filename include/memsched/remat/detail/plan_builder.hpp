#pragma once
// The machinery every rematerialization heuristic shares: splitting a training graph into its
// forward and backward phases, building a compute sequence that recomputes missing inputs on
// demand, measuring a sequence without building its plan, relaxing it into spare memory, and
// turning it into a simulated remat_result.

#include <memsched/core/errors.hpp>
#include <memsched/core/status.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/remat/detail/max_tree.hpp>
#include <memsched/remat/detail/simulated_result.hpp>
#include <memsched/remat/remat_result.hpp>
#include <memsched/sim/execution_plan.hpp>
#include <memsched/sim/memory_model.hpp>
#include <memsched/sim/plan_from_computes.hpp>
#include <memsched/sim/simulate_plan.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace memsched {

/// A budget that every plan meets (for "no limit").
inline constexpr std::int64_t unlimited_budget = std::numeric_limits<std::int64_t>::max();

namespace detail {

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

/// Peak and cost of the plan plan_from_computes would build for `seq`, without building it: the
/// one memory model (sim/memory_model.hpp) along the sequence.
/// O(len + sum of in-degrees). Precondition: seq is a valid compute sequence.
inline std::pair<std::int64_t, double> sequence_peak_cost(const memory_graph& g, std::span<const std::size_t> seq) {
  std::int64_t peak = 0;
  for (const memory_step& s : simulate_sequence(g, seq)) peak = std::max(peak, s.transient);
  double cost = 0;
  for (auto v : seq) cost += g.cost(v);
  return {peak, cost};
}

/// Skips recomputations of a valid compute sequence while the peak of its plan (frees at last
/// use) stays within `budget`: a recomputation of v is dropped when keeping v's previous value
/// from its last use up to the recomputation fits; recomputations that then have no reader are
/// dropped too. Candidates by decreasing cost (then position). The memory estimate never
/// under-estimates, so the result is within budget when the input was (in-place outputs: a value
/// kept past its last reader may have lent that reader its buffer, so the reader's own bytes are
/// added back at that position). O(L log L + sum of in-degrees) for a sequence of length L.
inline std::vector<std::size_t> use_spare_memory(const memory_graph& g, const std::vector<std::size_t>& seq, std::int64_t budget) {
  const std::size_t len = seq.size();
  if (len == 0) return seq;
  constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> prev(len, none), current(g.size(), none), last_use(len, none), uses(len, 0), parent(len),
      read_offset(len + 1, 0);
  std::vector<std::uint32_t> reads;
  std::vector<char> alive(len, 1);
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
    current[v] = static_cast<std::uint32_t>(k);
    parent[k] = static_cast<std::uint32_t>(k);
  }
  // Transient memory at each position: the memory model along the sequence.
  std::vector<std::int64_t> transient(len, 0);
  {
    const auto steps = simulate_sequence(g, seq);
    for (std::size_t k = 0; k < len; ++k) transient[k] = steps[k].transient;
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
    // Kept alive, p's value no longer dies at its last reader f: if that reader took over its
    // buffer in place, it now needs room for its own output.
    const bool lost_reuse = uses[k] > 0 && f != p && memory_model::may_reuse(g, seq[f], v);
    if (lost_reuse && tree.max(f, f) + g.bytes(seq[f]) > budget) continue;
    if (uses[k] > 0 && f + 1 < k) {
      if (tree.max(f + 1, k - 1) + g.bytes(v) > budget) continue;
      tree.add(f + 1, k - 1, g.bytes(v));
    }
    if (lost_reuse) tree.add(f, f, g.bytes(seq[f]));
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

/// Why no plan of `g` can fit `budget`, or nullopt: every vertex runs once with its inputs resident
/// (bytes + workspace + input bytes; without bytes when it may reuse an input's buffer in place:
/// memory_model::min_running_bytes), and the outputs are resident at the end. O(n + m).
inline std::optional<std::string> budget_below_lower_bound(const memory_graph& g, std::int64_t budget) {
  for (std::size_t v = 0; v < g.size(); ++v) {
    const std::int64_t need = memory_model::min_running_bytes(g, v);
    if (need > budget)
      return g.label(v) + " needs " + std::to_string(need) + " bytes with its inputs, more than the budget " + std::to_string(budget);
  }
  std::int64_t outs = 0;
  for (auto o : g.outputs()) outs += g.bytes(o);
  if (outs > budget) return "the outputs alone need " + std::to_string(outs) + " bytes";
  return std::nullopt;
}

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Marks `r` (a heuristic's answer that does not fit) as no_solution, or as infeasible when the
/// budget is below what every plan needs; clears the plan, keeps peak and cost.
inline void mark_over_budget(const memory_graph& g, std::int64_t budget, remat_result& r) {
  r.plan.steps.clear();
  if (auto why = budget_below_lower_bound(g, budget)) {
    r.status = solve_status::infeasible;
    r.message = *why;
  } else {
    r.status = solve_status::no_solution;
    r.message = "the plan's peak " + std::to_string(r.peak_bytes) + " exceeds the budget " + std::to_string(budget);
  }
}

/// Turns a compute sequence into a simulated result: feasible when the peak is within the budget,
/// otherwise see mark_over_budget.
inline remat_result finish_plan(const memory_graph& g, std::span<const std::size_t> seq, std::int64_t budget,
                                std::chrono::steady_clock::time_point start) {
  remat_result r;
  r.plan = plan_from_computes(g, seq);
  const plan_simulation sim = simulate_plan(g, r.plan);
  take_simulated_figures(r, sim);
  r.status = solve_status::feasible;
  if (sim.peak_bytes > budget) mark_over_budget(g, budget, r);
  r.stats.seconds = seconds_since(start);
  return r;
}

/// finish_plan after use_spare_memory, when `spare` is set and the budget is finite.
inline remat_result finish_strategy_plan(const memory_graph& g, std::vector<std::size_t> seq, std::int64_t budget, bool spare,
                                         std::chrono::steady_clock::time_point start) {
  if (spare && budget != unlimited_budget && sequence_peak_cost(g, seq).first <= budget) seq = use_spare_memory(g, seq, budget);
  return finish_plan(g, seq, budget, start);
}

/// A result for "this strategy does not apply to this graph".
inline remat_result unsupported_result(std::chrono::steady_clock::time_point start, std::string why) {
  remat_result r;
  r.status = solve_status::unsupported;
  r.message = std::move(why);
  r.stats.seconds = seconds_since(start);
  return r;
}

/// The compute sequence of the two-phase plan for checkpoint set `keep` (keep[v] != 0).
inline std::vector<std::size_t> checkpoint_sequence(const memory_graph& g, const training_split& split, const std::vector<char>& keep) {
  compute_sequencer seq(g);
  seq.sequence.reserve(g.size() + g.size() / 2);
  for (auto v : split.forward_order) seq.ensure(v);
  for (auto v : split.forward_order)
    if (!keep[v] && !g.is_output(v)) seq.drop(v);
  for (auto b : split.backward_order) seq.ensure(b);
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

/// Shared prologue of the strategies: the forward mask and the split.
struct strategy_input {
  std::vector<char> forward;
  training_split split;
};
inline strategy_input prepare_strategy(const memory_graph& g, std::vector<char> fwd, std::string_view context) {
  strategy_input in{std::move(fwd), {}};
  in.split = split_training(g, in.forward, context);
  return in;
}

}  // namespace detail
}  // namespace memsched
