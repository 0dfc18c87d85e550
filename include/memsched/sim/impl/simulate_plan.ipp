#pragma once
// The definitions of sim/simulate_plan.hpp's functions declared MEMSCHED_DECL there. Header-only
// mode: that header includes this file at its end and they are compiled in the TUs that call them
// (core/config.hpp). With MEMSCHED_SEPARATE_COMPILATION only src/memsched.cpp includes it.

#include <memsched/sim/simulate_plan.hpp>

namespace memsched::detail {

MEMSCHED_DEF plan_check check_plan(const memory_graph& g, const execution_plan& plan, plan_simulation* sim) {
  const std::size_t n = g.size();
  std::vector<char> resident(n, 0), computed(n, 0), mark(g.has_inplace() ? n : 0, 0);
  std::int64_t live = 0;
  double extra_cost = 0;
  auto fail = [&](std::size_t k, std::string what) {
    return plan_check{false, "step " + std::to_string(k) + ": " + std::move(what), k};
  };
  if (sim) {
    *sim = plan_simulation{};
    sim->live_before.reserve(plan.steps.size());
    sim->transient.reserve(plan.steps.size());
    sim->live_after.reserve(plan.steps.size());
    sim->reused.reserve(plan.steps.size());
  }
  for (std::size_t k = 0; k < plan.steps.size(); ++k) {
    const auto [op, v] = plan.steps[k];
    if (v >= n) return fail(k, std::string(to_string(op)) + " of " + std::to_string(v) + ", which is not a vertex");
    if (sim) sim->live_before.push_back(live);
    std::int64_t transient = live;
    std::size_t reused = memory_step::none;
    if (op == plan_op::compute) {
      if (resident[v]) return fail(k, "compute " + g.label(v) + " while it is resident");
      for (auto p : g.predecessors(v))
        if (!resident[p]) return fail(k, "compute " + g.label(v) + " needs its input " + g.label(p) + ", which is not resident");
      reused = plan_reused_input(g, plan, k, mark);
      transient = memory_model::running_bytes(g, v, live, reused != memory_step::none);
      if (sim && (transient > sim->peak_bytes || sim->computes == 0)) {
        sim->peak_bytes = transient;
        sim->peak_step = k;
      }
      live += g.bytes(v);
      resident[v] = 1;
      // Only recomputations are summed here; the first computations add up to g.total_cost(), so
      // a plan that computes each vertex once has overhead exactly 0 whatever its order.
      if (computed[v]) extra_cost += g.cost(v);
      computed[v] = 1;
      if (sim) ++sim->computes;
    } else {
      if (!resident[v]) return fail(k, "free " + g.label(v) + ", which is not resident");
      resident[v] = 0;
      live -= g.bytes(v);
    }
    if (sim) {
      sim->transient.push_back(transient);
      sim->live_after.push_back(live);
      sim->reused.push_back(reused);
    }
  }
  for (std::size_t v = 0; v < n; ++v)
    if (!computed[v]) return plan_check{false, "end of plan: " + g.label(v) + " is never computed", std::nullopt};
  for (auto o : g.outputs())
    if (!resident[o]) return plan_check{false, "end of plan: output " + g.label(o) + " is not resident", std::nullopt};
  if (sim) {
    sim->total_cost = g.total_cost() + extra_cost;
    sim->overhead = g.total_cost() > 0 ? extra_cost / g.total_cost() : 0.0;
  }
  return {};
}

}  // namespace memsched::detail
