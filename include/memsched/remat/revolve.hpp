#pragma once
// Griewank and Walther's binomial checkpointing (revolve; Griewank 1992, Griewank & Walther, ACM
// TOMS 2000): the offline schedule that reverses a chain of l steps with s snapshots using the
// fewest forward steps, its closed form, and plans on training graphs.
//
// The schedule is an action sequence over states 0..l (state i is the value after step i):
// `advance` k steps, `takeshot` (store the current state in a snapshot slot), `restore` (make a
// stored state current), `firsturn` / `youturn` (run step i+1 from state i and then its adjoint).
// The number of forward steps (the steps of all advances; the step inside a turn is not counted)
// is t(l, s) = r*l - C(s+r, r-1), r the smallest integer with C(s+r, s) >= l.
//
// On a training graph, the chain is the sequence of forward articulation points a_0..a_l (on a
// chain training graph: every forward node); step i computes the forward nodes between a_{i-1}
// (exclusive) and a_i (inclusive), the adjoint of step i the backward nodes that read them.

#include <memsched/core/errors.hpp>
#include <memsched/remat/checkpoint_generalizations.hpp>
#include <memsched/remat/checkpoint_plan.hpp>
#include <memsched/remat/heuristic_options.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace memsched {

/// The kinds of revolve actions.
enum class revolve_op : unsigned char { advance, takeshot, restore, firsturn, youturn };

/// "advance", "takeshot", "restore", "firsturn", "youturn". O(1), never throws.
[[nodiscard]] constexpr std::string_view to_string(revolve_op op) noexcept {
  switch (op) {
    case revolve_op::advance: return "advance";
    case revolve_op::takeshot: return "takeshot";
    case revolve_op::restore: return "restore";
    case revolve_op::firsturn: return "firsturn";
    case revolve_op::youturn: return "youturn";
  }
  return "";
}

/// One action. `state`: the state reached (advance), stored (takeshot), made current (restore) or
/// turned from (a turn from state i reverses step i+1). `steps`: steps of an advance. `snapshot`:
/// the slot of a takeshot or restore (0..s-1).
struct revolve_action {
  revolve_op op = revolve_op::advance;
  std::size_t state = 0;
  std::size_t steps = 0;
  std::size_t snapshot = 0;
  friend bool operator==(const revolve_action&, const revolve_action&) = default;
};

/// A revolve schedule and its number of forward steps.
struct [[nodiscard]] revolve_schedule {
  std::vector<revolve_action> actions;
  std::uint64_t forward_steps = 0;  ///< Sum of the advances' steps; equals revolve_forward_steps(l, s).
};

namespace detail {

inline constexpr std::uint64_t binomial_cap = std::uint64_t{1} << 62;

/// C(n, k), saturated at binomial_cap.
inline std::uint64_t binomial(std::uint64_t n, std::uint64_t k) {
  if (k > n) return 0;
  k = std::min(k, n - k);
  std::uint64_t r = 1;  // C(n - k + i, i) after step i; the partial values only grow
  for (std::uint64_t i = 1; i <= k; ++i) {
    const std::uint64_t d = std::gcd(r, i);
    std::uint64_t next = 0;
    if (__builtin_mul_overflow(r / d, (n - k + i) / (i / d), &next) || next >= binomial_cap) return binomial_cap;
    r = next;
  }
  return r;
}

/// The smallest r with C(s + r, s) >= l (s >= 1).
inline std::uint64_t revolve_repetitions(std::uint64_t l, std::uint64_t s) {
  std::uint64_t r = 0;
  while (binomial(s + r, s) < l) ++r;
  return r;
}

/// The steps from the start state to the first snapshot of an optimal schedule for (l, s), s >= 2,
/// l >= 2: max(1, C(s + r - 2, s), l - C(s - 1 + r, s - 1)), the smallest optimal split (checked
/// against the dynamic program m + t(l - m, s - 1) + t(m, s) = t(l, s) in the tests).
inline std::uint64_t revolve_split(std::uint64_t l, std::uint64_t s) {
  const std::uint64_t r = revolve_repetitions(l, s);
  const std::uint64_t a = r >= 2 ? binomial(s + r - 2, s) : 0;
  const std::uint64_t rest = binomial(s - 1 + r, s - 1);
  const std::uint64_t b = l > rest ? l - rest : 0;
  return std::min<std::uint64_t>(std::max<std::uint64_t>({1, a, b}), l - 1);
}

/// Generates the schedule, calling vis.advance(from, to), vis.takeshot(slot, state),
/// vis.restore(slot, state), vis.turn(state, first), vis.release(slot, state) (a snapshot that is
/// no longer needed; not an action of the classical algorithm).
/// The classical algorithm recurses once per snapshot; s reaches l + 1, so the frames live on an
/// explicit stack (a call stack overflows near 60,000 snapshots).
template <class Visitor>
void revolve_generate(std::size_t start, std::size_t end, std::size_t s, std::size_t slot, bool& first, Visitor& vis) {
  // Invariant of each frame: the current state is `start`, stored in `slot`; [start, end) is left
  // to reverse with s snapshots (slots slot..slot+s-1).
  struct frame {
    std::size_t start, end, s, slot;
  };
  std::vector<frame> stack{{start, end, s, slot}};
  while (!stack.empty()) {
    const frame f = stack.back();
    const std::size_t l = f.end > f.start ? f.end - f.start : 0;
    if (l == 1) {
      vis.turn(f.start, first);
      first = false;
      stack.back().end = f.start;
      continue;
    }
    if (l > 1 && f.s == 1) {
      for (std::size_t j = f.end; j > f.start; --j) {
        if (j != f.end) vis.restore(f.slot, f.start);
        if (j - 1 > f.start) vis.advance(f.start, j - 1);
        vis.turn(j - 1, first);
        first = false;
      }
      stack.back().end = f.start;
      continue;
    }
    if (l > 1) {
      // Reverse [m, end) with one snapshot fewer first, then [start, m) from the restored start.
      const std::size_t m = f.start + static_cast<std::size_t>(revolve_split(l, f.s));
      vis.advance(f.start, m);
      vis.takeshot(f.slot + 1, m);
      stack.push_back({m, f.end, f.s - 1, f.slot + 1});
      continue;
    }
    stack.pop_back();
    if (stack.empty()) break;
    frame& parent = stack.back();
    vis.release(f.slot, f.start);
    vis.restore(parent.slot, parent.start);
    parent.end = f.start;
  }
}

}  // namespace detail

/// t(l, s): the least number of forward steps that reverses a chain of l steps with s snapshots
/// (one of them holds the initial state): r*l - C(s+r, r-1), r the smallest integer with
/// C(s+r, s) >= l. O(r * s). Throws std::invalid_argument when s == 0 and l > 0.
[[nodiscard]] inline std::uint64_t revolve_forward_steps(std::uint64_t l, std::uint64_t s) {
  if (l == 0) return 0;
  if (s == 0) throw std::invalid_argument("revolve_forward_steps: s must be at least 1");
  const std::uint64_t r = detail::revolve_repetitions(l, s);
  return r * l - (r == 0 ? 0 : detail::binomial(s + r, r - 1));
}

/// The binomial (revolve) schedule for l steps and s snapshots: takeshot of state 0, then the
/// recursive optimal schedule (advance to the first snapshot point, reverse the rest with s - 1
/// snapshots, restore, reverse the first part with s). Its forward_steps equals
/// revolve_forward_steps(l, s). O(number of actions) = O(l * r). Throws std::invalid_argument when
/// s == 0 and l > 0.
[[nodiscard]] inline revolve_schedule revolve_actions(std::size_t l, std::size_t s) {
  if (l > 0 && s == 0) throw std::invalid_argument("revolve_actions: s must be at least 1");
  struct collector {
    revolve_schedule out;
    void advance(std::size_t from, std::size_t to) {
      out.actions.push_back({revolve_op::advance, to, to - from, 0});
      out.forward_steps += to - from;
    }
    void takeshot(std::size_t slot, std::size_t state) { out.actions.push_back({revolve_op::takeshot, state, 0, slot}); }
    void restore(std::size_t slot, std::size_t state) { out.actions.push_back({revolve_op::restore, state, 0, slot}); }
    void turn(std::size_t state, bool first) {
      out.actions.push_back({first ? revolve_op::firsturn : revolve_op::youturn, state, 0, 0});
    }
    void release(std::size_t, std::size_t) {}
  } c;
  if (l == 0) return c.out;
  c.takeshot(0, 0);
  bool first = true;
  detail::revolve_generate(0, l, s, 0, first, c);
  return std::move(c.out);
}

namespace detail {

/// Builds the compute sequence of revolve with s snapshots over the chain of `boundaries`.
class revolve_engine {
 public:
  revolve_engine(const memory_graph& g, const std::vector<char>& fwd, const training_split& split,
                 const std::vector<std::size_t>& boundaries)
      : g_(g), split_(split), boundary_(boundaries), seq_(g) {
    const std::size_t l = boundaries.empty() ? 0 : boundaries.size() - 1;
    segment_.assign(l + 1, {});
    std::vector<std::uint32_t> seg_of(g.size(), 0);
    std::size_t cur = 0;
    for (auto v : split.forward_order) {
      seg_of[v] = static_cast<std::uint32_t>(cur);
      segment_[cur].push_back(v);
      if (cur < l && v == boundaries[cur]) ++cur;
    }
    constexpr std::uint32_t any = std::numeric_limits<std::uint32_t>::max();
    key_.assign(g.size(), any);
    for (auto b : split.backward_order) {
      std::uint32_t k = 0;
      bool reads_forward = false;
      for (auto p : g.predecessors(b))
        if (fwd[p]) {
          k = std::max(k, seg_of[p]);
          reads_forward = true;
        }
      key_[b] = reads_forward ? k : any;
    }
    snap_.assign(l + 1, 0);
  }

  std::vector<std::size_t> run(std::size_t s) {
    const std::size_t l = segment_.size() - 1;
    seq_.sequence.clear();
    seq_.sequence.reserve(2 * g_.size());
    compute_segment(0);
    if (l > 0) {
      takeshot(0, 0);
      bool first = true;
      revolve_generate(0, l, s, 0, first, *this);
    }
    while (next_ < split_.backward_order.size()) seq_.ensure(split_.backward_order[next_++]);
    return std::move(seq_.sequence);
  }

  // Visitor interface of revolve_generate.
  void advance(std::size_t from, std::size_t to) {
    for (std::size_t j = from + 1; j <= to; ++j) {
      compute_segment(j);
      drop_segment(j - 1, snap_[j - 1] != 0);
    }
  }
  void takeshot(std::size_t, std::size_t state) { snap_[state] = 1; }
  void release(std::size_t, std::size_t state) { snap_[state] = 0; }  // dropped by the turn that reads it
  void restore(std::size_t, std::size_t) {}
  void turn(std::size_t i, bool) {
    compute_segment(i + 1);
    while (next_ < split_.backward_order.size()) {
      const auto b = split_.backward_order[next_];
      if (key_[b] < i + 1) break;
      seq_.ensure(b);
      ++next_;
    }
    // a_i stays: the next turn reads it as the output of the step it reverses.
    drop_segment(i + 1, false);
  }

 private:
  void compute_segment(std::size_t j) {
    for (auto v : segment_[j]) seq_.ensure(v);
  }
  void drop_segment(std::size_t j, bool keep_boundary) {
    for (auto v : segment_[j])
      if (!(keep_boundary && v == boundary_[j]) && !g_.is_output(v)) seq_.drop(v);
  }

  const memory_graph& g_;
  const training_split& split_;
  std::vector<std::size_t> boundary_;
  compute_sequencer seq_;
  std::vector<std::vector<std::uint32_t>> segment_;
  std::vector<std::uint32_t> key_;
  std::vector<char> snap_;
  std::size_t next_ = 0;
};

/// Snapshot count search: the largest s (fewest recomputations) whose plan fits the budget,
/// among s with t(l, s) <= max_factor * l; or the given number of snapshots.
inline remat_result revolve_strategy(const memory_graph& g, const std::vector<char>& fwd, const training_split& split,
                                     std::int64_t budget, const revolve_options& options, std::chrono::steady_clock::time_point start) {
  const auto boundaries = forward_articulation_points(g, fwd, split);
  const std::size_t l = boundaries.empty() ? 0 : boundaries.size() - 1;
  auto sequence = [&](std::size_t s) {
    revolve_engine e(g, fwd, split, boundaries);
    return e.run(std::max<std::size_t>(s, 1));
  };
  auto finish = [&](std::size_t s, bool spare) {
    remat_result r = finish_strategy_plan(g, sequence(s), budget, spare && options.use_spare_memory, start);
    r.stats.snapshots = s;
    return r;
  };
  if (options.snapshots || l <= 1) return finish(options.snapshots.value_or(1), true);
  const std::uint64_t cap = static_cast<std::uint64_t>(std::max<std::size_t>(options.max_revolve_factor, 1)) * l;
  // Smallest s with t(l, s) <= cap (t is non-increasing in s; s = l gives l - 1).
  std::size_t lo = 1, hi = l;
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (revolve_forward_steps(l, mid) <= cap) hi = mid;
    else lo = mid + 1;
  }
  const std::size_t s_min = lo, s_max = l + 1;
  auto fits = [&](std::size_t s, std::pair<std::int64_t, double>& pc) {
    const auto seq = sequence(s);
    pc = sequence_peak_cost(g, seq);
    return pc.first <= budget;
  };
  std::pair<std::int64_t, double> pc;
  if (!fits(s_min, pc)) return finish(s_min, false);
  std::size_t good = s_min;
  if (fits(s_max, pc)) {
    good = s_max;
  } else {
    std::size_t a = s_min, b = s_max;  // fits(a), !fits(b)
    while (b - a > 1) {
      const std::size_t mid = a + (b - a) / 2;
      if (fits(mid, pc)) a = mid;
      else b = mid;
    }
    good = a;
  }
  return finish(good, true);
}

}  // namespace detail

/// Throws: option_error naming snapshots when it is 0 (nullopt searches it). Every
/// max_revolve_factor is valid (0 counts as 1).
inline void check_revolve_options(const revolve_options& options) {
  if (options.snapshots && *options.snapshots == 0) throw option_error("revolve_plan", "snapshots", "must be at least 1");
}

/// Revolve on a training graph: binomial checkpointing over the chain of forward articulation
/// points (exact on chain training graphs, Checkmate's AP generalization elsewhere). With
/// options.snapshots = s (>= 1) the plan for s snapshots; without, the largest s (the least
/// recomputation) whose plan fits `budget` (peak assumed non-decreasing in s), among s with
/// t(l, s) <= options.max_revolve_factor * l; stats.snapshots is the s of the returned plan.
/// `no_solution` when even the fewest snapshots tried exceed the budget (`infeasible` when the
/// budget is below what every plan needs). A turn keeps the state it starts from for the next turn
/// (which reads it as the output of the step it reverses), so the turns recompute nothing on a
/// chain: the plan recomputes t(l, s) - l + 1 forward nodes of a chain, and none with s = l + 1.
/// Complexity: O(log l * (n + m + t(l, s))) after the O((n + m) log n) conversion.
/// Throws: what check_revolve_options throws (before any work); graph_error when a forward node
/// reads a backward node; what make_memory_graph throws.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] remat_result revolve_plan(const G& graph, std::int64_t budget, const revolve_options& options, const Maps&... maps) {
  check_revolve_options(options);
  const auto start = std::chrono::steady_clock::now();
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  const auto in = detail::prepare_strategy(g, detail::forward_mask(g), "revolve_plan");
  return detail::revolve_strategy(g, in.forward, in.split, budget, options, start);
}

/// revolve_plan with default options (the snapshot search).
template <class G>
  requires memory_graph_source<G>
[[nodiscard]] remat_result revolve_plan(const G& graph, std::int64_t budget) {
  return revolve_plan(graph, budget, revolve_options{});
}

}  // namespace memsched
