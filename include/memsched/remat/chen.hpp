#pragma once
// Chen, Xu, Zhang, Guestrin, "Training Deep Nets with Sublinear Memory Cost" (2016): the sqrt(n)
// and greedy checkpoint selections, on a training graph whose forward part is a chain, and the
// search over the greedy segment size b for the cheapest plan within a memory budget.
// The selections take a candidate list, so Checkmate's generalizations to non-linear graphs
// (checkpoint_generalizations.hpp) reuse them. Plans come from checkpoint_plan.hpp. As in
// Checkmate's fixed-checkpoint S matrix, the forward values after the last checkpoint (the last
// segment) are kept: recomputing them right at the start of the backward phase would cost time
// and save no memory.

#include <memsched/remat/checkpoint_plan.hpp>
#include <memsched/remat/heuristic_options.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string_view>
#include <vector>

namespace memsched {

/// Chen's sqrt(n) selection (as in Checkmate): with k = floor(sqrt(|candidates|)) (at least 1),
/// checkpoints every candidate at position i with (i + 1) % k == 0, i.e. the ends of about
/// sqrt(n) segments. O(|candidates|), never throws but std::bad_alloc.
[[nodiscard]] inline std::vector<std::size_t> sqrtn_checkpoints(std::span<const std::size_t> candidates) {
  std::vector<std::size_t> out;
  if (candidates.empty()) return out;
  const auto k = std::max<std::size_t>(1, static_cast<std::size_t>(std::sqrt(static_cast<double>(candidates.size()))));
  for (std::size_t i = 0; i < candidates.size(); ++i)
    if ((i + 1) % k == 0) out.push_back(candidates[i]);
  return out;
}

/// Chen's greedy selection with segment size b: walks `forward_order` accumulating bytes; at a
/// candidate (is_candidate[v] != 0) where the running total exceeds b, checkpoints it and resets
/// the total. O(|forward_order|). Precondition: every entry of forward_order is a vertex of g and
/// is_candidate has one entry per vertex.
[[nodiscard]] inline std::vector<std::size_t> greedy_checkpoints(const memory_graph& g, std::span<const std::uint32_t> forward_order,
                                                                 const std::vector<char>& is_candidate, std::int64_t b) {
  std::vector<std::size_t> out;
  std::int64_t running = 0;
  for (auto v : forward_order) {
    running += g.bytes(v);
    if (is_candidate[v] && running > b) {
      out.push_back(v);
      running = 0;
    }
  }
  return out;
}

namespace detail {

/// keep-mask of `checkpoints` plus every forward vertex after the last one in forward order.
inline std::vector<char> keep_with_tail(const memory_graph& g, const training_split& split, std::span<const std::size_t> checkpoints) {
  std::vector<char> keep(g.size(), 0);
  for (auto v : checkpoints) keep[v] = 1;
  const auto& order = split.forward_order;
  std::size_t k = order.size();
  while (k > 0 && !keep[order[k - 1]]) --k;
  for (; k < order.size(); ++k) keep[order[k]] = 1;
  return keep;
}

/// True when the forward vertices form one directed path (Chen's setting).
inline bool forward_is_chain(const memory_graph& g, const std::vector<char>& fwd, const training_split& split) {
  std::size_t edges = 0;
  for (auto v : split.forward_order) {
    std::size_t in = 0, out = 0;
    for (auto p : g.predecessors(v)) in += fwd[p] ? 1 : 0;
    for (auto s : g.successors(v)) out += fwd[s] ? 1 : 0;
    if (in > 1 || out > 1) return false;
    edges += in;
  }
  return split.forward_order.empty() || edges + 1 == split.forward_order.size();
}

inline std::vector<std::size_t> as_indices(std::span<const std::uint32_t> order) { return {order.begin(), order.end()}; }

/// The plan for a fixed checkpoint list (with the tail kept).
inline remat_result fixed_checkpoints_strategy(const memory_graph& g, const training_split& split,
                                               std::span<const std::size_t> checkpoints, std::int64_t budget, bool use_spare_memory,
                                               std::chrono::steady_clock::time_point start) {
  const auto keep = keep_with_tail(g, split, checkpoints);
  return finish_strategy_plan(g, checkpoint_sequence(g, split, keep), budget, use_spare_memory, start);
}

/// The budgets b tried by the greedy search: 0 and a geometric grid over the forward sizes.
inline std::vector<std::int64_t> greedy_grid(const memory_graph& g, const training_split& split, std::size_t count) {
  std::int64_t lo = std::numeric_limits<std::int64_t>::max(), total = 0;
  for (auto v : split.forward_order) {
    if (g.bytes(v) > 0) lo = std::min(lo, g.bytes(v));
    total += g.bytes(v);
  }
  std::vector<std::int64_t> grid{0};
  if (total <= 0 || count == 0) return grid;
  if (lo > total) lo = total;
  const double a = std::log(static_cast<double>(lo)), z = std::log(static_cast<double>(total));
  for (std::size_t i = 0; i < count; ++i) {
    const double t = count == 1 ? 1.0 : static_cast<double>(i) / static_cast<double>(count - 1);
    grid.push_back(static_cast<std::int64_t>(std::exp(a + (z - a) * t)));
  }
  std::sort(grid.begin(), grid.end());
  grid.erase(std::unique(grid.begin(), grid.end()), grid.end());
  return grid;
}

/// The cheapest greedy plan within the budget over the grid of b (ties: lower peak), refined by
/// bisecting b between the best feasible grid value and the next one (peaks grow with b, roughly);
/// when none fits, the lowest-peak one, marked no_solution (or infeasible, see finish_plan).
inline remat_result greedy_search_strategy(const memory_graph& g, const training_split& split, const std::vector<char>& is_candidate,
                                           std::int64_t budget, const greedy_options& options,
                                           std::chrono::steady_clock::time_point start) {
  std::vector<char> best_keep, last_keep, low_keep;
  std::int64_t low_peak = 0, low_b = -1;
  bool last_keep_fits = false;
  std::int64_t best_peak = 0, best_b = -1;
  double best_cost = 0;
  bool best_fits = false;
  auto consider = [&](std::int64_t b) {
    const auto cps = greedy_checkpoints(g, split.forward_order, is_candidate, b);
    auto keep = keep_with_tail(g, split, cps);
    if (keep == last_keep) return last_keep_fits;
    last_keep = keep;
    const auto seq = checkpoint_sequence(g, split, keep);
    const auto [peak, cost] = sequence_peak_cost(g, seq);
    const bool fits = peak <= budget;
    last_keep_fits = fits;
    if (fits && (low_keep.empty() || peak < low_peak)) {
      low_keep = keep;
      low_peak = peak;
      low_b = b;
    }
    const bool better = best_keep.empty() || (fits && !best_fits) ||
                        (fits == best_fits && (fits ? (cost < best_cost || (cost == best_cost && peak < best_peak)) : peak < best_peak));
    if (better) {
      best_keep = std::move(keep);
      best_peak = peak;
      best_cost = cost;
      best_fits = fits;
      best_b = b;
    }
    return fits;
  };
  const auto grid = greedy_grid(g, split, options.greedy_budgets);
  for (std::int64_t b : grid) consider(b);
  if (best_fits) {
    // Bisect between the best b and the next grid value for a larger b that still fits.
    auto it = std::upper_bound(grid.begin(), grid.end(), best_b);
    if (it != grid.end()) {
      std::int64_t lo = best_b, hi = *it;
      for (int step = 0; step < 12 && hi - lo > 1; ++step) {
        const std::int64_t mid = lo + (hi - lo) / 2;
        if (consider(mid)) lo = mid;
        else hi = mid;
      }
    }
  }
  remat_result best = finish_strategy_plan(g, checkpoint_sequence(g, split, best_keep), budget, options.use_spare_memory, start);
  best.stats.segment_bytes = best_b;
  // With spare memory, relaxing the lowest-peak plan may beat relaxing the cheapest one.
  if (best_fits && low_keep != best_keep && options.use_spare_memory && budget != unlimited_budget) {
    remat_result low = finish_strategy_plan(g, checkpoint_sequence(g, split, low_keep), budget, options.use_spare_memory, start);
    if (low.status == solve_status::feasible && low.total_cost < best.total_cost) {
      best = std::move(low);
      best.stats.segment_bytes = low_b;
    }
  }
  best.stats.seconds = seconds_since(start);
  return best;
}

/// chen_sqrtn_plan on a converted graph.
inline remat_result chen_sqrtn_on(const memory_graph& g, const strategy_input& in, std::int64_t budget, const sqrtn_options& options,
                                  std::chrono::steady_clock::time_point start) {
  if (!forward_is_chain(g, in.forward, in.split)) return unsupported_result(start, "chen_sqrtn_plan: the forward part is not a chain");
  const auto cps = sqrtn_checkpoints(as_indices(in.split.forward_order));
  return fixed_checkpoints_strategy(g, in.split, cps, budget, options.use_spare_memory, start);
}

/// Greedy checkpoints over the candidates with a fixed segment size, or the search over it.
inline remat_result greedy_on(const memory_graph& g, const strategy_input& in, const std::vector<char>& is_candidate,
                              std::int64_t budget, const greedy_options& options, std::chrono::steady_clock::time_point start) {
  if (!options.segment_bytes) return greedy_search_strategy(g, in.split, is_candidate, budget, options, start);
  const auto cps = greedy_checkpoints(g, in.split.forward_order, is_candidate, *options.segment_bytes);
  remat_result r = fixed_checkpoints_strategy(g, in.split, cps, budget, options.use_spare_memory, start);
  r.stats.segment_bytes = options.segment_bytes;
  return r;
}

/// chen_greedy_plan on a converted graph.
inline remat_result chen_greedy_on(const memory_graph& g, const strategy_input& in, std::int64_t budget, const greedy_options& options,
                                   std::chrono::steady_clock::time_point start) {
  if (!forward_is_chain(g, in.forward, in.split)) return unsupported_result(start, "chen_greedy_plan: the forward part is not a chain");
  return greedy_on(g, in, in.forward, budget, options, start);
}

}  // namespace detail

/// Chen's sqrt(n) strategy on a training graph whose forward part is a chain: checkpoints the ends
/// of about sqrt(n) segments of the forward chain (sqrtn_checkpoints over all forward vertices in
/// order) and returns the cheapest plan for them. `unsupported` when the forward part is not a
/// chain (use ap_sqrtn_plan or linearized_sqrtn_plan); `no_solution` when the plan's peak exceeds
/// `budget` (`infeasible` when the budget is below what every plan needs).
/// Complexity: O((n + m) log n).
/// Throws: graph_error when a forward node reads a backward node; what make_memory_graph throws.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] remat_result chen_sqrtn_plan(const G& graph, std::int64_t budget, const sqrtn_options& options, const Maps&... maps) {
  const auto start = std::chrono::steady_clock::now();
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  const auto in = detail::prepare_strategy(g, detail::forward_mask(g), "chen_sqrtn_plan");
  return detail::chen_sqrtn_on(g, in, budget, options, start);
}

/// chen_sqrtn_plan with default options.
template <class G>
  requires memory_graph_source<G>
[[nodiscard]] remat_result chen_sqrtn_plan(const G& graph, std::int64_t budget) {
  return chen_sqrtn_plan(graph, budget, sqrtn_options{});
}

/// Chen's greedy strategy on a chain. With options.segment_bytes = b: greedy_checkpoints with
/// segment size b. Without: the search over b (b = 0 and options.greedy_budgets values on a
/// geometric grid up to the total forward size, refined by up to 12 bisection steps above the best
/// grid value) for the cheapest plan within `budget` (ties: lower peak); stats.segment_bytes is the
/// b of the returned plan. `unsupported` off chains; `no_solution` (with the lowest peak found) when
/// no plan fits, `infeasible` when the budget is below what every plan needs.
/// Complexity: O((n + m) log n) with a fixed b, O((options.greedy_budgets + 12) * (n + m)) more for
/// the search.
/// Throws: graph_error when a forward node reads a backward node; what make_memory_graph throws.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] remat_result chen_greedy_plan(const G& graph, std::int64_t budget, const greedy_options& options, const Maps&... maps) {
  const auto start = std::chrono::steady_clock::now();
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  const auto in = detail::prepare_strategy(g, detail::forward_mask(g), "chen_greedy_plan");
  return detail::chen_greedy_on(g, in, budget, options, start);
}

/// chen_greedy_plan with default options (the search over b).
template <class G>
  requires memory_graph_source<G>
[[nodiscard]] remat_result chen_greedy_plan(const G& graph, std::int64_t budget) {
  return chen_greedy_plan(graph, budget, greedy_options{});
}

}  // namespace memsched
