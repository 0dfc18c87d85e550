#pragma once
// The result type shared by every rematerialization algorithm.

#include <memsched/core/status.hpp>
#include <memsched/sim/execution_plan.hpp>

#include <cstdint>
#include <optional>

namespace memsched {

/// An execution plan within a memory budget, with what the simulator measured for it.
struct [[nodiscard]] remat_result {
  execution_plan plan;                            ///< Empty when status has no solution.
  solve_status status = solve_status::infeasible;
  std::int64_t peak_bytes = 0;                    ///< Simulated peak of the plan.
  double total_cost = 0;                          ///< Sum of cost over compute steps.
  double overhead = 0;                            ///< total_cost / (sum of costs) - 1.
  std::optional<double> cost_bound;               ///< A proven lower bound on the total cost, when known.
  double seconds = 0;                             ///< Wall-clock time.
};

}  // namespace memsched
