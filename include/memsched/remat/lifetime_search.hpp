#pragma once
// Lifetime search: a native (solver-free) rematerialization engine along a fixed order, in
// Moccasin's representation (Bartan et al., "Moccasin: Efficient Tensor Rematerialization for
// Neural Networks", ICML 2023): every vertex has one or more lives [s, e] along the order, the
// first starting at its own position, the others at recomputations. A constructive repair splits
// lives over over-budget slots (every applied split strictly reduces the over-budget bytes, so it
// cannot thrash as DTR does), a cleanup merges lives back while the budget allows, and a seeded
// large-neighbourhood search undoes and redoes the splits of windows of slots, then of sets of
// recomputed vertices when the windows stall. docs/lifetime_search.md.

#include <memsched/core/config.hpp>
#include <memsched/core/errors.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/remat/cost_lower_bound.hpp>
#include <memsched/remat/detail/call_deadline.hpp>
#include <memsched/remat/detail/plan_builder.hpp>
#include <memsched/remat/remat_result.hpp>
#include <memsched/sim/execution_plan.hpp>
#include <memsched/sim/simulate_order.hpp>
#include <memsched/solver/solver_options.hpp>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace memsched {

/// Options of lifetime_search_plan (plain aggregate).
struct lifetime_search_options {
  /// The order (vertex indices, a topological order). Empty: the graph's topological order.
  std::vector<std::size_t> order;
  /// time_limit (wall clock, whole call) and observer (on_incumbent for each cheaper plan); the
  /// other fields are ignored.
  solver_options solver;
  /// Counted limit on the large-neighbourhood search's rounds (0: constructive plan and cleanup only).
  std::size_t max_rounds = 200;
  /// Rounds in a row without a cheaper plan after which the window neighbourhood hands over to
  /// the vertex neighbourhood, and after which that one stops the search (0: only max_rounds and
  /// the time limit stop it). Improvements come early: on 8 shared graphs and budgets, 40 cost at
  /// most 0.05 points of overhead against 0 and ran 3-15x faster (docs/lifetime_search.md).
  std::size_t max_stall_rounds = 40;
  /// Seed of the search's tie-breaking (std::mt19937_64).
  std::uint64_t seed = 0;
  /// How deep a split may recompute inputs that are not alive where it recomputes (0: only extend
  /// their lives). The constructive repair runs at this depth, then at depths 0, 1, 2, 4, ...
  /// below it, each with one and then two split points per gap; the cheapest plan after cleanup
  /// starts the search (ties: the earlier), which splits at this depth.
  std::size_t max_recompute_depth = 2;
  /// Plans to start from (DTR's or a heuristic's along the same order, say), besides the
  /// constructive repair's. Each whose first computations follow the order becomes lives
  /// (detail::lifetime_state_from_plan), is repaired where its slot memory is over the budget and
  /// cleaned up; the search starts from the cheapest of these states and its own repair's (ties:
  /// the plans first; stats.start_source: "plan k", "repair" (at max_recompute_depth), "repair
  /// at depth d", each possibly followed by " with two split points"). With a time limit and a start in hand, the
  /// first repair gets at most half the time left and each later one a quarter. Plans that do not follow the
  /// order are skipped.
  std::vector<execution_plan> start_plans;
};

namespace detail {

/// The lives of every vertex along an order, with the slot memory they imply, changed through
/// journaled moves. A vertex's lives are given by its START slots (its own position first, then
/// its recomputations) and its DEMAND slots (its consumers' positions, the slots where a consumer
/// is recomputed, the last slot for an output): the life starting at s ends at the last demand
/// before the next start (s itself when there is none), so every demand is covered by
/// construction and only memory can be violated. Slot memory: the largest, over the slot's
/// computations (its recomputations by position, then its own op), of the bytes resident then
/// (lives covering the slot, less those not yet computed in it or already freed after their last
/// reader in it) plus the step's workspace and output: what the simulator sees for the plan
/// built from these lives, except that in-place reuse is ignored (an upper bound then). State:
/// O(n + m + total lives); a move costs O(n + the in-degrees of the slots it touches).
class lifetime_state {
 public:
  using slot = std::uint32_t;

  lifetime_state(const memory_graph& g, const std::vector<std::size_t>& order, std::int64_t budget)
      : g_(&g), n_(g.size()), budget_(budget), order_(order), pos_(n_), starts_(n_), demands_(n_), recs_(n_),
        bytes_(n_, 0), inner_(n_, 0), last_read_(n_, none), step_of_(n_, none), stale_(n_, 0) {
    for (std::size_t k = 0; k < n_; ++k) pos_[order[k]] = static_cast<slot>(k);
    for (std::size_t v = 0; v < n_; ++v) {
      starts_[v].push_back(pos_[v]);
      for (auto u : g.successors(v)) demands_[v].push_back(pos_[u]);
      if (g.is_output(v)) demands_[v].push_back(static_cast<slot>(n_ - 1));
      std::sort(demands_[v].begin(), demands_[v].end());
    }
    // A difference array: summing each life slot by slot is O(n^2) on a long chain's training
    // graph (forward values live until their gradients), seconds before the first deadline check.
    std::vector<std::int64_t> diff(n_ + 1, 0);
    for (std::size_t v = 0; v < n_; ++v) {
      diff[pos_[v]] += g.bytes(v);
      diff[life_end(v, 0) + 1] -= g.bytes(v);
    }
    std::int64_t running = 0;
    for (std::size_t p = 0; p < n_; ++p) bytes_[p] = running += diff[p];
    for (std::size_t p = 0; p < n_; ++p) inner_[p] = slot_correction(static_cast<slot>(p));
    for (std::size_t p = 0; p < n_; ++p) over_ += excess(p);
  }

  [[nodiscard]] std::size_t size() const noexcept { return n_; }
  /// Sum over slots of bytes above the budget.
  [[nodiscard]] std::int64_t over() const {
    settle();
    return over_;
  }
  [[nodiscard]] double extra_cost() const noexcept { return extra_cost_; }  ///< Cost of the recomputations.
  [[nodiscard]] std::size_t recomputations() const noexcept { return recomputations_; }
  [[nodiscard]] std::int64_t memory(std::size_t p) const {
    settle();
    return bytes_[p] + inner_[p];
  }
  [[nodiscard]] slot pos(std::size_t v) const noexcept { return pos_[v]; }
  [[nodiscard]] const std::vector<slot>& starts(std::size_t v) const noexcept { return starts_[v]; }
  [[nodiscard]] const std::vector<slot>& demands(std::size_t v) const noexcept { return demands_[v]; }

  /// Index of the life of v covering region slot s (the last start <= s). Precondition: s >= pos(v).
  [[nodiscard]] std::size_t life_of(std::size_t v, slot s) const {
    const auto& st = starts_[v];
    return static_cast<std::size_t>(std::upper_bound(st.begin(), st.end(), s) - st.begin()) - 1;
  }
  /// End of life i of v: the last demand before the next start, at least its start.
  [[nodiscard]] slot life_end(std::size_t v, std::size_t i) const {
    const auto& st = starts_[v];
    const slot s = st[i];
    const slot next = i + 1 < st.size() ? st[i + 1] : static_cast<slot>(n_);
    const auto& d = demands_[v];
    auto it = std::lower_bound(d.begin(), d.end(), next);
    if (it == d.begin()) return s;
    --it;
    return std::max(s, *it);
  }
  /// Whether v is alive at slot s without any change (a life covers it).
  [[nodiscard]] bool alive_at(std::size_t v, slot s) const { return s >= pos_[v] && life_end(v, life_of(v, s)) >= s; }
  [[nodiscard]] bool has_start(std::size_t v, slot s) const {
    return std::binary_search(starts_[v].begin(), starts_[v].end(), s);
  }

  /// Adds start s > pos(v) to v (a recomputation there). Every add_start(v, s) must be followed
  /// by add_demand(x, s) for each input x of v (unrecompute removes both). O(n).
  void add_start(std::size_t v, slot s) {
    auto& st = starts_[v];
    const std::size_t i = life_of(v, s);
    const std::pair<slot, slot> old_iv[2] = {{st[i], life_end(v, i)}, empty_iv};
    st.insert(st.begin() + static_cast<std::ptrdiff_t>(i + 1), s);
    const std::pair<slot, slot> new_iv[2] = {{st[i], life_end(v, i)}, {s, life_end(v, i + 1)}};
    recover(v, old_iv, new_iv);
    recs_[s].push_back(static_cast<std::uint32_t>(v));
    refresh({s, old_iv[0].second, new_iv[0].second, new_iv[1].second});
    extra_cost_ += g_->cost(v);
    ++recomputations_;
    if (recording_) journal_.push_back({op_kind::add_start, static_cast<std::uint32_t>(v), s});
  }
  /// Adds demand slot d >= pos(v) to v (extending the life covering d when it ended before). O(n).
  void add_demand(std::size_t v, slot d) {
    const std::size_t i = life_of(v, d);
    const slot e = life_end(v, i);
    auto& dm = demands_[v];
    dm.insert(std::upper_bound(dm.begin(), dm.end(), d), d);
    if (d > e && g_->bytes(v) != 0) add_bytes(e + 1, d, g_->bytes(v));
    refresh({d, e, std::max(d, e), d});
    if (recording_) journal_.push_back({op_kind::add_demand, static_cast<std::uint32_t>(v), d});
  }
  /// Drops v's recomputation at s and then every input recomputation left without any demand in
  /// its life (recursively).
  /// Depth-first with an explicit stack (a chain of recomputations at s is as long as the split
  /// depth allows, up to the graph's depth).
  void unrecompute(std::size_t v, slot s) {
    std::vector<std::pair<std::size_t, std::size_t>> stack;  // (vertex, next input)
    remove_start(v, s);
    stack.emplace_back(v, 0);
    while (!stack.empty()) {
      auto& [u, next] = stack.back();
      const auto inputs = g_->predecessors(u);
      if (next == inputs.size()) {
        stack.pop_back();
        continue;
      }
      const std::size_t x = inputs[next++];
      remove_demand(x, s);
      if (has_start(x, s) && s != pos_[x] && useless(x, s)) {
        remove_start(x, s);
        stack.emplace_back(x, 0);
      }
    }
  }
  /// Whether the life of v starting at s has no demand.
  [[nodiscard]] bool useless(std::size_t v, slot s) const {
    const std::size_t i = life_of(v, s);
    const slot next = i + 1 < starts_[v].size() ? starts_[v][i + 1] : static_cast<slot>(n_);
    const auto& d = demands_[v];
    const auto it = std::lower_bound(d.begin(), d.end(), s);
    return it == d.end() || *it >= next;
  }

  /// Journal position, to undo back to it.
  /// The memory is settled at a mark, so that undo can restore it without computing it again.
  [[nodiscard]] std::size_t mark() const {
    settle();
    return journal_.size();
  }
  /// Undoes the moves back to `to`, a mark() taken since the last commit().
  void undo(std::size_t to) {
    assert(to <= journal_.size());  // a commit in between would leave moves that undo cannot see
    recording_ = false;
    while (journal_.size() > to) {
      const op o = journal_.back();
      journal_.pop_back();
      switch (o.kind) {
        case op_kind::add_start: remove_start(o.v, o.s); break;
        case op_kind::remove_start: add_start(o.v, o.s); break;
        case op_kind::add_demand: remove_demand(o.v, o.s); break;
        case op_kind::remove_demand: add_demand(o.v, o.s); break;
        case op_kind::set_inner: set_inner(o.s, o.old_inner); break;
      }
    }
    recording_ = true;
    // Back at a mark, where every correction was settled: those the moves marked are as then.
    for (slot p : stale_slots_) stale_[p] = 0;
    stale_slots_.clear();
  }
  /// Forgets the journal (the moves so far are kept).
  void commit() noexcept { journal_.clear(); }

  /// The compute sequence: slot by slot, the slot's recomputations by position, then its own op.
  [[nodiscard]] std::vector<std::size_t> sequence() const {
    std::vector<std::size_t> seq;
    seq.reserve(n_ + recomputations_);
    std::vector<std::uint32_t> r;
    for (std::size_t p = 0; p < n_; ++p) {
      r = recs_[p];
      std::sort(r.begin(), r.end(), [&](auto a, auto b) { return pos_[a] < pos_[b]; });
      for (auto v : r) seq.push_back(v);
      seq.push_back(order_[p]);
    }
    return seq;
  }

 private:
  // set_inner: a settled correction of slot s, old_inner the one it replaced.
  enum class op_kind : std::uint8_t { add_start, remove_start, add_demand, remove_demand, set_inner };
  struct op {
    op_kind kind;
    std::uint32_t v;
    slot s;
    std::int64_t old_inner = 0;
  };

  [[nodiscard]] std::int64_t excess(std::size_t p) const noexcept { return std::max<std::int64_t>(0, bytes_[p] + inner_[p] - budget_); }
  void add_bytes(slot lo, slot hi, std::int64_t b) {  // [lo, hi]
    for (slot p = lo; p <= hi; ++p) {
      over_ -= excess(p);
      bytes_[p] += b;
      over_ += excess(p);
    }
  }
  static constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();

  // What slot p needs beyond the bytes of the lives covering it: the largest, over the slot's
  // computations (its recomputations by position, then its own op), of the step's workspace
  // minus the bytes not yet computed in the slot (lives starting at p) or already freed in it
  // (lives ending at p, freed after their last reader in the slot, as plan_from_computes does).
  // O(computations in the slot * in-degree).
  std::int64_t slot_correction(slot p) const {
    // The slot's own op alone: every value it touches is alive throughout its one step.
    if (recs_[p].empty()) return g_->workspace(order_[p]);
    steps_.assign(recs_[p].begin(), recs_[p].end());
    std::sort(steps_.begin(), steps_.end(), [&](auto a, auto b) { return pos_[a] < pos_[b]; });
    steps_.push_back(static_cast<std::uint32_t>(order_[p]));
    const auto last = static_cast<std::uint32_t>(steps_.size() - 1);
    for (std::uint32_t k = 0; k <= last; ++k) {
      step_of_[steps_[k]] = k;
      for (auto x : g_->predecessors(steps_[k])) last_read_[x] = k;
    }
    // Boundary values: (bytes, first step alive, last step alive).
    bounds_.clear();
    auto ends_here = [&](std::size_t x) {
      return life_end(x, life_of(x, p)) == p && !(g_->is_output(x) && p + 1 == n_);
    };
    for (std::uint32_t k = 0; k <= last; ++k) {
      const std::uint32_t w = steps_[k];
      const std::uint32_t to = !ends_here(w) ? last : (last_read_[w] == none ? k : last_read_[w]);
      bounds_.push_back({g_->bytes(w), k, std::max(k, to)});
    }
    for (std::uint32_t k = 0; k <= last; ++k)
      for (auto x : g_->predecessors(steps_[k])) {
        if (step_of_[x] != none || last_read_[x] != k || !ends_here(x)) continue;  // once per value, at its last reader
        bounds_.push_back({g_->bytes(x), 0, k});
      }
    // Step k misses the bytes of the values alive outside it: all of them less those whose
    // interval covers k (a difference array over the steps, so a slot of k computations costs
    // O(k + in-degrees), not O(k^2): DTR's plans recompute hundreds of values in one slot).
    std::int64_t total = 0;
    covered_.assign(last + 2, 0);
    for (const auto& b : bounds_) {
      total += b.bytes;
      covered_[b.from] += b.bytes;
      covered_[b.to + 1] -= b.bytes;
    }
    std::int64_t corr = std::numeric_limits<std::int64_t>::min(), cover = 0;
    for (std::uint32_t k = 0; k <= last; ++k) {
      cover += covered_[k];
      corr = std::max(corr, g_->workspace(steps_[k]) - (total - cover));
    }
    for (auto w : steps_) {
      step_of_[w] = none;
      for (auto x : g_->predecessors(w)) last_read_[x] = none;
    }
    return corr;
  }
  // A move marks the slots whose correction it may change; settle() computes each once when the
  // memory is next read (a split touches its slot many times, and a slot full of recomputations
  // costs O(its computations) to correct).
  void refresh(std::initializer_list<slot> ps) {
    for (slot p : ps)
      if (p < n_ && !stale_[p]) {
        stale_[p] = 1;
        stale_slots_.push_back(p);
      }
  }
  void settle() const {
    for (slot p : stale_slots_) {
      stale_[p] = 0;
      const std::int64_t c = slot_correction(p);
      if (c == inner_[p]) continue;
      if (recording_) journal_.push_back({op_kind::set_inner, 0, p, inner_[p]});
      set_inner(p, c);
    }
    stale_slots_.clear();
  }
  struct bound {
    std::int64_t bytes;
    std::uint32_t from, to;
  };
  // Scratch of slot_correction, and the lazily settled corrections: the memory a const state
  // reports is brought up to date on reading.
  mutable std::vector<std::uint32_t> steps_;
  mutable std::vector<bound> bounds_;
  mutable std::vector<std::int64_t> covered_;

  void set_inner(slot p, std::int64_t w) const {
    over_ -= excess(p);
    inner_[p] = w;
    over_ += excess(p);
  }
  // Replaces v's coverage of [lo, ...]: old intervals (a, b) by new ones, slot by slot.
  void recover(std::size_t v, const std::pair<slot, slot> (&old_iv)[2], const std::pair<slot, slot> (&new_iv)[2]) {
    const std::int64_t b = g_->bytes(v);
    if (b == 0) return;
    for (const auto& [a, e] : old_iv)
      if (a <= e) add_bytes(a, e, -b);
    for (const auto& [a, e] : new_iv)
      if (a <= e) add_bytes(a, e, b);
  }
  static constexpr std::pair<slot, slot> empty_iv{1, 0};

  void remove_start(std::size_t v, slot s) {
    auto& st = starts_[v];
    const std::size_t i = life_of(v, s);  // st[i] == s, i >= 1
    const std::pair<slot, slot> old_iv[2] = {{st[i - 1], life_end(v, i - 1)}, {s, life_end(v, i)}};
    st.erase(st.begin() + static_cast<std::ptrdiff_t>(i));
    const std::pair<slot, slot> new_iv[2] = {{st[i - 1], life_end(v, i - 1)}, empty_iv};
    recover(v, old_iv, new_iv);
    auto& r = recs_[s];
    r.erase(std::find(r.begin(), r.end(), static_cast<std::uint32_t>(v)));
    refresh({s, old_iv[0].second, old_iv[1].second, new_iv[0].second});
    extra_cost_ -= g_->cost(v);
    --recomputations_;
    if (recording_) journal_.push_back({op_kind::remove_start, static_cast<std::uint32_t>(v), s});
  }
  void remove_demand(std::size_t v, slot d) {
    const std::size_t i = life_of(v, d);
    const slot e = life_end(v, i);
    auto& dm = demands_[v];
    dm.erase(std::lower_bound(dm.begin(), dm.end(), d));
    const slot e2 = life_end(v, i);
    if (e2 < e && g_->bytes(v) != 0) add_bytes(e2 + 1, e, -g_->bytes(v));
    refresh({d, e, e2, d});
    if (recording_) journal_.push_back({op_kind::remove_demand, static_cast<std::uint32_t>(v), d});
  }

  const memory_graph* g_;
  std::size_t n_;
  std::int64_t budget_;
  std::vector<std::size_t> order_;
  std::vector<slot> pos_;
  std::vector<std::vector<slot>> starts_, demands_;  // sorted; demands a multiset
  std::vector<std::vector<std::uint32_t>> recs_;     // per slot: the vertices recomputed there
  std::vector<std::int64_t> bytes_;                      // per slot: lives' bytes
  mutable std::vector<std::int64_t> inner_;              // per slot: slot_correction
  mutable std::vector<std::uint32_t> last_read_, step_of_;  // scratch of slot_correction (none when unused)
  mutable std::vector<char> stale_;                         // per slot: its correction awaits settle()
  mutable std::vector<slot> stale_slots_;
  mutable std::int64_t over_ = 0;
  double extra_cost_ = 0;
  std::size_t recomputations_ = 0;
  mutable std::vector<op> journal_;
  bool recording_ = true;
};

/// The lives of `plan` along `order` (a topological order of g), or nullopt when the plan's first
/// computations are not `order` or it does not compute every vertex. Every later computation of v
/// is a recomputation in slot s, the position of the next first computation (before o_s, where the
/// state places recomputations). After the last first computation, the outputs the plan computes
/// again and what they need join the last slot (lives end there); the rest of that tail is never
/// read. Repeats of v within a slot merge, and recomputations whose life nobody reads are dropped. The cost of the result is at most the
/// plan's. Its slot memory may exceed the budget where the plan ordered computations otherwise
/// (over() says by how much). O(plan length * (n + in-degree)).
MEMSCHED_DECL std::optional<lifetime_state> lifetime_state_from_plan(const memory_graph& g, const std::vector<std::size_t>& order,
                                                                     std::int64_t budget, const execution_plan& plan);

/// The repair, cleanup and large-neighbourhood search on a lifetime_state.
class lifetime_searcher {
 public:
  using slot = lifetime_state::slot;

  /// Where a split may start a new life within a gap of an old one: at the gap's end only, or
  /// also just after the gap's last over-budget slot.
  enum class split_points { gap_end, also_after_last_over };

  /// Splits reach `depth` inputs deep (default: the option's max_recompute_depth).
  lifetime_searcher(const memory_graph& g, std::int64_t budget, const lifetime_search_options& o)
      : lifetime_searcher(g, budget, o, o.max_recompute_depth, split_points::gap_end) {}
  lifetime_searcher(const memory_graph& g, std::int64_t budget, const lifetime_search_options& o, std::size_t depth, split_points points)
      : g_(g), budget_(budget), depth_(depth), points_(points), rng_(o.seed) {
    double total = 0;
    for (std::size_t v = 0; v < g.size(); ++v) total += g.cost(v);
    tiny_cost_ = 1e-9 * (total / static_cast<double>(std::max<std::size_t>(1, g.size())) + 1.0);
  }

  enum class outcome { done, stuck, out_of_time };

  /// Splits lives until no slot is over the budget. A step applies the split with the most
  /// over-budget bytes removed per added cost among those that reduce them; when none does alone,
  /// the best pair of splits that does (the first among the `pair_width` singles that add the
  /// fewest over-budget bytes). `noise` > 0 perturbs scores (LNS). Stops at `deadline`
  /// (out_of_time: the state may still be over the budget).
  outcome repair(lifetime_state& st, double noise, const call_deadline& deadline) {
    std::vector<candidate> stale;  // the last scan's helpful splits, best score last
    while (st.over() > 0) {
      if (deadline.passed()) return outcome::out_of_time;  // a step scans every gap: checking costs nothing
      const std::int64_t before = st.over();
      const double cost0 = st.extra_cost();
      const candidate lazy = pick_stale(st, stale, before, cost0, noise, deadline);
      if (lazy.out_of_time) return outcome::out_of_time;
      if (lazy.score >= 0) {
        if (!apply(st, lazy, deadline)) return outcome::out_of_time;
        continue;
      }
      std::vector<candidate> singles;
      const candidate best = scan(st, before, cost0, noise, &singles, deadline);
      if (best.out_of_time) return outcome::out_of_time;
      if (best.score >= 0) {
        stale.clear();
        for (const candidate& c : singles)
          if (c.score >= 0 && !(c.v == best.v && c.s == best.s)) stale.push_back(c);
        // Best last, so taking the best pops the back; among equal scores the first found is last.
        std::stable_sort(stale.begin(), stale.end(), [](const candidate& a, const candidate& b) { return a.score > b.score; });
        std::reverse(stale.begin(), stale.end());
        if (!apply(st, best, deadline)) return outcome::out_of_time;
        continue;
      }
      // No single split helps: look one split further from the least harmful ones.
      std::stable_sort(singles.begin(), singles.end(), [](const candidate& a, const candidate& b) { return a.over < b.over; });
      if (singles.size() > pair_width) singles.resize(pair_width);
      candidate first, second;
      for (const candidate& c : singles) {
        const std::size_t m = st.mark();
        const bool whole = split(st, c.v, c.s, depth_, deadline);
        const candidate next = whole ? scan(st, before, cost0, noise, nullptr, deadline) : candidate{.out_of_time = true};
        st.undo(m);
        if (next.out_of_time) return outcome::out_of_time;
        if (next.score > second.score) {
          first = c;
          second = next;
        }
      }
      if (second.score < 0) return outcome::stuck;
      const std::size_t m = st.mark();
      if (!split(st, first.v, first.s, depth_, deadline) || !split(st, second.v, second.s, depth_, deadline)) {
        st.undo(m);
        return outcome::out_of_time;
      }
      st.commit();
    }
    return outcome::done;
  }

  /// Drops recomputations (most expensive first) while every slot stays within the budget; stops
  /// at `deadline` (the state stays within the budget).
  void cleanup(lifetime_state& st, const call_deadline& deadline) {
    bool changed = true;
    while (changed && !deadline.passed()) {
      changed = false;
      std::vector<std::pair<std::size_t, slot>> recs;
      for (std::size_t v = 0; v < st.size(); ++v)
        for (std::size_t i = 1; i < st.starts(v).size(); ++i) recs.emplace_back(v, st.starts(v)[i]);
      std::stable_sort(recs.begin(), recs.end(), [&](const auto& a, const auto& b) { return g_.cost(a.first) > g_.cost(b.first); });
      for (const auto& [v, s] : recs) {
        if (deadline.passed()) return;
        if (!st.has_start(v, s)) continue;  // dropped with another one
        const std::size_t m = st.mark();
        st.unrecompute(v, s);
        if (st.over() > 0) {
          st.undo(m);
        } else {
          changed = true;
        }
        st.commit();
      }
    }
  }

  /// Undoes the recomputations starting in [lo, hi).
  static void clear_window(lifetime_state& st, slot lo, slot hi) {
    std::vector<std::pair<std::size_t, slot>> recs;
    for (std::size_t v = 0; v < st.size(); ++v)
      for (std::size_t i = 1; i < st.starts(v).size(); ++i)
        if (st.starts(v)[i] >= lo && st.starts(v)[i] < hi) recs.emplace_back(v, st.starts(v)[i]);
    // Consumers before their inputs: unrecompute drops the inputs' recomputations it leaves unused.
    std::sort(recs.begin(), recs.end(), [&](const auto& a, const auto& b) { return st.pos(a.first) > st.pos(b.first); });
    for (const auto& [v, s] : recs)
      if (st.has_start(v, s)) st.unrecompute(v, s);
    st.commit();
  }
  /// Drops every recomputation of the given vertices (and the input recomputations left unused).
  static void clear_vertices(lifetime_state& st, std::vector<std::size_t> vertices) {
    // Consumers before their inputs, as in clear_window.
    std::sort(vertices.begin(), vertices.end(), [&](std::size_t a, std::size_t b) { return st.pos(a) > st.pos(b); });
    for (const std::size_t v : vertices)
      while (st.starts(v).size() > 1) st.unrecompute(v, st.starts(v).back());
    st.commit();
  }


 private:
  struct candidate {
    double score = -1;
    std::size_t v = 0;
    slot s = 0;
    std::int64_t over = 0;  // over-budget bytes after the split
    bool out_of_time = false;  // the deadline stopped the scan (the rest is not meaningful)
  };
  static constexpr std::size_t pair_width = 16;
  // Stale splits re-tried per step before a full scan: a split's score rarely rises as others
  // apply, so the best of the last scan usually stays the best (lazy greedy).
  static constexpr std::size_t lazy_tries = 8;

  bool apply(lifetime_state& st, const candidate& c, const call_deadline& deadline) {
    const std::size_t m = st.mark();
    if (!split(st, c.v, c.s, depth_, deadline)) {
      st.undo(m);
      return false;
    }
    st.commit();
    return true;
  }

  // Re-scores the best stale splits (dropping those that no longer help); the first whose score
  // is still at least every other stale score is returned, score -1 when none within lazy_tries
  // (the caller scans then).
  candidate pick_stale(lifetime_state& st, std::vector<candidate>& stale, std::int64_t before, double cost0, double noise,
                       const call_deadline& deadline) {
    for (std::size_t tries = 0; tries < lazy_tries && !stale.empty(); ++tries) {
      candidate c = stale.back();
      stale.pop_back();
      if (c.s <= st.pos(c.v) || st.has_start(c.v, c.s)) continue;
      if (deadline.passed()) return candidate{.out_of_time = true};
      const std::size_t m = st.mark();
      if (!split(st, c.v, c.s, depth_, deadline)) {
        st.undo(m);
        return candidate{.out_of_time = true};
      }
      const std::int64_t after = st.over();
      const double added = st.extra_cost() - cost0;
      st.undo(m);
      if (after >= before) continue;
      c.score = static_cast<double>(before - after) / std::max(added, tiny_cost_);
      if (noise > 0) c.score *= 1.0 + noise * unit_(rng_);
      c.over = after;
      if (stale.empty() || c.score >= stale.back().score) return c;
      // Before the splits scoring at least as much: it comes after them in the best-first order.
      stale.insert(std::lower_bound(stale.begin(), stale.end(), c, [](const candidate& a, const candidate& b) { return a.score < b.score; }), c);
    }
    stale.clear();
    return candidate{};
  }

  // The best split reducing the over-budget bytes below `before` (score: bytes removed per cost
  // added since `cost0`), or score -1; every split tried goes to `all` when given. A trial split
  // costs up to O(n) (it rewrites the slots of the lives it changes) and a scan tries up to one
  // per gap, so the deadline is checked before each trial.
  candidate scan(lifetime_state& st, std::int64_t before, double cost0, double noise, std::vector<candidate>* all, const call_deadline& deadline) {
    const std::size_t n = st.size();
    over_prefix_.assign(n + 1, 0);
    for (std::size_t p = 0; p < n; ++p) over_prefix_[p + 1] = over_prefix_[p] + (st.memory(p) > budget_ ? 1 : 0);
    candidate best;
    for (std::size_t v = 0; v < n; ++v) {
      if (g_.bytes(v) == 0) continue;
      const auto& d = st.demands(v);
      const auto& starts = st.starts(v);
      // Gaps of each life: between its start and its first demand, and between consecutive
      // demands; splitting at the gap's end b frees v over (a, b) and in slot b until v is
      // recomputed there. The second split point (split_points::also_after_last_over): just after
      // the gap's last over-budget slot before b, where the inputs that stayed alive through the
      // over-budget slots still are (at b they may have to be kept alive or recomputed), at the
      // price of v's bytes up to b.
      for (std::size_t k = 0, i = 0; k < d.size(); ++k) {
        const slot b = d[k];
        while (i + 1 < starts.size() && starts[i + 1] <= b) ++i;
        const slot a = (k > 0 && d[k - 1] >= starts[i]) ? d[k - 1] : starts[i];
        // Over-budget slots in (a, b]: b itself too, as the new life starts at v's recomputation
        // within slot b, after the slot's earlier steps (the in-slot memory).
        if (b <= a) continue;
        if (over_prefix_[b + 1] - over_prefix_[a + 1] == 0) continue;
        const slot second = points_ == split_points::also_after_last_over ? after_last_over(a, b) : a;
        for (const slot at : {b, second}) {
          if (at <= a) continue;  // no second point: the split at b only
          if (deadline.passed()) {
            best.out_of_time = true;
            return best;
          }
          const std::size_t m = st.mark();
          if (!split(st, v, at, depth_, deadline)) {
            st.undo(m);
            best.out_of_time = true;
            return best;
          }
          const std::int64_t after = st.over();
          const double added = st.extra_cost() - cost0;
          st.undo(m);
          if (after >= before) {
            if (all) all->push_back({-1, v, at, after});
            continue;
          }
          double score = static_cast<double>(before - after) / std::max(added, tiny_cost_);
          if (noise > 0) score *= 1.0 + noise * unit_(rng_);
          if (all) all->push_back({score, v, at, after});
          if (score > best.score) best = {score, v, at, after};  // strict: ties go to the smaller vertex, then slot
        }
      }
    }
    return best;
  }

  // The slot after the last over-budget slot in (a, b) (over_prefix_ as scan fills it), or a when
  // there is none or it is b - 1 (then the split at b is the same).
  slot after_last_over(slot a, slot b) const {
    const auto first = over_prefix_.begin() + a + 1, last = over_prefix_.begin() + b;
    if (*last == *first) return a;
    const auto at = std::lower_bound(first, last + 1, *last);  // the first index with the last count
    const auto s = static_cast<slot>(at - over_prefix_.begin());  // = the last over-budget slot + 1
    return s < b ? s : a;
  }

  // Starts a new life of v at slot s (a demand slot, or a slot inside a gap), then makes each input alive at s: its covering
  // life is extended; when that adds over-budget bytes and depth allows, the input is recomputed
  // at s as well (recursively), kept when that fits where the extension did not, or adds less.
  // Depth-first with an explicit stack: max_recompute_depth may reach the graph's depth, and then
  // one split may recompute much of the graph, so the deadline is checked before each input's
  // recomputation (false: it passed, the split is partly done and the caller undoes it).
  bool split(lifetime_state& st, std::size_t v, slot s, std::size_t depth, const call_deadline& deadline) {
    struct frame {
      std::size_t v, depth, next;
      std::int64_t extended;  // over() after the demand of the input being split (while in_child)
      std::size_t mark;
      bool in_child;
    };
    std::vector<frame> stack;
    st.add_start(v, s);
    stack.push_back({v, depth, 0, 0, 0, false});
    while (!stack.empty()) {
      frame& f = stack.back();
      if (f.in_child) {  // the split of input next - 1 is done: kept when it lowers the extension's excess
        f.in_child = false;
        if (st.over() >= f.extended) st.undo(f.mark);
        continue;
      }
      const auto inputs = g_.predecessors(f.v);
      if (f.next == inputs.size()) {
        stack.pop_back();
        continue;
      }
      const std::size_t x = inputs[f.next++];
      const std::int64_t before = st.over();
      st.add_demand(x, s);
      const std::int64_t extended = st.over();
      if (f.depth == 0 || extended == before || st.has_start(x, s)) continue;
      if (deadline.passed()) return false;
      f.extended = extended;
      f.mark = st.mark();
      f.in_child = true;
      const std::size_t child_depth = f.depth - 1;
      st.add_start(x, s);
      stack.push_back({x, child_depth, 0, 0, 0, false});  // f is not used after this
    }
    return true;
  }

  const memory_graph& g_;
  std::int64_t budget_;
  std::size_t depth_;  // how many inputs deep a split recomputes
  split_points points_;
  std::mt19937_64 rng_;
  std::uniform_real_distribution<double> unit_{0.0, 1.0};
  double tiny_cost_ = 0;
  std::vector<std::int64_t> over_prefix_;
};

/// lifetime_search_plan on a converted graph.
MEMSCHED_DECL remat_result lifetime_search_on(const memory_graph& g, std::int64_t budget, const lifetime_search_options& options,
                                              std::chrono::steady_clock::time_point start);
/// lifetime_search_on stopping at `deadline` instead of options.solver.time_limit (a sub-search's
/// share of its caller's limit, or a counted deadline). `known_bound`: a lower bound on the cost
/// of the plans along the order that the caller holds already (cost_lower_bound_along's, when it
/// runs the search again and again); none: computed here.
MEMSCHED_DECL remat_result lifetime_search_until(const memory_graph& g, std::int64_t budget, const lifetime_search_options& options,
                                                 std::chrono::steady_clock::time_point start, const call_deadline& deadline,
                                                 std::optional<double> known_bound = std::nullopt);

}  // namespace detail

/// A rematerialization plan along a fixed order (options.order, default the graph's topological
/// order) within `budget`, found natively (no solver backend) in Moccasin's lives representation:
/// from one life per vertex (no recomputation), lives are split over slots above the budget
/// (recomputing the vertex at its next use, and its inputs when keeping them alive there costs
/// memory), best bytes-removed-per-added-cost first; recomputations are then merged back while
/// the budget allows, and a seeded large-neighbourhood search (options.max_rounds rounds, or the
/// time limit) re-repairs windows of slots and, after options.max_stall_rounds rounds in a row
/// without a cheaper plan, sets of recomputed vertices (stopping when those stall as long),
/// keeping cheaper or equal plans. Every cheaper plan is
/// reported to options.solver.observer.on_incumbent (cost). The final plan is built with
/// plan_from_computes and re-checked by the simulator. cost_bound (with a plan):
/// remat_cost_lower_bound along the order. Statuses: optimal when nothing is recomputed or the
/// plan meets cost_bound (no plan along the order is cheaper); feasible; infeasible when the budget is below a vertex's own need or the outputs'
/// bytes; no_solution when no split reduces the over-budget bytes (slot memory is a conservative
/// bound: graphs with in-place outputs may need more than the simulator would); time_limit when
/// the limit stopped the repair before any plan. Deterministic for the same options without a
/// time limit.
/// Complexity: per repair step O(C * d * n) for C candidate splits and d the moves of a split;
/// memory O(n + m + total lives).
/// Throws: invalid_order naming the entry when options.order is not a topological order of all
/// vertices; what make_memory_graph throws.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] remat_result lifetime_search_plan(const G& graph, std::int64_t budget, const lifetime_search_options& options,
                                                const Maps&... maps) {
  const auto start = std::chrono::steady_clock::now();
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  return detail::lifetime_search_on(g, budget, options, start);
}

/// lifetime_search_plan with default options (the graph's topological order).
template <class G>
  requires memory_graph_source<G>
[[nodiscard]] remat_result lifetime_search_plan(const G& graph, std::int64_t budget) {
  return lifetime_search_plan(graph, budget, lifetime_search_options{});
}

}  // namespace memsched

#ifndef MEMSCHED_SEPARATE_COMPILATION
#include <memsched/remat/impl/lifetime_search.ipp>
#endif
