#pragma once
// Orders chosen for the arena, not only the peak. The memory a runtime reserves is the arena of a
// static layout (largest offset + size), which can exceed the order's peak when no layout of that
// order's tensors packs them without gaps. arena_order starts from a given order (typically
// Serenity's, peak-optimal), lays its tensors out exactly (solve_layout), and when the arena is
// above the peak searches other orders whose peak stays within a bound: a local search that moves
// one vertex at a time within its topological window, walks across orders whose greedy layout is no
// worse, and asks the exact search for a layout below the best arena at every order it reaches.
// See docs/layout.md.

#include <memsched/core/errors.hpp>
#include <memsched/core/status.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/order/detail/deadline_clock.hpp>
#include <memsched/sim/arena.hpp>
#include <memsched/sim/layout.hpp>
#include <memsched/sim/simulate_order.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <span>
#include <vector>

namespace memsched {

/// Options of arena_order.
struct arena_order_options {
  /// Orders whose peak exceeds the start order's by more than this fraction are not considered
  /// (0: only orders as good as the start for the peak; a peak-optimal start keeps the peak optimal).
  double peak_slack = 0;
  /// Wall-clock limit of the whole call; the best order found is returned.
  std::optional<std::chrono::duration<double>> time_limit;
  /// Orders the local search tries (a counted limit: the result does not depend on the machine).
  std::uint64_t move_limit = 20000;
  /// Seed of the local search's moves.
  std::uint64_t seed = 0;
  /// Cap on the memory of each exact layout search (layout_options::max_bytes).
  std::uint64_t max_bytes = std::uint64_t{1} << 30;
};

/// Counters of an arena_order call.
struct arena_order_stats {
  std::uint64_t orders_tried = 0;     ///< Candidate orders built by moves.
  std::uint64_t orders_in_bound = 0;  ///< Of those, orders whose peak is within the bound.
  std::uint64_t layouts_searched = 0; ///< Exact layout searches run.
  double seconds = 0;
};

/// The result of arena_order.
struct [[nodiscard]] arena_order_result {
  std::vector<std::size_t> order;   ///< The order with the least arena found (the start when none is better).
  arena_plan arena;                 ///< Its layout (strategy exact): offsets, arena, peak, proven bound of this order's layout.
  std::int64_t start_arena_bytes = 0;  ///< Arena of the start order's exact layout, under the same limits.
  std::int64_t start_peak_bytes = 0;   ///< Peak of the start order.
  /// optimal: the arena equals the order's peak and that peak is at most the start's (with a
  /// peak-optimal start, no order has a smaller arena); feasible: otherwise (the search ran out of
  /// moves or time, or no order within the bound packs without gaps).
  solve_status status = solve_status::feasible;
  arena_order_stats stats;
};

namespace detail {

/// The state of arena_order's local search over orders of one memory graph.
class arena_order_search {
 public:
  arena_order_search(const memory_graph& g, std::vector<std::size_t> start, const arena_order_options& options,
                     std::chrono::steady_clock::time_point deadline)
      : g_(g), options_(options), clock_(deadline), rng_(options.seed), current_(std::move(start)) {}

  arena_order_result run() {
    arena_order_result r;
    r.start_peak_bytes = order_peak_unchecked(g_, current_);
    peak_limit_ = peak_limit(r.start_peak_bytes);
    best_order_ = current_;
    const std::vector<arena_buffer> buffers = buffers_of(current_);
    best_ = start_layout(layout_buffers_of(buffers), r.start_peak_bytes);
    r.start_arena_bytes = best_.arena;
    current_greedy_ = greedy_arena(buffers, current_.size());
    position_.resize(g_.size());
    for (std::size_t k = 0; k < current_.size(); ++k) position_[current_[k]] = k;
    while (best_.arena > best_.peak && r.stats.orders_tried < options_.move_limit && !clock_.read()) {
      ++r.stats.orders_tried;
      step(r.stats);
    }
    finish(r);
    return r;
  }

 private:
  struct layout_found {
    std::int64_t arena = std::numeric_limits<std::int64_t>::max();
    std::int64_t peak = 0;
    std::int64_t bound = 0;  // proven for this order's tensors
    std::vector<std::int64_t> offsets;
  };

  /// Nodes each exact layout search of a candidate order may take: enough to pack a few hundred
  /// tensors, small enough that the walk visits many orders.
  static constexpr std::uint64_t candidate_nodes = 20000;
  /// On a plateau of the greedy layout, the exact search runs at every this many orders reached.
  static constexpr std::uint64_t plateau_stride = 8;

  std::int64_t peak_limit(std::int64_t start_peak) const {
    const long double limit = static_cast<long double>(start_peak) * (1.0L + static_cast<long double>(options_.peak_slack));
    if (!(limit < static_cast<long double>(std::numeric_limits<std::int64_t>::max()))) return std::numeric_limits<std::int64_t>::max();
    return static_cast<std::int64_t>(std::floor(limit));
  }

  /// The tensors of `order`, built once per order for its greedy arena and its exact layouts.
  std::vector<arena_buffer> buffers_of(std::span<const std::size_t> order) const {
    std::vector<std::size_t> first, last, buffer_of;
    return arena_buffers(g_, order, first, last, buffer_of);
  }

  /// The least arena of the greedy strategies for an order's buffers over `steps` steps: the walk's guide.
  static std::int64_t greedy_arena(const std::vector<arena_buffer>& buffers, std::size_t steps) {
    std::vector<std::int64_t> offsets;
    return place_least_greedy(buffers, steps, offsets);
  }

  /// Nodes of the start order's exact search (solve_layout decides the peak, its bound, first,
  /// with layout_bound_first_nodes of them, then minimises with as many again), which may take up
  /// to half of the time left: the rest goes to other orders, where a gap the start cannot close
  /// often disappears.
  static constexpr std::uint64_t start_nodes = 2 * layout_bound_first_nodes;
  static constexpr double start_share = 0.5;

  /// The start order's exact layout: its least arena, proven where the search settles it. A layout
  /// at its peak (the bound, decided first) is the least arena and ends the whole search.
  layout_found start_layout(std::span<const layout_buffer> buffers, std::int64_t peak) {
    return layout_of(buffers, peak, std::nullopt, start_nodes, start_share);
  }

  /// An exact layout of an order's `buffers` (layout_buffers_of), whose peak is `peak`: the least
  /// arena (no capacity) or any layout within `capacity`, in at most `nodes` search nodes and
  /// the share `time_share` of the time left.
  layout_found layout_of(std::span<const layout_buffer> buffers, std::int64_t peak, std::optional<std::int64_t> capacity,
                         std::uint64_t nodes, double time_share = 1.0) {
    layout_options o{.capacity = capacity, .time_limit = std::nullopt, .node_limit = nodes, .max_bytes = options_.max_bytes};
    if (!clock_.unlimited()) {
      const double left = std::max(0.0, std::chrono::duration<double>(clock_.deadline() - std::chrono::steady_clock::now()).count());
      o.time_limit = std::chrono::duration<double>(left * time_share);
    }
    layout_result lr = solve_layout(buffers, o);
    layout_found f;
    f.peak = peak;
    f.bound = lr.lower_bound;
    if (has_solution(lr.status)) {  // (no buffer of positive size: a solution with no offsets)
      f.arena = lr.arena_bytes;
      f.offsets = std::move(lr.offsets);
    }
    return f;
  }

  /// One move: a vertex to another place in its window (after its last predecessor, before its
  /// first successor). Orders within the peak bound whose greedy arena is no worse become the
  /// current order; each asks the exact search for a layout below the best arena.
  void step(arena_order_stats& stats) {
    const std::size_t n = current_.size();
    const std::size_t from = static_cast<std::size_t>(rng_() % n);
    const std::size_t v = current_[from];
    std::size_t lo = 0, hi = n - 1;
    for (auto p : g_.predecessors(v)) lo = std::max(lo, position_[p] + 1);
    for (auto s : g_.successors(v)) hi = std::min(hi, position_[s] - 1);
    if (lo == hi) return;
    std::size_t to = lo + static_cast<std::size_t>(rng_() % (hi - lo));
    if (to >= from) ++to;  // any place in [lo, hi] but `from`
    std::vector<std::size_t> candidate = current_;
    if (to > from) std::rotate(candidate.begin() + from, candidate.begin() + from + 1, candidate.begin() + to + 1);
    else std::rotate(candidate.begin() + to, candidate.begin() + from, candidate.begin() + from + 1);
    const std::int64_t peak = order_peak_unchecked(g_, candidate);
    if (peak > peak_limit_) return;
    ++stats.orders_in_bound;
    const std::vector<arena_buffer> buffers = buffers_of(candidate);
    const std::int64_t greedy = greedy_arena(buffers, n);
    if (greedy > current_greedy_) return;
    // The exact search (whose set-up is quadratic in the tensors) runs where the greedy layout
    // improved, and at every few orders of a plateau.
    const bool search = greedy < current_greedy_ || ++plateau_ % plateau_stride == 0;
    current_greedy_ = greedy;
    current_ = std::move(candidate);
    for (std::size_t k = std::min(from, to); k <= std::max(from, to); ++k) position_[current_[k]] = k;
    if (!search) return;
    ++stats.layouts_searched;
    search_current(layout_buffers_of(buffers), peak);
  }

  /// Asks the exact search for a layout of the current order (its `buffers` and `peak`) below the best arena.
  void search_current(std::span<const layout_buffer> buffers, std::int64_t peak) {
    layout_found f = layout_of(buffers, peak, best_.arena - 1, candidate_nodes);
    if (f.arena < best_.arena) {
      // The decision found some layout below the best; the least arena of this order may be lower still.
      best_order_ = current_;
      layout_found least = layout_of(buffers, peak, f.arena - 1, candidate_nodes);
      best_ = least.arena < f.arena ? std::move(least) : std::move(f);
    }
  }

  void finish(arena_order_result& r) {
    r.order = best_order_;
    std::vector<std::size_t> buffer_of;
    r.arena.strategy = arena_strategy::exact;
    const auto buffers = arena_buffers(g_, r.order, r.arena.first_step, r.arena.last_step, buffer_of);
    fill_arena_plan(g_, r.order, buffers, buffer_of, best_.offsets, best_.bound, r.arena);
    r.status = r.arena.arena_bytes == r.arena.peak_bytes && r.arena.peak_bytes <= r.start_peak_bytes ? solve_status::optimal
                                                                                                       : solve_status::feasible;
  }

  const memory_graph& g_;
  const arena_order_options& options_;
  deadline_clock clock_;
  std::mt19937_64 rng_;
  std::vector<std::size_t> current_, best_order_, position_;
  std::int64_t current_greedy_ = 0, peak_limit_ = 0;
  std::uint64_t plateau_ = 0;
  layout_found best_;
};

}  // namespace detail

/// An order of `graph` with the least arena found, starting from `start` (a topological order of
/// every vertex, typically serenity_order's). The start's tensors are laid out exactly
/// (solve_layout, under options.time_limit); when the arena is above the start's peak, a local
/// search tries other orders whose peak is at most (1 + peak_slack) x the start's, moving one
/// vertex at a time within its window, and keeps the order whose exact layout has the least arena.
/// Returns that order with its layout (check_arena accepts it), the start's arena beside it, and
/// status optimal when the arena equals a peak no larger than the start's. Deterministic for the
/// same options without a time limit (moves are drawn from `seed`; the searches are node-limited).
/// Complexity: per move O(n + m) for the peak and the greedy layout's O(B log B + P log B), plus a
/// node-limited exact search at each order the walk accepts, and the start's two (at its peak,
/// then its least arena), node-limited and a quarter of the time left each.
/// Throws invalid_order when `start` is not a topological order of every vertex; option_error for
/// a negative or non-finite peak_slack or time_limit; what make_memory_graph throws for a bad graph.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] arena_order_result arena_order(const G& graph, std::span<const std::size_t> start, const arena_order_options& options = {},
                                             const Maps&... maps) {
  const auto begin = std::chrono::steady_clock::now();
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  detail::check_order(g, start, "arena_order");
  if (!(options.peak_slack >= 0) || !std::isfinite(options.peak_slack))
    throw option_error("arena_order", "peak_slack", "must be a finite number >= 0");
  if (options.time_limit && !(options.time_limit->count() >= 0))
    throw option_error("arena_order", "time_limit", "must be >= 0");
  const auto deadline = options.time_limit ? detail::deadline_after(begin, *options.time_limit) : std::chrono::steady_clock::time_point::max();
  detail::arena_order_search search(g, std::vector<std::size_t>(start.begin(), start.end()), options, deadline);
  arena_order_result r = search.run();
  r.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  return r;
}

}  // namespace memsched
