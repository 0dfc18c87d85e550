#pragma once
// Dynamic Tensor Rematerialization (Kirisame, Lyubomirsky, Haan, Brennan, He, Roesch, Chen,
// Tatlock, "Dynamic Tensor Rematerialization", ICLR 2021) as an offline planner: walk a given
// topological order as if it were the program; before each computation make its inputs resident
// (recomputing evicted ones, their inputs first) and, while the memory in use would exceed the
// budget, evict the resident unpinned value with the smallest score h. The computations made
// become a compute sequence, turned into a plan (frees at last use) and re-simulated; the plan
// frees each value no later than DTR did, so its peak is never above the peak DTR tracked.

#include <memsched/core/config.hpp>
#include <memsched/core/errors.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/remat/detail/call_deadline.hpp>
#include <memsched/remat/detail/plan_builder.hpp>
#include <memsched/remat/detail/resident_set.hpp>
#include <memsched/remat/remat_result.hpp>
#include <memsched/sim/memory_model.hpp>
#include <memsched/sim/simulate_order.hpp>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace memsched {

/// DTR's eviction score h(t) (the smallest is evicted); s(t) is the staleness (computations since
/// t was last read or written, at least 1), m(t) its bytes, c(t) its cost.
enum class dtr_heuristic : std::uint8_t {
  dtr,     ///< h_DTR with the exact evicted neighbourhood e*(t): (c(t) + c(e*(t))) / (m(t) s(t)).
  dtr_eq,  ///< h_DTR^eq: e*(t) approximated by union-find classes of evicted values (the paper's choice).
  local,   ///< h_DTR^local: c(t) / (m(t) s(t)), no neighbourhood.
  lru,     ///< 1 / s(t): least recently used first.
  size,    ///< 1 / m(t): largest first.
};

/// Every DTR heuristic, in the order above.
inline constexpr std::array<dtr_heuristic, 5> all_dtr_heuristics{dtr_heuristic::dtr, dtr_heuristic::dtr_eq, dtr_heuristic::local,
                                                                 dtr_heuristic::lru, dtr_heuristic::size};

/// Largest graph on which the portfolios (remat_plan, hiremate_plan) run the exact `dtr` score by
/// default (its O(R (n + m)) per eviction, R the resident values: on larger graphs the cheaper scores).
inline constexpr std::size_t default_dtr_exact_max_vertices = 4096;

/// "dtr", "dtr-eq", "local", "lru", "size". O(1), never throws.
[[nodiscard]] constexpr std::string_view to_string(dtr_heuristic h) noexcept {
  switch (h) {
    case dtr_heuristic::dtr: return "dtr";
    case dtr_heuristic::dtr_eq: return "dtr-eq";
    case dtr_heuristic::local: return "local";
    case dtr_heuristic::lru: return "lru";
    case dtr_heuristic::size: return "size";
  }
  return "";
}

/// The heuristic named `name`, or nullopt. O(1), never throws.
[[nodiscard]] constexpr std::optional<dtr_heuristic> parse_dtr_heuristic(std::string_view name) noexcept {
  for (auto h : all_dtr_heuristics)
    if (to_string(h) == name) return h;
  return std::nullopt;
}

/// Options of dtr_plan (plain aggregate).
struct dtr_options {
  /// The program order DTR walks (vertex indices, a topological order). Empty: the graph's
  /// topological order (memory_graph::topological_order).
  std::vector<std::size_t> order;
  dtr_heuristic heuristic = dtr_heuristic::dtr_eq;
  /// As sqrtn_options::use_spare_memory: afterwards, skip recomputations while the peak stays
  /// within the budget (finite budgets only).
  bool use_spare_memory = true;
  /// Counted limit on computations (first runs and recomputations); DTR gives up with
  /// no_solution past it (recomputation can thrash under a budget barely above the bound).
  /// 0: 64 * (number of vertices) + 64.
  std::size_t max_computations = 0;
  /// Wall clock from the call (nullopt: none); checked before every computation, and past it DTR
  /// stops with status time_limit and no plan.
  std::optional<std::chrono::duration<double>> time_limit;
};

/// Throws: option_error naming heuristic when it is not one of all_dtr_heuristics. Every
/// max_computations (0: the default limit) and time_limit (NaN and negative: expired) is valid.
inline void check_dtr_options(const dtr_options& options) {
  if (to_string(options.heuristic).empty()) throw option_error("dtr_plan", "heuristic", "must be one of all_dtr_heuristics");
}

namespace detail {

/// The DTR walk over one order; fills `sequence` (vertex per computation).
class dtr_runner {
 public:
  dtr_runner(const memory_graph& g, std::int64_t budget, const dtr_options& o, const call_deadline& deadline)
      : deadline_(deadline),
        g_(g), budget_(budget), heuristic_(o.heuristic), n_(g.size()), resident_(n_), computed_(n_, 0), locked_(n_, 0),
        pending_(n_), last_access_(n_, 0), node_of_(n_, no_node), exact_mark_(n_, 0) {
    for (std::size_t v = 0; v < n_; ++v) pending_[v] = static_cast<std::uint32_t>(g.out_degree(v));
    limit_ = o.max_computations ? o.max_computations : 64 * n_ + 64;
  }

  std::vector<std::size_t> sequence;
  bool over_budget = false;       ///< Some computation found nothing left to evict.
  bool gave_up = false;           ///< The computation limit or the deadline was hit.
  bool timed_out = false;         ///< The deadline was hit.

  /// Runs the order, then brings every evicted graph output back.
  void run(std::span<const std::size_t> order) {
    for (auto v : order) {
      if (gave_up) return;
      materialize(v, true);
    }
    // Outputs restored at the end must not be evicted to restore the next one.
    for (auto o : g_.outputs())
      if (resident_.contains(o)) ++locked_[o];
    for (auto o : g_.outputs()) {
      if (gave_up) return;
      if (!resident_.contains(o)) {
        materialize(o, false);
        ++locked_[o];
      }
    }
  }

 private:
  struct frame {
    std::uint32_t v;
    std::uint32_t next;  // the next predecessor to make resident
    bool first;          // the order's own computation (not a recomputation)
    std::uint32_t flags;  // offset in pinned_: which predecessors this frame pinned up front
  };

  // Whether the value is needed later: a consumer in the order has not run, or it is an output.
  bool needed(std::size_t v) const { return pending_[v] > 0 || g_.is_output(v); }

  std::uint32_t find(std::uint32_t x) {
    while (parent_[x] != x) {
      parent_[x] = parent_[parent_[x]];
      x = parent_[x];
    }
    return x;
  }

  // Releases v's memory: evicted by the heuristic or dead. Either way v joins the
  // union-find of released values: a fresh node per release, because union-find cannot split a
  // class when one of its values is recomputed (its cost is subtracted from the class instead).
  void release(std::size_t v) {
    resident_.erase(v);
    live_ -= g_.bytes(v);
    if (heuristic_ != dtr_heuristic::dtr_eq) return;
    const auto x = static_cast<std::uint32_t>(parent_.size());
    parent_.push_back(x);
    class_cost_.push_back(g_.cost(v));
    mark_.push_back(0);
    node_of_[v] = x;
    auto join = [&](std::size_t u) {
      if (resident_.contains(u) || node_of_[u] == no_node) return;
      const auto a = find(x), b = find(node_of_[u]);
      if (a == b) return;
      parent_[b] = a;
      class_cost_[a] += class_cost_[b];
    };
    for (auto p : g_.predecessors(v)) join(p);
    for (auto s : g_.successors(v)) join(s);
  }

  // c(e*(t)) for the exact heuristic: the evicted values connected to t through evicted values.
  double evicted_neighbourhood_exact(std::size_t t) {
    ++stamp_;
    double sum = 0;
    stack_.clear();
    auto visit = [&](std::size_t u) {
      if (resident_.contains(u) || !computed_[u] || exact_mark_[u] == stamp_) return;
      exact_mark_[u] = stamp_;
      sum += g_.cost(u);
      stack_.push_back(static_cast<std::uint32_t>(u));
    };
    exact_mark_[t] = stamp_;
    for (auto p : g_.predecessors(t)) visit(p);
    for (auto s : g_.successors(t)) visit(s);
    while (!stack_.empty()) {
      const auto u = stack_.back();
      stack_.pop_back();
      for (auto p : g_.predecessors(u)) visit(p);
      for (auto s : g_.successors(u)) visit(s);
    }
    return sum;
  }

  double evicted_neighbourhood_eq(std::size_t t) {
    ++stamp_;
    double sum = 0;
    auto visit = [&](std::size_t u) {
      if (resident_.contains(u) || node_of_[u] == no_node) return;
      const auto r = find(node_of_[u]);
      if (mark_[r] == stamp_) return;
      mark_[r] = stamp_;
      sum += class_cost_[r];
    };
    for (auto p : g_.predecessors(t)) visit(p);
    for (auto s : g_.successors(t)) visit(s);
    return sum;
  }

  double score(std::size_t t) {
    const double stale = static_cast<double>(clock_ - last_access_[t] + 1);
    const double bytes = static_cast<double>(g_.bytes(t));
    switch (heuristic_) {
      case dtr_heuristic::lru: return 1.0 / stale;
      case dtr_heuristic::size: return 1.0 / bytes;
      case dtr_heuristic::local: return g_.cost(t) / (bytes * stale);
      case dtr_heuristic::dtr: return (g_.cost(t) + evicted_neighbourhood_exact(t)) / (bytes * stale);
      case dtr_heuristic::dtr_eq: return (g_.cost(t) + evicted_neighbourhood_eq(t)) / (bytes * stale);
    }
    return 0;
  }

  // Evicts until `need` more bytes fit; false when nothing evictable is left.
  bool make_room(std::int64_t need) {
    while (live_ + need > budget_) {
      std::size_t best = n_;
      double best_h = 0;
      for (const std::size_t t : resident_.members()) {
        if (locked_[t] || g_.bytes(t) == 0) continue;
        const double h = score(t);
        if (best == n_ || h < best_h || (h == best_h && t < best)) {  // ties: the smaller vertex
          best = t;
          best_h = h;
        }
      }
      if (best == n_) return false;
      release(best);
    }
    return true;
  }

  void compute(const frame& f) {
    const std::size_t v = f.v;
    ++clock_;
    if (!make_room(g_.bytes(v) + g_.workspace(v))) over_budget = true;
    sequence.push_back(v);
    if (sequence.size() > limit_) gave_up = true;
    if (deadline_.passed()) gave_up = timed_out = true;
    computed_[v] = 1;
    resident_.insert(v);
    live_ += g_.bytes(v);
    last_access_[v] = clock_;
    if (heuristic_ == dtr_heuristic::dtr_eq && node_of_[v] != no_node) {
      class_cost_[find(node_of_[v])] -= g_.cost(v);
      node_of_[v] = no_node;
    }
    for (auto p : g_.predecessors(v)) {
      --locked_[p];
      last_access_[p] = clock_;
      if (f.first) --pending_[p];
      // Dead inputs go at once (the memory model); a recomputed input may be dead already.
      if (resident_.contains(p) && !locked_[p] && !needed(p)) release(p);
    }
    if (f.first && !needed(v)) release(v);
  }

  // Computes v after making its inputs resident, iteratively (chains can be deep). The inputs
  // resident on arrival are pinned at once, so recomputing a missing one cannot evict a sibling
  // (which would then be recomputed in turn: on wide graphs that cascades).
  void push_frame(std::size_t v, bool first) {
    const auto preds = g_.predecessors(v);
    const auto off = static_cast<std::uint32_t>(pinned_.size());
    for (auto p : preds) {
      const bool pin = resident_.contains(p);
      pinned_.push_back(pin ? 1 : 0);
      if (pin) {
        ++locked_[p];
        last_access_[p] = clock_;
      }
    }
    frames_.push_back({static_cast<std::uint32_t>(v), 0, first, off});
  }

  void materialize(std::size_t v, bool first) {
    frames_.clear();
    pinned_.clear();
    push_frame(v, first);
    while (!frames_.empty() && !gave_up) {
      frame& f = frames_.back();
      const auto preds = g_.predecessors(f.v);
      if (f.next < preds.size()) {
        const auto p = preds[f.next];
        if (pinned_[f.flags + f.next]) {
          ++f.next;
        } else if (resident_.contains(p)) {  // made resident meanwhile (by this frame or a sibling's recursion)
          ++locked_[p];
          last_access_[p] = clock_;
          ++f.next;
        } else {
          push_frame(p, false);
        }
        continue;
      }
      const frame done = f;
      pinned_.resize(done.flags);
      frames_.pop_back();
      compute(done);
    }
  }

  call_deadline deadline_;
  const memory_graph& g_;
  std::int64_t budget_;
  dtr_heuristic heuristic_;
  std::size_t n_;
  resident_set resident_;
  std::vector<char> computed_;
  std::vector<std::uint32_t> locked_, pending_;
  std::vector<std::uint64_t> last_access_;
  static constexpr std::uint32_t no_node = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> node_of_;   // v's node in the union-find while v is released (dtr_eq)
  std::vector<std::uint32_t> parent_;    // union-find over release nodes
  std::vector<double> class_cost_;       // per root: the cost of the class's values still released
  std::vector<std::uint64_t> mark_;      // per node: visited stamp
  std::vector<std::uint64_t> exact_mark_;  // per vertex: visited stamp (dtr)
  std::vector<std::uint32_t> stack_;
  std::vector<frame> frames_;
  std::vector<char> pinned_;  // stack of per-frame flags (see push_frame)
  std::uint64_t clock_ = 0, stamp_ = 0;
  std::int64_t live_ = 0;
  std::size_t limit_ = 0;
};

/// dtr_plan on a converted graph.
MEMSCHED_DECL remat_result dtr_on(const memory_graph& g, std::int64_t budget, const dtr_options& options,
                                  std::chrono::steady_clock::time_point start);

/// The scores a portfolio of DTR runs tries by default (remat_plan, hiremate_plan): the cheap ones
/// first and the exact neighbourhood (O(R (n + m)) per eviction, R the resident values) last, only on graphs of at most
/// `exact_max_vertices`, so that a deadline cuts the dearest. O(1), never throws beyond bad_alloc.
[[nodiscard]] inline std::vector<dtr_heuristic> dtr_portfolio_scores(std::size_t vertices, std::size_t exact_max_vertices) {
  std::vector<dtr_heuristic> scores{dtr_heuristic::dtr_eq, dtr_heuristic::local, dtr_heuristic::lru, dtr_heuristic::size};
  if (vertices <= exact_max_vertices) scores.push_back(dtr_heuristic::dtr);
  return scores;
}

/// A portfolio's counted limit per DTR run: 8 n + 64 computations, so that a score that thrashes
/// gives up after a few passes over the graph.
[[nodiscard]] constexpr std::size_t dtr_portfolio_computations(std::size_t vertices) noexcept { return 8 * vertices + 64; }

/// dtr_on with `base` and each score of `scores` in turn while `deadline` has not passed, each run
/// stopping at it (status time_limit); `take(result, score)` receives every answer. O(runs x
/// dtr_plan). Throws: what dtr_on throws.
template <class Take>
void dtr_each_score(const memory_graph& g, std::int64_t budget, std::span<const dtr_heuristic> scores, dtr_options base,
                    const call_deadline& deadline, Take&& take) {
  for (const dtr_heuristic h : scores) {
    if (deadline.passed()) return;
    base.heuristic = h;
    base.time_limit = deadline.remaining();
    take(dtr_on(g, budget, base, std::chrono::steady_clock::now()), h);
  }
}

}  // namespace detail

/// DTR's greedy eviction along a given order (options.order, default the graph's topological
/// order): before each computation its evicted inputs are recomputed (their inputs first), and
/// while the memory in use would exceed `budget` the resident value not pinned by the computations
/// in progress with the smallest options.heuristic score is evicted (ties: smaller vertex index);
/// values no later consumer in the order reads are freed at once (graph outputs are kept; evicted
/// ones are recomputed at the end). The compute sequence becomes a plan (frees at last use, then
/// use_spare_memory) re-checked by the simulator. Statuses: feasible; infeasible when the budget
/// is below a vertex's own need or the outputs' bytes; no_solution (peak and cost of the plan it
/// would return, empty plan) when the pinned values alone exceed the budget at some computation,
/// or past options.max_computations; time_limit (no plan) past options.time_limit. stats.order is
/// the order walked. Deterministic when no time limit stops it.
/// Complexity: O(L * R) for a sequence of length L, R the most values resident at once (each
/// eviction scans the resident values; dtr: O(L * R * (n + m))).
/// Throws: what check_dtr_options throws (before any work); invalid_order naming the entry when
/// options.order is not a topological order of all vertices; what make_memory_graph throws.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] remat_result dtr_plan(const G& graph, std::int64_t budget, const dtr_options& options, const Maps&... maps) {
  const auto start = std::chrono::steady_clock::now();
  check_dtr_options(options);
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  return detail::dtr_on(g, budget, options, start);
}

/// dtr_plan with default options (h_DTR^eq along the graph's topological order).
template <class G>
  requires memory_graph_source<G>
[[nodiscard]] remat_result dtr_plan(const G& graph, std::int64_t budget) {
  return dtr_plan(graph, budget, dtr_options{});
}

}  // namespace memsched

#ifndef MEMSCHED_SEPARATE_COMPILATION
#include <memsched/remat/impl/dtr.ipp>
#endif
