// Test support: checks of remat_plan's results shared by tests/remat/remat_plan*.cpp.
#pragma once

#include <memsched/graph/memory_graph.hpp>
#include <memsched/remat/remat_result.hpp>
#include <memsched/sim/memory_model.hpp>
#include <memsched/sim/simulate_plan.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>

namespace memsched::testing {

/// r's plan is valid, within the budget, and its peak and cost are what the simulator says.
inline void check_plan_of(const memory_graph& g, const remat_result& r, std::int64_t budget) {
  REQUIRE(has_solution(r.status));
  plan_simulation sim;
  const plan_check c = memsched::detail::check_plan(g, r.plan, &sim);
  INFO(c.error);
  REQUIRE(c.valid);
  CHECK(sim.peak_bytes <= budget);
  CHECK(sim.peak_bytes == r.peak_bytes);
  CHECK(sim.total_cost == doctest::Approx(r.total_cost));
  CHECK(!r.stats.method.empty());
}

/// The smallest budget budget_below_lower_bound accepts.
inline std::int64_t lower_bound_of(const memory_graph& g) {
  std::int64_t lb = 0;
  for (std::size_t v = 0; v < g.size(); ++v) lb = std::max(lb, memory_model::min_running_bytes(g, v));
  std::int64_t outs = 0;
  for (auto o : g.outputs()) outs += g.bytes(o);
  return std::max(lb, outs);
}

}  // namespace memsched::testing
