#pragma once
// The concepts a MILP solver backend models. A backend is a small type (cbc_backend,
// glpk_backend, ...) with a name() and const solve functions over the backend-neutral
// milp_model (the CP concept, cp_backend, has the same shape); algorithms take the backend as a template parameter, so one model is built once and
// solved by whichever backend the caller picks. Backends live in their own headers
// (<memsched/solver/backends/cbc.hpp>, ...) and CMake targets (memsched::cbc, ...); this header
// includes none of them. The CP model and its cp_backend concept are in their own headers.

#include <memsched/solver/milp_model.hpp>
#include <memsched/solver/solver_options.hpp>

#include <concepts>
#include <functional>
#include <string_view>

namespace memsched {

/// A type that solves mixed-integer linear programs:
///   `b.name()` converts to std::string_view ("cbc", "glpk", ...);
///   `b.solve(model, options)` returns a solver_result for the MILP (integrality kept).
/// Contract every backend keeps (checked by tests/solver/milp_conformance.cpp):
///   - status `optimal`: `values` is an optimal assignment (within options.relative_gap) and
///     `objective` its value (with model.objective_offset); `bound` the proven bound;
///   - `feasible`: a limit stopped the proof; `values` satisfies the model;
///   - `infeasible`: proven that no assignment satisfies the model;
///   - `time_limit`: the time limit passed before any assignment was found;
///   - `unsupported`: the backend cannot handle this model or option (message says why);
///   - `unbounded`: the LP relaxation is unbounded, so the model has no finite optimum (it is
///     unbounded, or infeasible: the message says which the backend could tell); no values;
///   - `error`: the backend failed (message says how).
///   - A valid model.start is used as the first incumbent, so a solve with a start never returns
///     less than the start; options.observer.on_incumbent is called on the calling thread with
///     strictly improving objectives; verbosity 0 prints nothing.
///   - options.node_limit stops the search after that many branch-and-bound nodes, with
///     `feasible` (a valid incumbent) or `time_limit` (none): the same answer on every machine.
///   - Bad models (a start of the wrong size, NaN data) give `error`, never an abort.
template <class B>
concept milp_backend = requires(const B& b, const milp_model& model, const solver_options& options) {
  { b.name() } -> std::convertible_to<std::string_view>;
  { b.solve(model, options) } -> std::same_as<solver_result>;
};

/// A milp_backend that also solves the LP relaxation of a model: `b.solve_relaxation(model,
/// options)` drops integrality (binary variables become continuous in [0, 1]) and returns the LP
/// optimum (`optimal`, `infeasible`, `unbounded` or `time_limit`). The start solution is
/// ignored. Used by rounding heuristics (Checkmate's LP rounding).
template <class B>
concept lp_backend = milp_backend<B> && requires(const B& b, const milp_model& model, const solver_options& options) {
  { b.solve_relaxation(model, options) } -> std::same_as<solver_result>;
};

/// `backend`'s MILP solve as a type-erased call, for options that take one
/// (hiremate_options::top_solver). O(1); the call does what backend.solve does.
template <milp_backend B>
[[nodiscard]] std::function<solver_result(const milp_model&, const solver_options&)> milp_solve_function(B backend) {
  return [backend = std::move(backend)](const milp_model& model, const solver_options& options) { return backend.solve(model, options); };
}

}  // namespace memsched
