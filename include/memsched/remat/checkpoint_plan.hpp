#pragma once
// The cheapest execution plan of a training graph that respects a checkpoint set (Checkmate's
// "optimal R for a given S") and the checkpoint-all baseline.
//
// Model. A training graph's vertices are split into forward nodes and backward nodes (gradients,
// the loss) by their training roles (memory_graph::role; node bundles and the `role` property map
// carry them into every graph type). No forward node may read a backward node. A plan for checkpoint set S (forward
// vertices) runs in two phases:
//   1. forward phase: every forward vertex once, in topological order; a forward value that is not
//      in S (and not a graph output) is freed after its last forward consumer;
//   2. backward phase: every backward vertex once, in topological order; a forward value it reads
//      that is not resident is recomputed just before, together with the non-resident forward
//      values that value needs (recursively), in topological order. Recomputed values stay until
//      their last use, so each is recomputed at most once.
// Every tensor is freed right after its last use. Forward graph outputs are always kept.
// A graph without backward nodes (an inference graph) has only the forward phase: every strategy
// then returns the plain topological-order plan (overhead 0), since nothing is read after the
// forward pass.
//
// Files: remat/heuristic_options.hpp holds the options of every heuristic, remat/detail/
// plan_builder.hpp the sequence building and measuring they share, remat/detail/max_tree.hpp the
// segment tree behind use_spare_memory.

#include <memsched/core/errors.hpp>
#include <memsched/core/status.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/remat/detail/plan_builder.hpp>
#include <memsched/remat/heuristic_options.hpp>
#include <memsched/remat/remat_result.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace memsched {

namespace detail {

/// forward[v] != 0 for the forward vertices of g (its training roles; every vertex of a graph
/// without roles). Roles reach a memory_graph from every graph type: make_memory_graph reads them
/// from the node bundles or the `role` property map.
inline std::vector<char> forward_mask(const memory_graph& g) {
  std::vector<char> fwd(g.size());
  for (std::size_t v = 0; v < g.size(); ++v) fwd[v] = g.is_forward(v) ? 1 : 0;
  return fwd;
}

}  // namespace detail

/// The cheapest plan that respects the checkpoint set options.checkpoints (forward vertex
/// indices): the two-phase plan described at the top of this header. Its cost is minimal among
/// plans whose forward phase keeps exactly the checkpoints (and forward outputs) for the backward
/// phase: each non-checkpoint forward value that the backward phase needs, directly or to recompute
/// another, is recomputed exactly once. Status `feasible` when the simulated peak is within
/// `budget`, else `no_solution` (empty plan; peak and cost still describe it), or `infeasible` when
/// the budget is below what every plan needs.
/// Complexity: O((n + m) log n) for the conversion, then O(n + m) for the plan.
/// Throws: graph_error when a checkpoint is not a forward vertex or a forward node reads a backward
/// node; what make_memory_graph throws for a bad graph.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] remat_result checkpoint_plan(const G& graph, std::int64_t budget, const checkpoint_options& options, const Maps&... maps) {
  const auto start = std::chrono::steady_clock::now();
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  const auto in = detail::prepare_strategy(g, detail::forward_mask(g), "checkpoint_plan");
  const auto keep = detail::checkpoint_mask(g, in.forward, options.checkpoints, "checkpoint_plan");
  return detail::finish_plan(g, detail::checkpoint_sequence(g, in.split, keep), budget, start);
}

/// checkpoint_plan with no checkpoints (every forward value the backward phase reads is recomputed).
template <class G>
  requires memory_graph_source<G>
[[nodiscard]] remat_result checkpoint_plan(const G& graph, std::int64_t budget) {
  return checkpoint_plan(graph, budget, checkpoint_options{});
}

/// Checkpoint all: every forward value is kept for the backward phase, nothing is recomputed
/// (overhead exactly 0). Its peak is the "no-remat peak" every budget is measured against.
/// `no_solution` (or `infeasible`, see checkpoint_plan) when that peak exceeds `budget`.
/// Complexity: O((n + m) log n). Throws: as checkpoint_plan.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] remat_result checkpoint_all_plan(const G& graph, std::int64_t budget, const checkpoint_all_options& /*options*/,
                                               const Maps&... maps) {
  const auto start = std::chrono::steady_clock::now();
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  const auto in = detail::prepare_strategy(g, detail::forward_mask(g), "checkpoint_all_plan");
  return detail::finish_plan(g, detail::checkpoint_sequence(g, in.split, in.forward), budget, start);
}

/// checkpoint_all_plan with default options; use unlimited_budget for the no-remat peak.
template <class G>
  requires memory_graph_source<G>
[[nodiscard]] remat_result checkpoint_all_plan(const G& graph, std::int64_t budget) {
  return checkpoint_all_plan(graph, budget, checkpoint_all_options{});
}

}  // namespace memsched
