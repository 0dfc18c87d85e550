#pragma once
// The memory model of an ordering without recomputation (Serenity, MLSys 2020, Algorithm 1).

#include <memsched/core/errors.hpp>
#include <memsched/graph/memory_graph.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace memsched {

/// What running a graph in a given order does to memory.
struct order_simulation {
  std::int64_t peak_bytes = 0;                ///< Largest (live + bytes + workspace) over all steps.
  std::size_t peak_step = 0;                  ///< The step (index into the order) where the peak occurs first.
  std::vector<std::size_t> resident_at_peak;  ///< Tensors allocated at the peak, the running node last.
  std::vector<std::int64_t> live_before;      ///< Bytes resident before each step.
  std::vector<std::int64_t> live_after;       ///< Bytes resident after each step's frees.
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

/// Walks a valid order, calling step(k, v, live_before, transient_peak, live_after). The model:
/// running v allocates bytes(v) while its inputs are resident; then each input whose consumers
/// have all run is freed unless it is an output; a non-output without consumers is freed at once.
template <class StepFn>
void walk_order(const memory_graph& g, std::span<const std::size_t> order, StepFn&& step) {
  std::vector<std::uint32_t> remaining(g.size());
  for (std::size_t v = 0; v < g.size(); ++v) remaining[v] = static_cast<std::uint32_t>(g.out_degree(v));
  std::int64_t live = 0;
  for (std::size_t k = 0; k < order.size(); ++k) {
    const std::size_t v = order[k];
    const std::int64_t before = live;
    const std::int64_t transient = live + g.bytes(v) + g.workspace(v);
    live += g.bytes(v);
    for (auto p : g.predecessors(v))
      if (--remaining[p] == 0 && !g.is_output(p)) live -= g.bytes(p);
    if (g.out_degree(v) == 0 && !g.is_output(v)) live -= g.bytes(v);
    step(k, v, before, transient, live);
  }
}

inline std::int64_t order_peak_unchecked(const memory_graph& g, std::span<const std::size_t> order) {
  std::int64_t peak = 0;
  walk_order(g, order, [&](std::size_t, std::size_t, std::int64_t, std::int64_t transient, std::int64_t) {
    peak = std::max(peak, transient);
  });
  return peak;
}

}  // namespace detail

/// Simulates running the graph in `order` (vertex indices). O(n + m) time and memory.
/// Throws invalid_order naming the first offending node when `order` is not a topological order
/// containing every vertex once; everything make_memory_graph throws for a bad graph.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] order_simulation simulate_order(const G& graph, std::span<const std::size_t> order, const Maps&... maps) {
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  detail::check_order(g, order, "simulate_order");
  order_simulation sim;
  sim.live_before.reserve(order.size());
  sim.live_after.reserve(order.size());
  sim.peak_bytes = -1;
  detail::walk_order(g, order, [&](std::size_t k, std::size_t, std::int64_t before, std::int64_t transient, std::int64_t after) {
    sim.live_before.push_back(before);
    sim.live_after.push_back(after);
    if (transient > sim.peak_bytes) {
      sim.peak_bytes = transient;
      sim.peak_step = k;
    }
  });
  if (sim.peak_bytes < 0) sim.peak_bytes = 0;
  if (order.empty()) return sim;
  // Replay up to the peak step to list the resident tensors there.
  std::vector<std::uint32_t> remaining(g.size());
  std::vector<char> resident(g.size(), 0);
  for (std::size_t v = 0; v < g.size(); ++v) remaining[v] = static_cast<std::uint32_t>(g.out_degree(v));
  for (std::size_t k = 0; k < sim.peak_step; ++k) {
    const std::size_t v = order[k];
    resident[v] = 1;
    for (auto p : g.predecessors(v))
      if (--remaining[p] == 0 && !g.is_output(p)) resident[p] = 0;
    if (g.out_degree(v) == 0 && !g.is_output(v)) resident[v] = 0;
  }
  for (std::size_t k = 0; k < sim.peak_step; ++k)
    if (resident[order[k]]) sim.resident_at_peak.push_back(order[k]);
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
