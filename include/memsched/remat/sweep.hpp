#pragma once
// Budget sweeps: every applicable heuristic at each of a list of memory budgets, with its peak,
// total cost and overhead (the data of Checkmate's Figure 5).

#include <memsched/core/errors.hpp>
#include <memsched/order/peak_lower_bound.hpp>
#include <memsched/remat/best_heuristic.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace memsched {

namespace detail {

/// `count` budgets evenly spaced from `lo` to `hi`, both included, each rounded up to a byte (one
/// budget: `hi`). The one spreading rule of remat_sweep and hiremate_subgraph_options. O(count).
/// Preconditions: lo <= hi, count >= 1.
inline std::vector<std::int64_t> spread_budgets(std::int64_t lo, std::int64_t hi, std::size_t count) {
  std::vector<std::int64_t> out;
  out.reserve(count);
  for (std::size_t i = 0; i < count; ++i)
    out.push_back(count == 1 ? hi
                             : lo + static_cast<std::int64_t>((static_cast<long double>(hi - lo) * i + (count - 2)) / (count - 1)));
  return out;
}

}  // namespace detail

/// Options of remat_sweep (plain aggregate).
struct sweep_options {
  /// The budgets, in bytes. Empty: num_budgets budgets evenly spaced from the peak lower bound to
  /// the no-remat (checkpoint-all) peak, both included.
  std::vector<std::int64_t> budgets;
  std::size_t num_budgets = 10;
  /// The heuristics to run; empty: all of them. Those that do not apply to the graph (chen-* off
  /// chains) are left out of the rows.
  std::vector<remat_heuristic> heuristics;
  /// Parameters of the heuristics (its `heuristics` list is not used: see above).
  best_heuristic_options heuristic_options;
};

/// One heuristic at one budget.
struct sweep_entry {
  remat_heuristic heuristic = remat_heuristic::checkpoint_all;
  solve_status status = solve_status::no_solution;  ///< feasible, no_solution (over budget) or infeasible (proven).
  std::int64_t peak_bytes = 0;  ///< Peak of the strategy's plan (also when over budget).
  double total_cost = 0;
  double overhead = 0;          ///< total_cost / (sum of costs) - 1.
  double seconds = 0;
};

/// Every heuristic at one budget.
struct sweep_row {
  std::int64_t budget = 0;
  std::vector<sweep_entry> entries;
};

/// The sweep, with the two ends of the budget range.
struct [[nodiscard]] sweep_result {
  std::int64_t lower_bound = 0;    ///< peak_lower_bound of the graph: no plan needs less.
  std::int64_t no_remat_peak = 0;  ///< Peak of checkpoint-all.
  std::vector<sweep_row> rows;
};

/// Throws: option_error naming heuristics when it holds a value that is not one of
/// all_remat_heuristics. Every num_budgets is valid (0 counts as 1); negative budgets are
/// graph_errors (see remat_sweep).
inline void check_sweep_options(const sweep_options& options) {
  for (auto h : options.heuristics)
    if (to_string(h).empty()) throw option_error("remat_sweep", "heuristics", "must hold only the heuristics of all_remat_heuristics");
}

/// Runs every applicable heuristic at every budget. O(budgets * heuristics * cost of one).
/// Throws what check_sweep_options throws (before any work); graph_error when a forward node reads
/// a backward node or a budget is negative; what make_memory_graph throws for a bad graph.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] sweep_result remat_sweep(const G& graph, const sweep_options& options, const Maps&... maps) {
  const auto start = std::chrono::steady_clock::now();
  check_sweep_options(options);
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  const auto in = detail::prepare_strategy(g, detail::forward_mask(g), "remat_sweep");
  const best_heuristic_options& hopts = options.heuristic_options;
  sweep_result out;
  out.lower_bound = peak_lower_bound(g);
  out.no_remat_peak = detail::run_heuristic_on(g, in, remat_heuristic::checkpoint_all, unlimited_budget, hopts, start).peak_bytes;
  std::vector<std::int64_t> budgets = options.budgets;
  if (budgets.empty()) budgets = detail::spread_budgets(std::min(out.lower_bound, out.no_remat_peak), out.no_remat_peak, std::max<std::size_t>(options.num_budgets, 1));
  std::vector<remat_heuristic> hs = options.heuristics;
  if (hs.empty()) hs.assign(all_remat_heuristics.begin(), all_remat_heuristics.end());
  for (std::int64_t b : budgets) {
    if (b < 0) throw graph_error("remat_sweep: budget " + std::to_string(b) + " is negative");
    sweep_row row{b, {}};
    for (auto h : hs) {
      const remat_result r = detail::run_heuristic_on(g, in, h, b, hopts, std::chrono::steady_clock::now());
      if (r.status == solve_status::unsupported) continue;
      row.entries.push_back({h, r.status, r.peak_bytes, r.total_cost, r.overhead, r.stats.seconds});
    }
    out.rows.push_back(std::move(row));
  }
  return out;
}

}  // namespace memsched
