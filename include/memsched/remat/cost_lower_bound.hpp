#pragma once
// Proven lower bounds on the cost of rematerialization plans, with no solver: along an order (the
// plans whose first computations follow it: Checkmate's staged plan space) or over every plan
// (the order free).
//
// Why they hold: take a plan and the moment it first computes v, after the set S of vertices
// computed so far. Without recomputation the values live then are L = the values of S that some
// vertex outside S still reads, and the outputs of S. A value of L that the plan does not hold at
// that moment is read later (or is an output), so the plan computes it again: each such value
// costs at least its cost once more. While v runs, the plan holds v's inputs, its workspace and
// its output, and whatever of L it kept; within the budget, the values of L it dropped (never v's
// inputs) sum to at least (bytes of L + running bytes of v) - budget. The cheapest such set,
// relaxed to fractions of values (a fractional knapsack: cheapest cost per byte first), bounds the
// extra cost from below, at every step, so the largest over the steps does.
// - Along an order, S and L are known at every step, and the steps are bound together: a value
//   dropped at two steps with different next readers is computed again twice, so the covers of
//   all the steps form one covering LP (detail/drop_cover.hpp), at least the largest single cover.
// - Over every plan, the plan's first computations form some order, whose peak without
//   recomputation is at least the least peak of any order, P. At that step the values dropped sum
//   to at least P - budget bytes, out of values with a reader or outputs: the fractional cover of
//   P - budget by all of them is a bound (a weak one: it forgets which values are live together).
//   P is a proven lower bound on the optimal peak (serenity_order's lower_bound).

#include <memsched/core/config.hpp>
#include <memsched/core/status.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/remat/detail/call_deadline.hpp>
#include <memsched/remat/detail/drop_cover.hpp>
#include <memsched/remat/detail/plan_builder.hpp>
#include <memsched/sim/memory_model.hpp>
#include <memsched/sim/simulate_order.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <queue>
#include <span>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace memsched {

/// Options of remat_cost_lower_bound (plain aggregate).
struct cost_lower_bound_options {
  /// A topological order (vertex indices): bound the plans whose first computations follow it.
  /// nullopt: bound every plan (the order free).
  std::optional<std::vector<std::size_t>> order;
  /// Without an order: a proven lower bound on the least peak of any order without recomputation
  /// (serenity_order's lower_bound, or its peak when it proved it optimal). nullopt: none.
  std::optional<std::int64_t> peak_bound;
  /// Without an order: the search over orders (the least, over every order, of the bound along
  /// it) stores at most this many sets of computed vertices; when it stops there, the bound is
  /// the least it had not ruled out. 0: no search.
  std::size_t max_states = 200'000;
  /// Without an order: the work of that search, counted in vertex and edge visits (a set's live
  /// values, its ready vertices and their covers); it stops there as at max_states. Each set
  /// costs O(n + m + ready x n) visits, so on wide graphs of thousands of vertices this, not
  /// max_states, keeps the search to seconds without a time limit (and deterministic): a visit
  /// takes 0.8-3 ns on a 2-core machine, the default 1-3 s (docs/remat_auto.md).
  std::size_t max_work = 1'000'000'000;
  /// Wall clock of that search (the bound found by then, as at max_states).
  std::optional<std::chrono::duration<double>> time_limit;
};

/// A proven lower bound on the cost of the plans within a budget.
struct [[nodiscard]] cost_lower_bound_result {
  /// feasible: total_cost is a bound (nothing says a plan exists); infeasible: no plan fits (a
  /// vertex with its inputs, or the outputs, need more than the budget).
  solve_status status = solve_status::feasible;
  double total_cost = 0;  ///< No plan within the budget costs less (sum of cost over compute steps).
  double overhead = 0;    ///< total_cost / (sum of costs) - 1.
  std::size_t steps_over = 0;  ///< Along an order: the steps above the budget without recomputation.
  /// Without an order: sets of computed vertices the search over orders stored, its work (as
  /// max_work counts it), and whether it finished (the bound is then the least over every order of
  /// the bound along it).
  std::size_t states = 0;
  std::size_t work = 0;
  bool search_complete = false;
  std::string message;    ///< Why infeasible; empty otherwise.
};

namespace detail {

/// The covering LP's caps along an order (rows' gaps stored, gaps visited by its ascent).
inline constexpr std::size_t max_cover_entries = std::size_t{1} << 22;
inline constexpr std::size_t max_cover_work = 100'000'000;

/// The values a plan may drop and recompute (positive bytes; read by some vertex or an output),
/// cheapest cost per byte first (ties: lower index). O(n log n).
inline std::vector<std::size_t> droppable_by_cost_per_byte(const memory_graph& g) {
  std::vector<std::size_t> ranked;
  for (std::size_t v = 0; v < g.size(); ++v)
    if (g.bytes(v) > 0 && !memory_model::dies_unread(g, v)) ranked.push_back(v);
  std::stable_sort(ranked.begin(), ranked.end(), [&](std::size_t a, std::size_t b) {
    return g.cost(a) / static_cast<double>(g.bytes(a)) < g.cost(b) / static_cast<double>(g.bytes(b));
  });
  return ranked;
}

/// The least cost of dropping values of `ranked` for which usable(v) holds, fractions allowed,
/// whose bytes reach `need` (the fractional knapsack cover); infinity when they cannot. O(n).
template <class Usable>
double fractional_cover(const memory_graph& g, const std::vector<std::size_t>& ranked, std::int64_t need, Usable&& usable) {
  std::int64_t left = need;
  double cost = 0;
  for (std::size_t v : ranked) {
    if (left <= 0) break;
    if (!usable(v)) continue;
    if (g.bytes(v) >= left) return cost + g.cost(v) * static_cast<double>(left) / static_cast<double>(g.bytes(v));
    cost += g.cost(v);
    left -= g.bytes(v);
  }
  return left > 0 ? std::numeric_limits<double>::infinity() : cost;
}

/// The least memory a plan holds while it first computes v with the values of `live_bytes`
/// resident without recomputation: v's output may take over a dying input's buffer in the plan
/// even where it does not without recomputation. O(in-degree of v).
inline std::int64_t least_running_bytes(const memory_graph& g, std::size_t v, std::int64_t live_bytes) {
  bool may_reuse = false;
  for (auto p : g.predecessors(v)) may_reuse = may_reuse || memory_model::may_reuse(g, v, p);
  return memory_model::running_bytes(g, v, live_bytes, may_reuse);
}

/// The live droppable values of a walk along an order, by their rank in droppable_by_cost_per_byte,
/// with their bytes and costs in two Fenwick trees: a step's fractional cover then takes
/// O(log n) instead of a walk over every ranked value (a long chain's training graph has tens of
/// thousands of steps above a low budget, each with as many live values).
class ranked_live_values {
 public:
  ranked_live_values(const memory_graph& g, const std::vector<std::size_t>& ranked)
      : g_(g), ranked_(ranked), rank_(g.size(), none), present_(g.size(), 0), bytes_(ranked.size() + 1, 0), cost_(ranked.size() + 1, 0) {
    for (std::size_t r = 0; r < ranked.size(); ++r) rank_[ranked[r]] = r;
    while (top_ * 2 <= ranked.size()) top_ *= 2;
  }

  /// Adds or removes v (a no-op for a value that is not droppable or already in that state).
  void set(std::size_t v, bool in) {
    if (rank_[v] == none || static_cast<bool>(present_[v]) == in) return;
    present_[v] = in;
    const std::int64_t b = in ? g_.bytes(v) : -g_.bytes(v);
    const long double c = in ? static_cast<long double>(g_.cost(v)) : -static_cast<long double>(g_.cost(v));
    for (std::size_t i = rank_[v] + 1; i < bytes_.size(); i += i & (~i + 1)) {
      bytes_[i] += b;
      cost_[i] += c;
    }
    total_ += b;
  }

  /// fractional_cover of `need` > 0 bytes by the values present: whole values cheapest per byte
  /// first, then the fraction of the next one. Infinity when they hold fewer bytes.
  [[nodiscard]] double cover(std::int64_t need) const {
    if (total_ < need) return std::numeric_limits<double>::infinity();
    // Descend to the longest prefix of ranks whose bytes stay below `need`; the value at the next
    // rank is present (it brings the prefix to `need` or more).
    std::size_t at = 0;
    std::int64_t bytes = 0;
    long double cost = 0;
    for (std::size_t step = top_; step > 0; step /= 2) {
      if (at + step < bytes_.size() && bytes + bytes_[at + step] < need) {
        at += step;
        bytes += bytes_[at];
        cost += cost_[at];
      }
    }
    const std::size_t v = ranked_[at];
    return static_cast<double>(cost) + g_.cost(v) * static_cast<double>(need - bytes) / static_cast<double>(g_.bytes(v));
  }

 private:
  static constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
  const memory_graph& g_;
  const std::vector<std::size_t>& ranked_;
  std::vector<std::size_t> rank_;
  std::vector<char> present_;
  std::vector<std::int64_t> bytes_;  // Fenwick trees over ranks, 1-based
  std::vector<long double> cost_;
  std::size_t top_ = 1;
  std::int64_t total_ = 0;
};

/// One walk along an order: the steps above the budget, the largest fractional cover among them
/// (v's inputs excluded at v's step; infinity when one cannot be covered) and their rows of the
/// covering LP (detail/drop_cover.hpp). The walk is O((n + m) log n); the rows hold at most
/// max_cover_entries gaps.
struct steps_over_budget {
  std::size_t count = 0;
  double largest_cover = 0;
  drop_cover_rows rows;
};

inline steps_over_budget walk_steps_over_budget(const memory_graph& g, std::int64_t budget, std::span<const std::size_t> order) {
  const std::vector<std::size_t> ranked = droppable_by_cost_per_byte(g);
  memory_model model(g);
  std::vector<char> live(g.size(), 0);
  ranked_live_values usable(g, ranked);
  drop_cover_builder rows(g, order, max_cover_entries);
  steps_over_budget w;
  for (std::size_t position = 0; position < order.size(); ++position) {
    const std::size_t v = order[position];
    const std::int64_t running = least_running_bytes(g, v, model.live());
    if (running > budget) {
      ++w.count;
      for (auto p : g.predecessors(v)) usable.set(p, false);
      w.largest_cover = std::max(w.largest_cover, usable.cover(running - budget));
      for (auto p : g.predecessors(v)) usable.set(p, live[p] != 0);
      rows.add_row(v, position, running - budget);
    }
    model.step(v, [&](std::size_t u) {
      live[u] = 0;
      usable.set(u, false);
      rows.set_live(u, false);
    });
    if (!memory_model::dies_unread(g, v)) {
      live[v] = 1;
      usable.set(v, true);
      rows.set_live(v, true);
    }
  }
  w.rows = rows.take();
  return w;
}

/// The extra cost (beyond one computation of each vertex) of any plan along `order` within
/// `budget`: the largest fractional cover over the steps above the budget, raised by the covering
/// LP over all of them (values dropped at different steps before different readers are paid for
/// separately). `steps_over` counts them. Infinity when some step cannot be brought within the
/// budget. The LP's ascent visits at most max_cover_work row entries, so it ends within a
/// fraction of a second on every graph.
inline double cost_extra_along_order(const memory_graph& g, std::int64_t budget, std::span<const std::size_t> order, std::size_t& steps_over) {
  const steps_over_budget w = walk_steps_over_budget(g, budget, order);
  steps_over = w.count;
  if (w.largest_cover == std::numeric_limits<double>::infinity()) return w.largest_cover;
  return std::max(w.largest_cover, drop_cover_bound(w.rows, max_cover_work));
}

/// The extra cost of any plan within `budget` when no order without recomputation peaks below
/// `peak_bound`: the fractional cover of peak_bound - budget by every droppable value. 0 when
/// peak_bound <= budget, and on graphs with in-place vertices (whose peak depends on which input
/// dies where). O(n log n).
inline double cost_extra_any_order(const memory_graph& g, std::int64_t budget, std::int64_t peak_bound) {
  if (peak_bound <= budget || g.has_inplace()) return 0;
  return fractional_cover(g, droppable_by_cost_per_byte(g), peak_bound - budget, [](std::size_t) { return true; });
}

/// cost_lower_bound_on's total cost along a valid `order` (infinity when infeasible).
inline double cost_lower_bound_along(const memory_graph& g, std::int64_t budget, std::span<const std::size_t> order) {
  if (budget_below_lower_bound(g, budget)) return std::numeric_limits<double>::infinity();
  std::size_t steps_over = 0;
  return g.total_cost() + cost_extra_along_order(g, budget, order, steps_over);
}

/// The least over every topological order of cost_extra_along_order: a bottleneck shortest
/// path over the sets of computed vertices (a set's live values, hence each step's cover, depend
/// on the set only), smallest worst-step cover first, larger sets first among equals. Stores at
/// most max_states sets, stops after max_work visits or at the deadline; then it returns the
/// least cover of a set not yet expanded, which every order not ruled out reaches (a valid
/// bound). O(states x (n + m + ready vertices x n)) time, O(states x n / 64) memory.
struct best_order_bound {
  double extra = 0;
  std::size_t states = 0;
  std::size_t work = 0;
  bool complete = false;
};

inline best_order_bound cost_extra_best_order(const memory_graph& g, std::int64_t budget, std::size_t max_states, std::size_t max_work,
                                              const call_deadline& deadline) {
  const std::size_t n = g.size(), words = (n + 63) / 64;
  const std::vector<std::size_t> ranked = droppable_by_cost_per_byte(g);
  using set = std::vector<std::uint64_t>;
  struct set_hash {
    std::size_t operator()(const set& s) const noexcept {
      std::uint64_t h = 0x9e3779b97f4a7c15ULL;
      for (auto w : s) h = (h ^ w) * 0x100000001b3ULL + (h >> 29);
      return static_cast<std::size_t>(h);
    }
  };
  struct entry {
    double key;
    std::size_t size;
    set computed;
    bool operator<(const entry& o) const { return key != o.key ? key > o.key : size < o.size; }  // a min-heap on key
  };
  std::unordered_map<set, double, set_hash> best;
  std::priority_queue<entry> queue;
  queue.push({0.0, 0, set(words, 0)});
  best.emplace(set(words, 0), 0.0);
  const auto has = [](const set& s, std::size_t v) { return (s[v / 64] >> (v % 64) & 1) != 0; };
  std::vector<char> live(n);
  std::vector<std::size_t> input_of(n, std::numeric_limits<std::size_t>::max());
  best_order_bound res;
  while (!queue.empty()) {
    entry e = queue.top();
    queue.pop();
    if (e.key > best[e.computed]) continue;  // reached again more cheaply
    res.states = best.size();
    if (e.size == n) {
      res.extra = e.key;
      res.complete = true;
      return res;
    }
    if (best.size() >= max_states || res.work >= max_work || deadline.passed()) {
      res.extra = e.key;  // the least key left: no order not ruled out does better
      return res;
    }
    res.work += 2 * n + g.num_edges();
    std::int64_t live_bytes = 0;
    for (std::size_t u = 0; u < n; ++u) {
      live[u] = 0;
      if (!has(e.computed, u) || memory_model::dies_unread(g, u)) continue;
      bool read_later = g.is_output(u);
      for (auto r : g.successors(u)) read_later = read_later || !has(e.computed, r);
      if (read_later) {
        live[u] = 1;
        live_bytes += g.bytes(u);
      }
    }
    for (std::size_t v = 0; v < n; ++v) {
      if (has(e.computed, v)) continue;
      bool ready = true;
      for (auto p : g.predecessors(v)) ready = ready && has(e.computed, p);
      if (!ready) continue;
      for (auto p : g.predecessors(v)) input_of[p] = v;
      const std::int64_t running = least_running_bytes(g, v, live_bytes);
      double key = e.key;
      if (running > budget)
        key = std::max(key, fractional_cover(g, ranked, running - budget, [&](std::size_t u) {
                         ++res.work;
                         return live[u] && input_of[u] != v;
                       }));
      if (key == std::numeric_limits<double>::infinity()) continue;
      set next = e.computed;
      next[v / 64] |= std::uint64_t{1} << (v % 64);
      auto [it, inserted] = best.try_emplace(next, key);
      if (!inserted) {
        if (it->second <= key) continue;
        it->second = key;
      }
      queue.push({key, e.size + 1, std::move(next)});
    }
  }
  res.states = best.size();
  res.complete = true;
  res.extra = std::numeric_limits<double>::infinity();  // no order fits (a step's inputs alone exceed the budget)
  return res;
}

MEMSCHED_DECL cost_lower_bound_result cost_lower_bound_on(const memory_graph& g, std::int64_t budget, const cost_lower_bound_options& o);

}  // namespace detail

/// A proven lower bound on the total cost of every plan within `budget`, without a solver: along
/// options.order (plans whose first computations follow it), the cheapest fractional choice of
/// live values (not the step's inputs) to drop at every step above the budget, a value paid once
/// per next reader it is dropped before (a covering LP, bounded through its dual; at least the
/// largest single step's cover); with the order free, the higher of the cheapest fractional set covering
/// options.peak_bound - budget and the least over every order of the bound along it (a search
/// over sets of computed vertices, capped by max_states, max_work and time_limit: see the file
/// comment). Exact for plans that recompute nothing (the sum of costs); weak where plans
/// recompute chains of values (it never counts what a recomputation needs resident: its inputs).
/// Deterministic unless time_limit stops the search.
/// Complexity: along an order O(n log n + n * steps above the budget), and the LP's ascent at most
/// 10^8 visits of its entries (its rows hold at most 2^22 of them); free O(n log n) plus the
/// search: O(n + m + ready vertices x n) per set, at most max_states sets and max_work visits.
/// Throws: std::invalid_argument on a negative budget; invalid_order naming the entry when
/// options.order is not a topological order; what make_memory_graph throws.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] cost_lower_bound_result remat_cost_lower_bound(const G& graph, std::int64_t budget, const cost_lower_bound_options& options,
                                                             const Maps&... maps) {
  return detail::cost_lower_bound_on(detail::to_memory_graph(graph, maps...), budget, options);
}

}  // namespace memsched

#ifndef MEMSCHED_SEPARATE_COMPILATION
#include <memsched/remat/impl/cost_lower_bound.ipp>
#endif
