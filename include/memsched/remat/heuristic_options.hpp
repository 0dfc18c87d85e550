#pragma once
// The options of every rematerialization heuristic, each a plain aggregate used with designated
// initializers: `chen_greedy_plan(graph, budget, greedy_options{.segment_bytes = 1 << 20})`.
// Every heuristic is called as `X_plan(graph, budget, options, maps...)` or `X_plan(graph, budget)`.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace memsched {

/// checkpoint_plan: the checkpoint set.
struct checkpoint_options {
  /// Forward vertex indices kept from the forward phase for the backward phase.
  std::vector<std::size_t> checkpoints;
};

/// checkpoint_all_plan: nothing to choose (kept so that every strategy has the same signature).
struct checkpoint_all_options {};

/// chen_sqrtn_plan, ap_sqrtn_plan, linearized_sqrtn_plan.
struct sqrtn_options {
  /// Use the memory the budget leaves spare: after the strategy has built its plan, skip
  /// recomputations (keep the earlier value instead) as long as the peak stays within the budget,
  /// most expensive first. Applies only with a finite budget (not unlimited_budget), so a strategy
  /// without a budget returns its own plan.
  bool use_spare_memory = true;
};

/// chen_greedy_plan, ap_greedy_plan, linearized_greedy_plan.
struct greedy_options {
  /// The segment size b (bytes). nullopt: search b for the cheapest plan within the budget (b = 0
  /// and `greedy_budgets` values on a geometric grid up to the total forward size, then up to 12
  /// bisection steps above the best grid value).
  std::optional<std::int64_t> segment_bytes;
  std::size_t greedy_budgets = 24;
  bool use_spare_memory = true;  ///< As sqrtn_options::use_spare_memory.
};

/// revolve_plan.
struct revolve_options {
  /// The number of snapshots s >= 1. nullopt: the largest s whose plan fits the budget, among s
  /// with t(l, s) <= max_revolve_factor * l.
  std::optional<std::size_t> snapshots;
  /// Revolve never builds a schedule with more than this many forward steps per chain step; fewer
  /// snapshots than that are not tried by the search.
  std::size_t max_revolve_factor = 32;
  bool use_spare_memory = true;  ///< As sqrtn_options::use_spare_memory.
};

}  // namespace memsched
