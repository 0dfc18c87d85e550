#pragma once
// Turns a sequence of computations into a plan by freeing every tensor as early as possible.

#include <memsched/core/errors.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/sim/execution_plan.hpp>
#include <memsched/sim/memory_model.hpp>

#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace memsched {

/// Given the vertices to compute, in order (a vertex may appear several times: recomputation),
/// returns the plan that frees each computed value right after its last use before the vertex's
/// next recomputation; outputs computed for the last time stay resident (the memory model's
/// lifetimes: sequence_lifetimes in sim/memory_model.hpp). O(len + sum of in-degrees).
/// The plan is valid when every input of each compute was computed earlier and every vertex
/// appears; check it with check_plan. Throws graph_error on an entry that is not a vertex.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] execution_plan plan_from_computes(const G& graph, std::span<const std::size_t> computes,
                                                const Maps&... maps) {
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  const std::size_t len = computes.size();
  for (std::size_t k = 0; k < len; ++k)
    if (computes[k] >= g.size())
      throw graph_error("plan_from_computes: entry " + std::to_string(k) + " (" + std::to_string(computes[k]) + ") is not a vertex");
  // frees_after[k]: values whose life ends right after position k (the memory model's lifetimes).
  const std::vector<std::size_t> free_after = sequence_lifetimes(g, computes);
  std::vector<std::vector<std::size_t>> frees_after(len);
  for (std::size_t k = 0; k < len; ++k)
    if (free_after[k] != kept_to_end) frees_after[free_after[k]].push_back(computes[k]);
  execution_plan plan;
  plan.steps.reserve(2 * len);
  for (std::size_t k = 0; k < len; ++k) {
    plan.steps.push_back({plan_op::compute, computes[k]});
    for (std::size_t v : frees_after[k]) plan.steps.push_back({plan_op::free, v});
  }
  return plan;
}

}  // namespace memsched
