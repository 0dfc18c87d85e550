#pragma once
// Options and results shared by every solver backend (MILP and CP).

#include <memsched/core/status.hpp>

#include <chrono>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace memsched {

/// An improvement reported while a backend searches.
struct solver_progress {
  double seconds = 0;                                          ///< Since the solve started.
  double objective = std::numeric_limits<double>::quiet_NaN();  ///< Best objective found so far.
  double bound = std::numeric_limits<double>::quiet_NaN();      ///< Best proven bound so far (NaN if none).
};

/// How to solve. Every field has a default that works; backends ignore what they cannot honour
/// and say so in the result's message.
struct solver_options {
  std::optional<std::chrono::duration<double>> time_limit;  ///< Wall-clock limit; nullopt: none.
  double relative_gap = 1e-6;                               ///< Stop when (objective - bound) / |objective| <= gap.
  int threads = 1;
  int verbosity = 0;                                        ///< 0: silent; higher: the backend's own log.
  std::function<void(const solver_progress&)> on_incumbent; ///< Called from the solving thread on each better solution.
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

}  // namespace memsched
