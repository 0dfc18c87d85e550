#pragma once
// The figures a remat_result reports are always the simulator's: one place copies them.
// Internals of the remat strategies.

#include <memsched/remat/remat_result.hpp>
#include <memsched/sim/simulate_plan.hpp>

namespace memsched::detail {

/// Sets r's peak_bytes, total_cost and overhead to those of `sim`, a simulation of r's plan. O(1).
inline void take_simulated_figures(remat_result& r, const plan_simulation& sim) {
  r.peak_bytes = sim.peak_bytes;
  r.total_cost = sim.total_cost;
  r.overhead = sim.overhead;
}

}  // namespace memsched::detail
