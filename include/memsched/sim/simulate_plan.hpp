#pragma once
// Checks and simulates execution plans with recomputation.

#include <memsched/core/errors.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/sim/execution_plan.hpp>
#include <memsched/sim/memory_model.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace memsched {

/// What a plan does: its peak, its cost and the memory after every step.
struct plan_simulation {
  std::int64_t peak_bytes = 0;   ///< Largest (resident + bytes + workspace) at a compute step.
  std::size_t peak_step = 0;     ///< The first step where the peak occurs.
  double total_cost = 0;         ///< Sum of cost over compute steps.
  double overhead = 0;           ///< total_cost / (sum of cost over vertices) - 1 (0 when that sum is 0).
  std::size_t computes = 0;      ///< Number of compute steps.
  std::vector<std::int64_t> live_before;  ///< Resident bytes before each step.
  /// Bytes in use during each step: live_before + bytes + workspace for a compute (the peak
  /// candidates), live_before for a free.
  std::vector<std::int64_t> transient;
  std::vector<std::int64_t> live_after;  ///< Resident bytes after each step.
};

/// The verdict on a plan: valid, or the first rule it breaks and where.
struct plan_check {
  bool valid = true;
  std::string error;               ///< Empty when valid.
  std::optional<std::size_t> step; ///< The offending step; nullopt for end-of-plan rules.
};

namespace detail {

inline plan_check check_plan(const memory_graph& g, const execution_plan& plan, plan_simulation* sim) {
  const std::size_t n = g.size();
  std::vector<char> resident(n, 0), computed(n, 0);
  std::int64_t live = 0;
  double cost = 0;
  auto fail = [&](std::size_t k, std::string what) {
    return plan_check{false, "step " + std::to_string(k) + ": " + std::move(what), k};
  };
  if (sim) {
    *sim = plan_simulation{};
    sim->live_before.reserve(plan.steps.size());
    sim->transient.reserve(plan.steps.size());
    sim->live_after.reserve(plan.steps.size());
  }
  for (std::size_t k = 0; k < plan.steps.size(); ++k) {
    const auto [op, v] = plan.steps[k];
    if (v >= n) return fail(k, std::string(to_string(op)) + " of " + std::to_string(v) + ", which is not a vertex");
    if (sim) sim->live_before.push_back(live);
    std::int64_t transient = live;
    if (op == plan_op::compute) {
      if (resident[v]) return fail(k, "compute " + g.label(v) + " while it is resident");
      for (auto p : g.predecessors(v))
        if (!resident[p]) return fail(k, "compute " + g.label(v) + " needs its input " + g.label(p) + ", which is not resident");
      transient = memory_model::running_bytes(g, v, live);
      if (sim && (transient > sim->peak_bytes || sim->computes == 0)) {
        sim->peak_bytes = transient;
        sim->peak_step = k;
      }
      live += g.bytes(v);
      resident[v] = computed[v] = 1;
      cost += g.cost(v);
      if (sim) ++sim->computes;
    } else {
      if (!resident[v]) return fail(k, "free " + g.label(v) + ", which is not resident");
      resident[v] = 0;
      live -= g.bytes(v);
    }
    if (sim) {
      sim->transient.push_back(transient);
      sim->live_after.push_back(live);
    }
  }
  for (std::size_t v = 0; v < n; ++v)
    if (!computed[v]) return plan_check{false, "end of plan: " + g.label(v) + " is never computed", std::nullopt};
  for (auto o : g.outputs())
    if (!resident[o]) return plan_check{false, "end of plan: output " + g.label(o) + " is not resident", std::nullopt};
  if (sim) {
    sim->total_cost = cost;
    sim->overhead = g.total_cost() > 0 ? cost / g.total_cost() - 1.0 : 0.0;
  }
  return {};
}

}  // namespace detail

/// Checks a plan against the rules of execution_plan. O(steps + sum of in-degrees of computed
/// vertices). Never throws for a bad plan (the verdict says what is wrong); throws what
/// make_memory_graph throws for a bad graph.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] plan_check check_plan(const G& graph, const execution_plan& plan, const Maps&... maps) {
  return detail::check_plan(detail::to_memory_graph(graph, maps...), plan, nullptr);
}

/// Simulates a plan: peak, total cost, overhead against computing every vertex once, and the
/// timeline (live_before, transient, live_after per step; allocation as in sim/memory_model.hpp,
/// frees as the plan says). Same complexity as check_plan. Throws invalid_plan naming the
/// first violated rule and step when the plan is not valid.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] plan_simulation simulate_plan(const G& graph, const execution_plan& plan, const Maps&... maps) {
  plan_simulation sim;
  const plan_check verdict = detail::check_plan(detail::to_memory_graph(graph, maps...), plan, &sim);
  if (!verdict.valid) throw invalid_plan("simulate_plan: " + verdict.error, verdict.step.value_or(plan.steps.size()));
  return sim;
}

}  // namespace memsched
