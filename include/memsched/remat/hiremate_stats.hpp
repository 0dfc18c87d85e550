#pragma once
// What HiRemate (hiremate_plan, hiremate_partition) reports beside its plan: the partition's
// shape, how each level of the hierarchy was solved and what it proved. remat_stats holds it
// (remat_stats::hiremate), so every remat algorithm returns the same remat_result.

#include <memsched/core/status.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace memsched {

/// The H-Partition's statistics (hiremate_partition_result::stats, hiremate_stats::partition).
struct hiremate_partition_stats {
  std::size_t vertices = 0;            ///< Vertices partitioned (the forward ones).
  std::size_t levels = 0;              ///< Levels built (0 when the graph has at most max_top vertices).
  std::size_t subgraphs = 0;           ///< Groups with two members or more, over all levels.
  std::size_t distinct_subgraphs = 0;  ///< Classes of two vertices or more.
  std::size_t largest_subgraph = 0;    ///< Most original vertices in one group with two members or more.
  std::size_t top_nodes = 0;           ///< Nodes of the top graph.
  std::size_t fallback_levels = 0;     ///< Levels cut along a topological order.
  bool full_rounds = false;            ///< Every round wrapped while candidates were left (options.stop_at_max_top false).
  double seconds = 0;
};

/// A level of the hierarchy (hiremate_level_report::level). `lowest`: each class's subgraph
/// problem at each budget (hiremate_options::lower_solver, or the heuristics and DTR); `nested`:
/// the same solves by hierarchies of one level less (levels > 2; a hierarchy proves only budgets
/// below the per-node bound infeasible); `top`: the choice over the groups' options that gave the
/// hierarchy's plan.
enum class hiremate_report_level { lowest, nested, top };

/// The lower-case name of a level ("lowest", "nested", "top"). O(1), never throws.
[[nodiscard]] constexpr std::string_view to_string(hiremate_report_level l) noexcept {
  switch (l) {
    case hiremate_report_level::lowest: return "lowest";
    case hiremate_report_level::nested: return "nested";
    case hiremate_report_level::top: return "top";
  }
  return "top";
}

inline std::ostream& operator<<(std::ostream& os, hiremate_report_level l) { return os << to_string(l); }

/// Which top level gave the hierarchy's plan (hiremate_stats::top_method): `groups` (one option per
/// group) and `chain` (the groups checkpointed as a chain) are dynamic programmes, exact over the
/// options and the memory units they are given; `hilp` (the H-ILP, with
/// hiremate_options::top_solver) is proven when its backend says optimal; `none`: the hierarchy
/// has no plan within the budget.
enum class hiremate_top_method { none, groups, chain, hilp };

/// The lower-case name of a top method ("none", "groups", "chain", "hilp"). O(1), never throws.
[[nodiscard]] constexpr std::string_view to_string(hiremate_top_method m) noexcept {
  switch (m) {
    case hiremate_top_method::none: return "none";
    case hiremate_top_method::groups: return "groups";
    case hiremate_top_method::chain: return "chain";
    case hiremate_top_method::hilp: return "hilp";
  }
  return "none";
}

inline std::ostream& operator<<(std::ostream& os, hiremate_top_method m) { return os << to_string(m); }

/// How one level of the hierarchy was solved, and whether its answers are proven optimal for the
/// problems that level was given (hiremate_stats::level_reports). Whatever the levels say, the
/// plan is not proven optimal for the graph: the partition restricts the plans the hierarchy can
/// give, so hiremate_plan's status is at best feasible.
struct hiremate_level_report {
  hiremate_report_level level = hiremate_report_level::lowest;
  hiremate_top_method method = hiremate_top_method::none;  ///< top: hiremate_stats::top_method; none for the other levels.
  std::size_t solves = 0;          ///< Solves that gave the level's answers (lowest and nested: per class and budget; top: 1).
  /// Of them, proven by their solver: an optimal plan, or (lowest and nested) the budget proven
  /// infeasible. The default heuristics and DTR prove only the latter (a budget below the
  /// problem's per-node bound); hiremate_milp_lower_solver's plans are optimal along one order
  /// only, so it proves no more.
  std::size_t proven = 0;
  /// Lowest and nested: of the level's problems, how many the time limit cut short (classes_cut);
  /// top: 1 when the time limit was reached before the top level ended (a method or a repair round
  /// may have been skipped).
  std::size_t cut = 0;
  /// Every solve of the level is proven and none was cut.
  [[nodiscard]] bool optimal() const noexcept { return solves > 0 && proven == solves && cut == 0; }
};

/// What the hierarchy did: remat_stats::hiremate of hiremate_plan's result (and of remat_plan's
/// when HiRemate's plan is the one returned).
struct hiremate_stats {
  hiremate_partition_stats partition;  ///< The H-Partition's own statistics (levels, subgraphs, classes, top nodes).
  std::size_t levels = 0;          ///< Levels of the hierarchy solved (options.levels, fewer when the partition has fewer).
  std::size_t max_lower = 0;       ///< The M^l of that partition (options.partition.max_lower, doubled for max_chain_stages).
  std::size_t groups = 0;          ///< Groups of the level solved (level levels - 2), singletons included.
  std::size_t classes_solved = 0;  ///< Subgraph problems solved (one per class, plus groups whose problem differs).
  std::size_t classes_reused = 0;  ///< Classes that took the options of a problem an earlier (finer) partition solved.
  /// Of the problems solved or reused, how many had their solve cut short by the time limit (cheap
  /// options only or fewer budgets).
  std::size_t classes_cut = 0;
  /// Of the problems solved or reused, how many got the no-recomputation option along Serenity's
  /// order (its peak below the topological order's: options.tuning.serenity_states).
  std::size_t classes_serenity = 0;
  std::size_t repair_rounds = 0;   ///< Top-level choices redone after the simulator found an overshoot.
  double lower_seconds = 0, top_seconds = 0, heuristic_seconds = 0;  ///< Partition time: partition.seconds.
  std::size_t partitions_tried = 0;  ///< Partitions solved (options.tuning.partitions, twice with also_full_rounds); the others' statistics are not kept.
  double hierarchy_seconds = 0;      ///< Partitioning, lowest and top levels of every partition tried.
  std::optional<double> hierarchy_cost, heuristic_cost;  ///< Total cost of each candidate plan (when within budget).
  /// The hierarchy's top levels: one option per group, the chain schedule and the H-ILP (when within budget).
  std::optional<double> groups_cost, chain_cost, hilp_cost;
  hiremate_top_method top_method = hiremate_top_method::none;  ///< Which top level gave the hierarchy's plan.
  /// The H-ILP's last solve: the backend's status (optimal is within the model's simplified
  /// memory accounting, not a proof for the graph), model size, seconds; no status: not run.
  std::optional<solve_status> hilp_status;
  std::size_t hilp_variables = 0, hilp_constraints = 0;
  std::int64_t hilp_budget_raised = 0;  ///< Bytes the model's budget was raised by (its measured memory excess on the starts).
  /// The last solve's model objective (total cost, the graph's units) at its start (the cheapest
  /// start that fits the model), at the backend's answer, and the backend's proven lower bound on
  /// the model's optimum: no schedule of that model is cheaper than the bound. NaN when none.
  double hilp_start_objective = std::numeric_limits<double>::quiet_NaN();
  double hilp_objective = std::numeric_limits<double>::quiet_NaN();
  double hilp_bound = std::numeric_limits<double>::quiet_NaN();
  double hilp_seconds = 0;
  /// Calls of hiremate_options::lower_solver in the whole call (every partition tried, nested
  /// hierarchies included), and of these, how many returned a plan cheaper than the default lowest
  /// level's plan they asked for (hiremate_lower_limits::default_plan).
  std::size_t lower_solver_calls = 0, lower_solver_cheaper = 0;
  /// Nested hierarchies run for options.levels > 2 (every partition tried, deeper ones included):
  /// about classes x budgets x (1 + nested_resident_levels) per level above the lowest.
  std::size_t nested_hierarchies = 0;
  /// Partitions those nested hierarchies solved, in all (each at most options.tuning.nested_partitions).
  std::size_t nested_partitions_tried = 0;
  std::string source;  ///< "hierarchy" or "heuristic": which plan was returned.
  /// The levels of the hierarchy's plan (the partition stats describe), lowest first, top last;
  /// empty when no partition was solved. They describe the hierarchy also when the start's plan
  /// is returned (source "heuristic").
  std::vector<hiremate_level_report> level_reports;
};

}  // namespace memsched
