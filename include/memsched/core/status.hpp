#pragma once
// The outcome of an algorithm or a solver run.

#include <optional>
#include <ostream>
#include <string_view>

namespace memsched {

/// How an algorithm ended. What it says about the problem is kept apart from whether the method
/// found something (LEMON's distinction): a heuristic that finds nothing has proven nothing.
/// - `optimal`: the answer is proven best.
/// - `feasible`: an answer that meets every constraint; a limit (time, states, gap) or the method
///   itself (a heuristic) stopped short of a proof.
/// - `infeasible`: proven that no answer meets the constraints (an exact search or a solver proof).
/// - `no_solution`: this method found no answer, and nothing is proven (a heuristic that cannot
///   meet the budget, a solver that gave up without a proof).
/// - `unbounded`: the model's objective is unbounded (a backend's answer; never a schedule).
/// - `time_limit`: a limit stopped the search before any answer was found.
/// - `unsupported`: the backend or algorithm cannot handle this input.
/// - `error`: a backend failed.
enum class solve_status { optimal, feasible, infeasible, no_solution, unbounded, time_limit, unsupported, error };

/// The lower-case name of a status ("optimal", "no_solution", ...). O(1), never throws.
[[nodiscard]] constexpr std::string_view to_string(solve_status s) noexcept {
  switch (s) {
    case solve_status::optimal: return "optimal";
    case solve_status::feasible: return "feasible";
    case solve_status::infeasible: return "infeasible";
    case solve_status::no_solution: return "no_solution";
    case solve_status::unbounded: return "unbounded";
    case solve_status::time_limit: return "time_limit";
    case solve_status::unsupported: return "unsupported";
    case solve_status::error: return "error";
  }
  return "error";
}

/// The status named `name` (as to_string writes it), or nullopt. O(1), never throws.
[[nodiscard]] constexpr std::optional<solve_status> parse_solve_status(std::string_view name) noexcept {
  for (auto s : {solve_status::optimal, solve_status::feasible, solve_status::infeasible, solve_status::no_solution,
                 solve_status::unbounded, solve_status::time_limit, solve_status::unsupported, solve_status::error})
    if (to_string(s) == name) return s;
  return std::nullopt;
}

/// True when the status carries an answer that meets the constraints (optimal or feasible).
[[nodiscard]] constexpr bool has_solution(solve_status s) noexcept {
  return s == solve_status::optimal || s == solve_status::feasible;
}

inline std::ostream& operator<<(std::ostream& os, solve_status s) { return os << to_string(s); }

}  // namespace memsched
