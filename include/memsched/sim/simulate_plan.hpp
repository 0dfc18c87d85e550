#pragma once
// Checks and simulates execution plans with recomputation.

#include <memsched/core/config.hpp>
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
  std::int64_t peak_bytes = 0;   ///< Largest transient at a compute step.
  std::size_t peak_step = 0;     ///< The first step where the peak occurs.
  /// Sum of cost over compute steps: the sum over vertices plus the cost of the recomputations,
  /// so a plan without recomputation costs exactly the graph's total whatever its order.
  double total_cost = 0;
  /// The cost of the recomputations / (sum of cost over vertices) (0 when that sum is 0): exactly 0
  /// for a plan that computes each vertex once.
  double overhead = 0;
  std::size_t computes = 0;      ///< Number of compute steps.
  std::vector<std::int64_t> live_before;  ///< Resident bytes before each step.
  /// Bytes in use during each step: live_before + workspace + bytes for a compute (the peak
  /// candidates; without bytes when it reuses an input's buffer in place), live_before for a free.
  std::vector<std::int64_t> transient;
  std::vector<std::int64_t> live_after;  ///< Resident bytes after each step.
  /// Per step: the input whose buffer a compute takes over in place (sim/memory_model.hpp), or
  /// memory_step::none (always for frees).
  std::vector<std::size_t> reused;
};

/// The verdict on a plan: valid, or the first rule it breaks and where.
struct plan_check {
  bool valid = true;
  std::string error;               ///< Empty when valid.
  std::optional<std::size_t> step; ///< The offending step; nullopt for end-of-plan rules.
};

namespace detail {

/// The input whose buffer `compute v` at step k takes over in place: the first predecessor p of v
/// with memory_model::may_reuse whose `free p` follows step k before the next compute (it dies
/// there), or memory_step::none. `mark` is scratch of g.size() zeros, left zeroed. O(in-degree of
/// v + the frees that follow) for an in-place v, O(1) otherwise. Precondition: step k computes v < n.
inline std::size_t plan_reused_input(const memory_graph& g, const execution_plan& plan, std::size_t k, std::vector<char>& mark) {
  const std::size_t v = plan.steps[k].node;
  if (!g.inplace(v)) return memory_step::none;
  std::size_t end = k + 1;
  for (; end < plan.steps.size() && plan.steps[end].op == plan_op::free; ++end)
    if (plan.steps[end].node < g.size()) mark[plan.steps[end].node] = 1;
  std::size_t reused = memory_step::none;
  for (auto p : g.predecessors(v))
    if (mark[p] && memory_model::may_reuse(g, v, p)) {
      reused = p;
      break;
    }
  for (std::size_t j = k + 1; j < end; ++j)
    if (plan.steps[j].node < g.size()) mark[plan.steps[j].node] = 0;
  return reused;
}

MEMSCHED_DECL plan_check check_plan(const memory_graph& g, const execution_plan& plan, plan_simulation* sim);

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
/// timeline (live_before, transient, live_after, reused per step; allocation as in
/// sim/memory_model.hpp, frees as the plan says; an in-place compute takes over the buffer of an
/// input whose `free` follows it before the next compute). Same complexity as check_plan. Throws invalid_plan naming the
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

#ifndef MEMSCHED_SEPARATE_COMPILATION
#include <memsched/sim/impl/simulate_plan.ipp>
#endif
