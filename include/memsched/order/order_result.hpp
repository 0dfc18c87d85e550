#pragma once
// The result type shared by every ordering algorithm.

#include <memsched/core/status.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace memsched {

/// Search statistics of an ordering algorithm (zero for the linear-time baselines).
struct order_stats {
  std::uint64_t states_expanded = 0;  ///< Partial schedules expanded.
  std::uint64_t states_stored = 0;    ///< Partial schedules stored at the same time, at most.
  std::uint64_t search_bytes = 0;     ///< Peak memory the search itself used.
  double seconds = 0;                 ///< Wall-clock time.
};

/// An order of the vertices (by index) and its peak memory under the model of simulate_order.
struct [[nodiscard]] order_result {
  std::vector<std::size_t> order;
  std::int64_t peak_bytes = 0;
  solve_status status = solve_status::feasible;  ///< optimal only when the peak is proven minimal.
  std::int64_t lower_bound = 0;                  ///< A proven lower bound on the optimal peak.
  order_stats stats;
};

}  // namespace memsched
