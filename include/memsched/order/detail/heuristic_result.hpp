#pragma once
// The order_result of a heuristic order: its peak, the simple lower bound, and a status that says
// optimal only when the two meet.

#include <memsched/graph/memory_graph.hpp>
#include <memsched/order/order_result.hpp>
#include <memsched/order/peak_lower_bound.hpp>
#include <memsched/sim/simulate_order.hpp>

#include <chrono>
#include <cstddef>
#include <vector>

namespace memsched::detail {

inline order_result heuristic_order_result(const memory_graph& g, std::vector<std::size_t> order,
                                           std::chrono::steady_clock::time_point start) {
  order_result result;
  result.order = std::move(order);
  result.peak_bytes = order_peak_unchecked(g, result.order);
  result.lower_bound = peak_lower_bound(g);
  result.status = result.peak_bytes == result.lower_bound ? solve_status::optimal : solve_status::feasible;
  result.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace memsched::detail
