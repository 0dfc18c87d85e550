#pragma once
// The outcome of an algorithm or a solver run.

#include <ostream>
#include <string_view>

namespace memsched {

/// How an algorithm ended. `optimal`: the answer is proven best. `feasible`: an answer that meets
/// every constraint, but a limit (time, states, gap) stopped the proof. `infeasible`: proven that
/// no answer meets the constraints (for heuristics: this strategy cannot meet them). `time_limit`:
/// a limit stopped the search before any answer was found. `unsupported`: the backend or algorithm
/// cannot handle this input. `error`: a backend failed.
enum class solve_status { optimal, feasible, infeasible, time_limit, unsupported, error };

/// The lower-case name of a status ("optimal", "feasible", ...). O(1), never throws.
[[nodiscard]] constexpr std::string_view to_string(solve_status s) noexcept {
  switch (s) {
    case solve_status::optimal: return "optimal";
    case solve_status::feasible: return "feasible";
    case solve_status::infeasible: return "infeasible";
    case solve_status::time_limit: return "time_limit";
    case solve_status::unsupported: return "unsupported";
    case solve_status::error: return "error";
  }
  return "error";
}

/// True when the status carries an answer that meets the constraints (optimal or feasible).
[[nodiscard]] constexpr bool has_solution(solve_status s) noexcept {
  return s == solve_status::optimal || s == solve_status::feasible;
}

inline std::ostream& operator<<(std::ostream& os, solve_status s) { return os << to_string(s); }

}  // namespace memsched
