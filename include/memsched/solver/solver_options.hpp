#pragma once
// Options and results shared by every solver backend (MILP and CP).

#include <memsched/core/errors.hpp>
#include <memsched/core/observer.hpp>
#include <memsched/core/status.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
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
  /// Wall-clock limit; nullopt: none (as are infinite limits and those over 10^9 s; NaN and
  /// negative limits count as 0). Limits are for users; tests use node_limit.
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
/// The limit `time_limit` stands for: nullopt when there is none, when it is infinite or when it is
/// longer than 10^9 s (about 32 years: such limits mean "no limit", and steady_clock could not add
/// them to now() without overflow); NaN and negative limits count as 0 (already expired).
[[nodiscard]] inline std::optional<std::chrono::duration<double>> effective_time_limit(
    const std::optional<std::chrono::duration<double>>& time_limit) noexcept {
  if (!time_limit) return std::nullopt;
  const double s = time_limit->count();
  if (std::isnan(s) || s <= 0) return std::chrono::duration<double>(0);
  if (s > 1e9) return std::nullopt;
  return time_limit;
}

/// How long a backend may run past the limit it was given: 3% of the limit plus 30 ms, at most
/// 1 s. A backend in a child process (process_isolation.hpp) is killed once it runs this long
/// after its deadline (a call ends within 10% + 0.2 s of its limit; the fork, the kernel
/// freeing the child's memory (25 ms for 300 MB) and the caller's decoding come on top). A child
/// that stops on its own clock sends its result within that; one stuck in an uninterruptible phase
/// (presolve, scaling, factorisation) loses nothing it had reported. Algorithms that must end by a
/// deadline hand a backend backend_limit_within(what is left).
[[nodiscard]] inline double backend_overrun_allowance(double limit_seconds) noexcept {
  return std::min(1.0, 0.03 * std::max(limit_seconds, 0.0) + 0.03);
}

/// The inverse of backend_overrun_allowance: the largest limit x with
/// x + backend_overrun_allowance(x) <= `seconds` (may be negative: no time for a backend).
[[nodiscard]] inline double backend_limit_within(double seconds) noexcept {
  return std::max((seconds - 0.03) / 1.03, seconds - 1.0);
}

/// Throws option_error (for `function`, field "solver.relative_gap") when options.relative_gap is
/// NaN: a backend could not compare a gap with it. Every other value of every field is valid (a
/// negative gap counts as 0; a NaN or negative time limit as 0, see effective_time_limit).
inline void check_solver_options(const char* function, const solver_options& options) {
  if (std::isnan(options.relative_gap)) throw option_error(function, "solver.relative_gap", "must be a number (not NaN)");
}

/// The number of threads `options` asks for, with 0 resolved to the hardware's (at least 1).
[[nodiscard]] inline unsigned solver_threads(const solver_options& options) noexcept {
  return options.threads != 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency());
}
}  // namespace detail

}  // namespace memsched
