#pragma once
// The result type shared by every rematerialization algorithm, heuristic or solver-based.

#include <memsched/core/status.hpp>
#include <memsched/remat/hiremate_stats.hpp>
#include <memsched/sim/execution_plan.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memsched {

/// remat_plan: the rule that ended its run.
/// - `none`: not reported (other algorithms).
/// - `finished`: every stage ran to its counted end (no time limit, or nothing to refine).
/// - `stalled`: the refinement's runs at every recompute depth in a row found nothing cheaper,
///   before the limit.
/// - `bound_met`: the best plan's cost meets a proven lower bound.
/// - `time_limit`: the limit ended it.
enum class remat_end_rule { none, finished, stalled, bound_met, time_limit };

/// The lower-case name of a rule ("stalled", "time_limit", ...). O(1), never throws.
[[nodiscard]] constexpr std::string_view to_string(remat_end_rule r) noexcept {
  switch (r) {
    case remat_end_rule::none: return "none";
    case remat_end_rule::finished: return "finished";
    case remat_end_rule::stalled: return "stalled";
    case remat_end_rule::bound_met: return "bound_met";
    case remat_end_rule::time_limit: return "time_limit";
  }
  return "none";
}

/// What a rematerialization algorithm did, beyond its plan. Fields an algorithm does not use keep
/// their defaults (zero, empty, nullopt); which ones each fills is in docs/remat.md.
struct remat_stats {
  double seconds = 0;          ///< Wall-clock time of the call.
  double seconds_to_best = 0;  ///< When the returned plan was found (solver-based algorithms).
  /// The input topological order of the staged plan space (solver-based algorithms; vertex indices).
  std::vector<std::size_t> order;
  std::string backend;  ///< Name of the solver backend ("cbc", "gecode", ...); empty for heuristics.
  // Model size (solver-based algorithms).
  std::size_t variables = 0, constraints = 0, nonzeros = 0, intervals = 0;
  std::int64_t memory_unit = 1;  ///< Bytes per model memory unit (gcd of sizes and workspaces).
  // Start solution handed to the solver.
  std::string start_source;       ///< "plan N", "no-remat", "eviction greedy N", "lp rounding", "phase 1", the lifetime search's "repair" / "repair at depth d" (either possibly " with two split points"), hiremate's "best-heuristic" / "dtr:<score>", or "".
  std::optional<double> start_cost;  ///< Total cost of that start.
  // Phases and searches.
  std::size_t lns_rounds = 0, lns_improvements = 0;   ///< Checkmate's large-neighbourhood search.
  std::optional<solve_status> solver_status;          ///< The backend's last full solve (Checkmate's full model, Moccasin's phase 2).
  std::optional<solve_status> phase1_status;          ///< Moccasin phase 1 (minimise the peak).
  std::int64_t phase1_peak = 0;                       ///< Moccasin: the peak reached by phase 1 (bytes).
  double phase1_seconds = 0;                          ///< Moccasin: when phase 1 ended.
  std::size_t lps_solved = 0, roundings = 0, roundings_fit = 0;  ///< Checkmate LP rounding.
  // Heuristic parameters chosen by a search.
  std::optional<std::size_t> snapshots;         ///< Revolve: the number of snapshots of the plan.
  std::optional<std::int64_t> segment_bytes;    ///< Greedy strategies: the segment size b of the plan.
  std::string method;  ///< remat_plan: the method whose plan was returned.
  remat_end_rule ended_by = remat_end_rule::none;  ///< remat_plan: the rule that ended the run.
  /// The cheapest plan remat_plan found along one input order.
  struct order_cost {
    double total_cost = 0;  ///< Sum of cost over its compute steps.
    double overhead = 0;    ///< total_cost / (sum of costs) - 1.
    friend bool operator==(const order_cost&, const order_cost&) = default;
  };
  /// remat_plan: the cheapest plan along each input order tried (options.order, then
  /// options.more_orders), in that order (nullopt: no plan along that order).
  std::vector<std::optional<order_cost>> cost_per_order;
  /// remat_plan: a proven lower bound on the cost of the plans along each order of
  /// cost_per_order (remat_cost_lower_bound's, or Checkmate's when higher), then over every plan
  /// for free_order_plan's entry; nullopt when none (the budget is infeasible).
  std::vector<std::optional<double>> cost_bound_per_order;
  /// hiremate_plan (and remat_plan when HiRemate's plan is returned): what the hierarchy did.
  std::optional<hiremate_stats> hiremate;

  /// Copies the MILP solver's part of `solver` (backend, model size and memory unit, start
  /// source and cost, LNS rounds and improvements, solver_status) and leaves the rest (times,
  /// order, method, ...): what a portfolio reports of the solver it ran, whichever plan won.
  /// Complexity: O(length of the strings). Throws: std::bad_alloc.
  void adopt_solver_stats(const remat_stats& solver) {
    backend = solver.backend;
    variables = solver.variables;
    constraints = solver.constraints;
    nonzeros = solver.nonzeros;
    memory_unit = solver.memory_unit;
    start_source = solver.start_source;
    start_cost = solver.start_cost;
    lns_rounds = solver.lns_rounds;
    lns_improvements = solver.lns_improvements;
    solver_status = solver.solver_status;
  }
};

/// An execution plan within a memory budget, with what the simulator measured for it. Statuses:
/// `optimal` (proven cheapest in the algorithm's plan space), `feasible` (within the budget, no
/// proof), `infeasible` (proven: no plan fits), `no_solution` (this method found no plan within the
/// budget and proved nothing; peak and cost then describe the plan it would have returned),
/// `time_limit`, `unsupported` (the strategy does not apply to the graph), `error`.
struct [[nodiscard]] remat_result {
  execution_plan plan;                            ///< Empty when status has no solution.
  solve_status status = solve_status::no_solution;
  std::int64_t peak_bytes = 0;                    ///< Simulated peak of the plan.
  double total_cost = 0;                          ///< Sum of cost over compute steps.
  double overhead = 0;                            ///< total_cost / (sum of costs) - 1.
  std::optional<double> cost_bound;               ///< A proven lower bound on the total cost, when known.
  remat_stats stats;
  std::string message;                            ///< Why (no plan, backend messages); empty when there is nothing to say.
};

}  // namespace memsched
