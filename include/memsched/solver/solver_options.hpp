#pragma once
// Options and results shared by every solver backend (MILP and CP).

#include <memsched/core/observer.hpp>
#include <memsched/core/status.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace memsched {

/// How to solve: a plain aggregate (designated initializers). Every field has a default that
/// works; a backend that cannot honour a field ignores it and says so in the result's message.
struct solver_options {
  /// Wall-clock limit; nullopt: none. Limits are for users; tests use node_limit.
  std::optional<std::chrono::duration<double>> time_limit;
  /// Stop when (objective - bound) / |objective| <= relative_gap.
  double relative_gap = 1e-6;
  /// Search threads; 0: std::thread::hardware_concurrency(). More than one thread makes results
  /// depend on scheduling, so the default is 1.
  unsigned threads = 1;
  /// 0: silent; higher: the backend's own log on stdout/stderr.
  int verbosity = 0;
  /// Counted limit on the search: branch-and-bound nodes (CBC, GLPK) or search nodes (Gecode);
  /// nullopt: none. Unlike time_limit it gives the same answer on every machine. A search stopped
  /// by it returns `feasible` (with its best incumbent) or `time_limit` (none found).
  std::optional<std::uint64_t> node_limit;
  /// Receives on_incumbent(seconds, objective, bound) for each strictly better solution (objective
  /// with the model's offset; bound NaN when none), from the thread that called solve.
  observer_ref observer;
};

/// What a backend returns. `values` holds one value per model variable when status has a solution.
struct [[nodiscard]] solver_result {
  solve_status status = solve_status::error;
  double objective = std::numeric_limits<double>::quiet_NaN();
  double bound = std::numeric_limits<double>::quiet_NaN();  ///< Proven bound on the optimum (NaN if none).
  std::vector<double> values;
  double seconds = 0;
  std::string message;  ///< Why, for unsupported / error / ignored options.
};

namespace detail {
/// The number of threads `options` asks for, with 0 resolved to the hardware's (at least 1).
[[nodiscard]] inline unsigned solver_threads(const solver_options& options) noexcept {
  return options.threads != 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency());
}
}  // namespace detail

}  // namespace memsched
