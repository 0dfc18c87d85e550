// Test support: Checkmate's eviction greedy along an order, one simulated plan per policy, written
// out from detail::staged_eviction_computes for the tests that cross-check the stages built on it
// (remat_plan's eviction stage, hiremate's start) instead of taking their own loops on trust.
#pragma once

#include <memsched/graph/memory_graph.hpp>
#include <memsched/remat/detail/checkmate_greedy.hpp>
#include <memsched/remat/remat_result.hpp>
#include <memsched/sim/plan_from_computes.hpp>
#include <memsched/sim/simulate_plan.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace memsched::testing {

/// One result per eviction policy that does not get stuck along `order`: its plan, the simulator's
/// peak and cost, stats.method "eviction greedy <policy>", status feasible when the peak is within
/// `budget` (it is by construction; callers check) and no_solution otherwise.
inline std::vector<remat_result> eviction_greedy_plans(const memory_graph& g, std::span<const std::size_t> order, std::int64_t budget) {
  std::vector<remat_result> plans;
  for (auto policy : memsched::detail::all_eviction_policies)
    if (const auto computes = memsched::detail::staged_eviction_computes(g, order, budget, policy)) {
      remat_result r;
      r.plan = plan_from_computes(g, std::span<const std::size_t>(*computes));
      const plan_simulation sim = simulate_plan(g, r.plan);
      r.status = sim.peak_bytes <= budget ? solve_status::feasible : solve_status::no_solution;
      r.peak_bytes = sim.peak_bytes;
      r.total_cost = sim.total_cost;
      r.stats.method = "eviction greedy " + std::to_string(static_cast<int>(policy));
      plans.push_back(std::move(r));
    }
  return plans;
}

}  // namespace memsched::testing
