#pragma once
// Every rematerialization heuristic by name, and the cheapest plan over all of them within a
// budget (the warm start of the exact solvers).

#include <memsched/core/config.hpp>
#include <memsched/core/errors.hpp>
#include <memsched/remat/checkpoint_generalizations.hpp>
#include <memsched/remat/checkpoint_plan.hpp>
#include <memsched/remat/chen.hpp>
#include <memsched/remat/revolve.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memsched {

/// The heuristics of remat/: checkpoint-all, Chen's sqrt(n) and greedy (chains only), their
/// articulation-point and linearized generalizations, and revolve (over the articulation points).
/// Greedy ones search over the segment size, revolve over the number of snapshots.
enum class remat_heuristic { checkpoint_all, chen_sqrtn, chen_greedy, ap_sqrtn, ap_greedy, linearized_sqrtn, linearized_greedy, revolve };

/// Every heuristic, in the order above.
inline constexpr std::array<remat_heuristic, 8> all_remat_heuristics{
    remat_heuristic::checkpoint_all,   remat_heuristic::chen_sqrtn,       remat_heuristic::chen_greedy, remat_heuristic::ap_sqrtn,
    remat_heuristic::ap_greedy,        remat_heuristic::linearized_sqrtn, remat_heuristic::linearized_greedy, remat_heuristic::revolve};

/// The tool's name of a heuristic ("checkpoint-all", "chen-sqrtn", ...). O(1), never throws.
[[nodiscard]] constexpr std::string_view to_string(remat_heuristic h) noexcept {
  switch (h) {
    case remat_heuristic::checkpoint_all: return "checkpoint-all";
    case remat_heuristic::chen_sqrtn: return "chen-sqrtn";
    case remat_heuristic::chen_greedy: return "chen-greedy";
    case remat_heuristic::ap_sqrtn: return "ap-sqrtn";
    case remat_heuristic::ap_greedy: return "ap-greedy";
    case remat_heuristic::linearized_sqrtn: return "linearized-sqrtn";
    case remat_heuristic::linearized_greedy: return "linearized-greedy";
    case remat_heuristic::revolve: return "revolve";
  }
  return "";
}

/// The heuristic with that name, or nullopt. O(1), never throws.
[[nodiscard]] constexpr std::optional<remat_heuristic> parse_remat_heuristic(std::string_view name) noexcept {
  for (auto h : all_remat_heuristics)
    if (to_string(h) == name) return h;
  return std::nullopt;
}

/// Options of best_heuristic_plan and run_remat_heuristic (plain aggregate).
struct best_heuristic_options {
  /// The heuristics tried by best_heuristic_plan; empty: all_remat_heuristics.
  std::vector<remat_heuristic> heuristics;
  std::size_t greedy_budgets = 24;      ///< As greedy_options::greedy_budgets.
  std::size_t max_revolve_factor = 32;  ///< As revolve_options::max_revolve_factor.
  bool use_spare_memory = true;         ///< As sqrtn_options::use_spare_memory, for every heuristic.
};

/// Throws: option_error naming the field when options.heuristics holds a value that is not one of
/// all_remat_heuristics. Every greedy_budgets and max_revolve_factor is valid (0: only b = 0 /
/// counts as 1).
inline void check_best_heuristic_options(const best_heuristic_options& options) {
  for (auto h : options.heuristics)
    if (to_string(h).empty()) throw option_error("best_heuristic_plan", "heuristics", "must hold only the heuristics of all_remat_heuristics");
}

namespace detail {

/// One heuristic on a converted graph (greedy ones search b, revolve searches s).
MEMSCHED_DECL remat_result run_heuristic_on(const memory_graph& g, const strategy_input& in, remat_heuristic h, std::int64_t budget,
                                            const best_heuristic_options& o, std::chrono::steady_clock::time_point start);

}  // namespace detail

/// Runs one heuristic within `budget` (greedy ones with the search over b, revolve with the search
/// over s), with the parameters of `options` (its `heuristics` list is not used). `unsupported` for
/// chen-* when the forward part is not a chain.
/// Complexity and exceptions: those of the heuristic.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] remat_result run_remat_heuristic(const G& graph, remat_heuristic h, std::int64_t budget,
                                               const best_heuristic_options& options, const Maps&... maps) {
  const auto start = std::chrono::steady_clock::now();
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  const auto in = detail::prepare_strategy(g, detail::forward_mask(g), "run_remat_heuristic");
  return detail::run_heuristic_on(g, in, h, budget, options, start);
}

/// The cheapest valid plan within `budget` over options.heuristics (empty: every heuristic; ties:
/// lower peak, then the earlier heuristic in the list); status `feasible`, or `no_solution` with an
/// empty plan when none fits (`infeasible` when the budget is below what every plan needs).
/// Deterministic.
/// Complexity: O(options.greedy_budgets * (n + m) + (n + m) log n) plus revolve's snapshot search.
/// Throws: what check_best_heuristic_options throws (before any work); graph_error when a forward
/// node reads a backward node; what make_memory_graph throws.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] remat_result best_heuristic_plan(const G& graph, std::int64_t budget, const best_heuristic_options& options,
                                               const Maps&... maps) {
  const auto start = std::chrono::steady_clock::now();
  check_best_heuristic_options(options);
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  const auto in = detail::prepare_strategy(g, detail::forward_mask(g), "best_heuristic_plan");
  std::vector<remat_heuristic> hs = options.heuristics;
  if (hs.empty()) hs.assign(all_remat_heuristics.begin(), all_remat_heuristics.end());
  remat_result best;
  bool found = false;
  for (auto h : hs) {
    remat_result r = detail::run_heuristic_on(g, in, h, budget, options, start);
    if (r.status != solve_status::feasible) continue;
    if (!found || r.total_cost < best.total_cost || (r.total_cost == best.total_cost && r.peak_bytes < best.peak_bytes)) {
      best = std::move(r);
      best.message = "best of the heuristics: " + std::string(to_string(h));
      found = true;
    }
  }
  if (!found) {
    best = remat_result{};
    if (auto why = detail::budget_below_lower_bound(g, budget)) {
      best.status = solve_status::infeasible;
      best.message = *why;
    } else {
      best.message = "no heuristic plan fits the budget " + std::to_string(budget);
    }
  }
  best.stats.seconds = detail::seconds_since(start);
  return best;
}

/// best_heuristic_plan with default options.
template <class G>
  requires memory_graph_source<G>
[[nodiscard]] remat_result best_heuristic_plan(const G& graph, std::int64_t budget) {
  return best_heuristic_plan(graph, budget, best_heuristic_options{});
}

}  // namespace memsched

#ifndef MEMSCHED_SEPARATE_COMPILATION
#include <memsched/remat/impl/best_heuristic.ipp>
#endif
