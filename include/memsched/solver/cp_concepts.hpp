#pragma once
// The concept every CP backend models.

#include <memsched/solver/cp_model.hpp>
#include <memsched/solver/solver_options.hpp>

#include <concepts>
#include <string_view>

namespace memsched {

/// A CP backend solves a cp_model, and is called as a milp_backend is: `b.name()` converts to
/// std::string_view ("gecode", ...); `b.solve(model, options)` returns a solver_result whose
/// `values[i]` is the value of variable i (as a double) when the status has a solution, whose
/// `objective` is the model's objective (with its offset) and whose `bound` is a proven lower
/// bound on it (NaN when none). A model using a constraint the backend cannot express, or numbers
/// outside its range, gives status `unsupported` with a message; a backend never aborts.
template <class B>
concept cp_backend = requires(const B& b, const cp_model& m, const solver_options& o) {
  { b.solve(m, o) } -> std::same_as<solver_result>;
  { b.name() } -> std::convertible_to<std::string_view>;
};

}  // namespace memsched
