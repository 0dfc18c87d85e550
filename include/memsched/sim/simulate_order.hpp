#pragma once
// Simulating an ordering without recomputation (Serenity, MLSys 2020, Algorithm 1) with the one
// memory model (sim/memory_model.hpp).

#include <memsched/core/errors.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/sim/memory_model.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace memsched {

/// What running a graph in a given order does to memory.
struct order_simulation {
  std::int64_t peak_bytes = 0;                ///< Largest transient over all steps.
  std::size_t peak_step = 0;                  ///< The step (index into the order) where the peak occurs first.
  /// Tensors allocated at the peak, the running node last (an input whose buffer the running node
  /// takes over in place is not listed: its buffer holds the running node's output).
  std::vector<std::size_t> resident_at_peak;
  std::vector<std::int64_t> live_before;      ///< Bytes resident before each step.
  /// Bytes in use while each step runs (live_before + workspace + bytes; without bytes when the
  /// vertex reuses an input's buffer in place).
  std::vector<std::int64_t> transient;
  std::vector<std::int64_t> live_after;       ///< Bytes resident after each step's frees.
  std::vector<std::size_t> reused;            ///< Per step: the input whose buffer is taken over in place, or memory_step::none.
};

namespace detail {

/// Throws invalid_order unless `order` lists every vertex exactly once, after all its predecessors.
inline void check_order(const memory_graph& g, std::span<const std::size_t> order, std::string_view context) {
  const std::size_t n = g.size();
  std::vector<char> done(n, 0);
  const std::string where = std::string(context) + ": ";
  for (std::size_t k = 0; k < order.size(); ++k) {
    const std::size_t v = order[k];
    if (v >= n) throw invalid_order(where + "entry " + std::to_string(k) + " (" + std::to_string(v) + ") is not a vertex", k);
    if (done[v]) throw invalid_order(where + g.label(v) + " appears twice (position " + std::to_string(k) + ")", k);
    for (auto p : g.predecessors(v))
      if (!done[p])
        throw invalid_order(where + g.label(v) + " at position " + std::to_string(k) + " runs before its input " + g.label(p), k);
    done[v] = 1;
  }
  if (order.size() != n) {
    std::size_t missing = 0;
    while (done[missing]) ++missing;
    throw invalid_order(where + "the order has " + std::to_string(order.size()) + " of " + std::to_string(n) +
                            " vertices; " + g.label(missing) + " is missing",
                        order.size());
  }
}

/// The peak of a valid order (not checked). O(n + m).
inline std::int64_t order_peak_unchecked(const memory_graph& g, std::span<const std::size_t> order) {
  memory_model model(g);
  std::int64_t peak = 0;
  for (const std::size_t v : order) peak = std::max(peak, model.step(v).transient);
  return peak;
}

}  // namespace detail

/// Simulates running the graph in `order` (vertex indices) with the memory model
/// (sim/memory_model.hpp, in-place outputs included): the peak, where it occurs and what is
/// resident then, and the timeline (live_before, transient, live_after, reused per step). O(n + m) time and memory.
/// Throws invalid_order naming the first offending node when `order` is not a topological order
/// containing every vertex once; everything make_memory_graph throws for a bad graph.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] order_simulation simulate_order(const G& graph, std::span<const std::size_t> order, const Maps&... maps) {
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  detail::check_order(g, order, "simulate_order");
  order_simulation sim;
  sim.live_before.resize(order.size());
  sim.transient.resize(order.size());
  sim.live_after.resize(order.size());
  sim.reused.resize(order.size());
  sim.peak_bytes = -1;
  memory_model model(g);
  for (std::size_t k = 0; k < order.size(); ++k) {
    const memory_step s = model.step(order[k]);
    sim.live_before[k] = s.live_before;
    sim.transient[k] = s.transient;
    sim.live_after[k] = s.live_after;
    sim.reused[k] = s.reused;
    if (s.transient > sim.peak_bytes) {
      sim.peak_bytes = s.transient;
      sim.peak_step = k;
    }
  }
  if (sim.peak_bytes < 0) sim.peak_bytes = 0;
  if (order.empty()) return sim;
  // Replay up to the peak step to list the resident tensors there.
  model.reset();
  for (std::size_t k = 0; k < sim.peak_step; ++k) (void)model.step(order[k]);
  for (std::size_t k = 0; k < sim.peak_step; ++k)
    if (model.resident(order[k]) && order[k] != sim.reused[sim.peak_step]) sim.resident_at_peak.push_back(order[k]);
  sim.resident_at_peak.push_back(order[sim.peak_step]);
  return sim;
}

/// The peak memory of `order` alone (no timeline). O(n + m). Throws as simulate_order.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] std::int64_t order_peak(const G& graph, std::span<const std::size_t> order, const Maps&... maps) {
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  detail::check_order(g, order, "order_peak");
  return detail::order_peak_unchecked(g, order);
}

}  // namespace memsched
