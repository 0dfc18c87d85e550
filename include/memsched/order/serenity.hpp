#pragma once
// Serenity (Ahn et al., "Ordering Chaos: Memory-Aware Scheduling of Irregularly Wired Neural
// Networks for Edge Devices", MLSys 2020): the peak-memory-optimal order of a dataflow graph by
// dynamic programming over signatures (Algorithm 1), adaptive soft budgeting (Algorithm 2) and
// divide and conquer over single-node cuts. See docs/serenity.md.
//
// This header is the public entry point: serenity_order converts the caller's graph to a
// memory_graph and calls detail::serenity_order_impl (impl/serenity.ipp), which splits the graph
// (detail/serenity_segments.hpp), solves the segments (detail/serenity_solver.hpp, in parallel with
// detail/task_pool.hpp) and joins their orders. The searches are compiled once per translation
// unit whatever the graph type (only the conversion to memory_graph depends on it), or once for
// the whole program with MEMSCHED_SEPARATE_COMPILATION (core/config.hpp).

#include <memsched/core/config.hpp>
#include <memsched/core/status.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/order/order_result.hpp>
#include <memsched/order/serenity_options.hpp>

#include <chrono>
#include <type_traits>

namespace memsched {

namespace detail {

/// Throws option_error naming the first bad option (see serenity_order).
MEMSCHED_DECL void check_serenity_options(const serenity_options& options);

/// serenity_order on a memory_graph, options checked, `start` the time the call began. Not a
/// template: compiled once per translation unit whatever graph types the caller uses, or once in
/// memsched::compiled (MEMSCHED_SEPARATE_COMPILATION).
MEMSCHED_DECL order_result serenity_order_impl(const memory_graph& g, const serenity_options& options,
                                               std::chrono::steady_clock::time_point start);

}  // namespace detail

/// The order of minimum peak memory (the model of simulate_order), by Serenity's dynamic program
/// over signatures with divide and conquer at single-node cuts and optional soft budgeting.
///
/// Returns status optimal with lower_bound == peak_bytes when the search completes; feasible with
/// the best order found and a proven lower bound when time_limit, max_states or max_bytes stop it;
/// infeasible when `budget` is below the optimum (the order is then the best one found);
/// time_limit when a budget was given and no order within it was found before a limit.
/// Every better order and lower bound of the whole graph is reported to options.observer, one at
/// a time (docs/serenity.md, "Progress"). Deterministic for the same input and options unless a
/// time limit interrupts; the observer and the thread count do not change the result.
/// Complexity: worst case exponential (O(number of down-closed vertex sets * width)); memory is
/// capped by max_bytes.
/// time_limit is checked after an amount of work that adapts to the cost of a step (about every
/// 10 ms of search); an infinite or huge limit means none.
/// Throws option_error (a std::invalid_argument) naming the option on a negative budget, a negative or NaN
/// time_limit, an attempt_time_limit not > 0, max_states or max_bytes 0, a reorder_window of 1 or
/// over 64, a soft_budget out of the enum, and what make_memory_graph throws (cycle_error, graph_error).
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] order_result serenity_order(const G& graph, const serenity_options& options, const Maps&... maps) {
  const auto start = std::chrono::steady_clock::now();
  detail::check_serenity_options(options);
  return detail::serenity_order_impl(detail::to_memory_graph(graph, maps...), options, start);
}

namespace detail {
template <class... Maps>
inline constexpr bool starts_with_serenity_options = false;
template <class First, class... Rest>
inline constexpr bool starts_with_serenity_options<First, Rest...> = std::is_same_v<std::remove_cvref_t<First>, serenity_options>;
}  // namespace detail

/// serenity_order with default options.
template <class G, class... Maps>
  requires(!detail::starts_with_serenity_options<Maps...>) && memory_graph_source<G, Maps...>
[[nodiscard]] order_result serenity_order(const G& graph, const Maps&... maps) {
  return serenity_order(graph, serenity_options{}, maps...);
}

}  // namespace memsched

#ifndef MEMSCHED_SEPARATE_COMPILATION
#include <memsched/order/impl/serenity.ipp>
#endif
