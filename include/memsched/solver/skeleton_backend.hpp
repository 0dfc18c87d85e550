#pragma once
// memsched::skeleton_backend: a backend that solves nothing. It compiles without any solver
// library and returns `unsupported` for every model, and is the template for adding a backend.
//
// Adding a backend for solver X (see docs/solvers.md, "Adding a solver backend"):
//  1. Copy this file to include/memsched/solver/backends/x.hpp and rename the type x_backend,
//     with `static constexpr std::string_view name() noexcept { return "x"; }`.
//  2. In solve(): make a detail::solve_session (wall clock, deadline, incumbent reporting), return
//     detail::answer_without_solver(model, session, "x_backend::solve") when it has an answer
//     (status error on bad data, the trivial answer without variables), translate the
//     milp_model into X's form in one pass (build whole matrices, never row by row), map every
//     option (time_limit as a wall-clock deadline that the solver's callback enforces,
//     relative_gap, threads (0: detail::solver_threads), node_limit (branch-and-bound nodes),
//     verbosity 0 = silent, observer.on_incumbent through session.report()), offer
//     model.start to X, run, and map X's outcome onto solve_status:
//        proven optimal (within the gap)      -> optimal
//        stopped by a limit with a solution   -> feasible
//        stopped by a limit without one       -> time_limit
//        proven infeasible                    -> infeasible
//        unbounded (or the LP relaxation is)  -> unbounded
//        a model or option X cannot take      -> unsupported, message saying what
//        X failed                             -> error, message saying how
//     Catch everything X throws and never let X abort() or print when verbosity is 0. Finish
//     with session.rethrow_callback_error() and session.finish(result) (which falls back to a
//     valid start, fills seconds and reports the final incumbent).
//  3. Optionally add solve_relaxation() (the LP relaxation) to model lp_backend.
//  4. In cmake/memsched_solver_libraries.cmake teach memsched_find_solver_library() to find X
//     and wrap it in memsched_ext::x; add `x` to the backend list and an option MEMSCHED_WITH_X
//     in cmake/memsched_backends.cmake. The target memsched::x and the MEMSCHED_HAVE_X definition
//     then exist when X is found, and memsched_link_available_backends() links it.
//  5. Add x_backend to the type list of tests/solver/milp_conformance.cpp under
//     #ifdef MEMSCHED_HAVE_X; every conformance case must pass.
// Core headers never include a backend header, and public types never depend on #ifdef.

#include <memsched/core/status.hpp>
#include <memsched/solver/concepts.hpp>
#include <memsched/solver/milp_model.hpp>
#include <memsched/solver/solver_options.hpp>

#include <string_view>

namespace memsched {

/// A milp_backend and lp_backend that supports nothing: every solve returns status
/// `unsupported`. O(1), never throws.
struct skeleton_backend {
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "skeleton"; }

  /// Returns `unsupported` (a real backend solves `model` here). Never throws.
  [[nodiscard]] solver_result solve(const milp_model& /*model*/, const solver_options& /*options*/) const {
    solver_result r;
    r.status = solve_status::unsupported;
    r.message = "skeleton_backend: solves nothing (a template for new backends)";
    return r;
  }

  /// Returns `unsupported` (a real backend solves the LP relaxation here). Never throws.
  [[nodiscard]] solver_result solve_relaxation(const milp_model& model, const solver_options& options) const {
    return solve(model, options);
  }
};

static_assert(lp_backend<skeleton_backend>);

}  // namespace memsched
