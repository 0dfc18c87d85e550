#pragma once
// Turns a sequence of computations into a plan by freeing every tensor as early as possible.

#include <memsched/core/errors.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/sim/execution_plan.hpp>

#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace memsched {

/// Given the vertices to compute, in order (a vertex may appear several times: recomputation),
/// returns the plan that frees each computed value right after its last use before the vertex's
/// next recomputation; outputs computed for the last time stay resident. O(len + sum of in-degrees).
/// The plan is valid when every input of each compute was computed earlier and every vertex
/// appears; check it with check_plan. Throws graph_error on an entry that is not a vertex.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] execution_plan plan_from_computes(const G& graph, std::span<const std::size_t> computes,
                                                const Maps&... maps) {
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  const std::size_t len = computes.size();
  constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
  for (std::size_t k = 0; k < len; ++k)
    if (computes[k] >= g.size())
      throw graph_error("plan_from_computes: entry " + std::to_string(k) + " (" + std::to_string(computes[k]) + ") is not a vertex");
  // last_use[k]: the last position that reads the value computed at position k (none if unread).
  std::vector<std::size_t> last_use(len, none), current(g.size(), none);
  std::vector<char> recomputed_later(len, 0);
  for (std::size_t k = 0; k < len; ++k) {
    const std::size_t v = computes[k];
    for (auto p : g.predecessors(v))
      if (current[p] != none) last_use[current[p]] = k;
    if (current[v] != none) recomputed_later[current[v]] = 1;
    current[v] = k;
  }
  // frees_after[k]: values whose life ends right after position k.
  std::vector<std::vector<std::size_t>> frees_after(len);
  for (std::size_t k = 0; k < len; ++k) {
    const std::size_t v = computes[k];
    if (!recomputed_later[k] && g.is_output(v)) continue;
    frees_after[last_use[k] == none ? k : last_use[k]].push_back(v);
  }
  execution_plan plan;
  plan.steps.reserve(2 * len);
  for (std::size_t k = 0; k < len; ++k) {
    plan.steps.push_back({plan_op::compute, computes[k]});
    for (std::size_t v : frees_after[k]) plan.steps.push_back({plan_op::free, v});
  }
  return plan;
}

}  // namespace memsched
