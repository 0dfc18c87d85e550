#pragma once
// Internals shared by the MILP backends: model checks, the start-solution fallback, incumbent
// reporting (dedupe, strictly improving) and the wall-clock deadline. Includes no solver library.

#include <memsched/core/status.hpp>
#include <memsched/solver/milp_model.hpp>
#include <memsched/solver/solver_options.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace memsched::detail {

using solver_clock = std::chrono::steady_clock;

/// A message naming the first piece of data no backend can take (NaN bounds or coefficients,
/// infinite objective coefficients, lower > upper on a row, a start of the wrong size or with
/// non-finite values), or nullopt. `who` prefixes the message. O(variables + nonzeros).
[[nodiscard]] inline std::optional<std::string> check_milp_model(const milp_model& model, const char* who) {
  const std::string prefix = std::string(who) + ": ";
  const auto& vars = model.variables();
  for (std::size_t i = 0; i < vars.size(); ++i) {
    const auto& v = vars[i];
    if (std::isnan(v.lower) || std::isnan(v.upper) || !(v.lower <= v.upper))
      return prefix + "variable " + std::to_string(i) + " has bad bounds";
    if (!std::isfinite(v.objective)) return prefix + "variable " + std::to_string(i) + " has a non-finite objective coefficient";
    if (v.lower == infinity || v.upper == -infinity) return prefix + "variable " + std::to_string(i) + " has an empty domain";
  }
  if (!std::isfinite(model.objective_offset)) return prefix + "non-finite objective offset";
  const auto& rows = model.constraints();
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const auto& c = rows[r];
    if (std::isnan(c.lower) || std::isnan(c.upper)) return prefix + "constraint " + std::to_string(r) + " has a NaN bound";
    for (const auto& t : c.terms)
      if (t.variable >= vars.size() || !std::isfinite(t.coefficient))
        return prefix + "constraint " + std::to_string(r) + " has a bad term";
  }
  if (model.start) {
    if (model.start->size() != vars.size())
      return prefix + "start has " + std::to_string(model.start->size()) + " values for " + std::to_string(vars.size()) + " variables";
    for (std::size_t i = 0; i < vars.size(); ++i)
      if (!std::isfinite((*model.start)[i])) return prefix + "start value of variable " + std::to_string(i) + " is not finite";
  }
  return std::nullopt;
}

/// The answer for a model without variables: optimal (objective = offset) when every row admits
/// 0, else infeasible. O(rows).
[[nodiscard]] inline solver_result solve_without_variables(const milp_model& model) {
  solver_result r;
  for (const auto& c : model.constraints())
    if (c.lower > 1e-9 || c.upper < -1e-9) {
      r.status = solve_status::infeasible;
      return r;
    }
  r.status = solve_status::optimal;
  r.objective = r.bound = model.objective_offset;
  return r;
}

/// True when `a` is a strictly better objective than `b` under `sense` (relative tolerance 1e-9).
[[nodiscard]] inline bool better_objective(double a, double b, objective_sense sense) noexcept {
  const double tol = 1e-9 * std::max(1.0, std::abs(b));
  return sense == objective_sense::minimize ? a < b - tol : a > b + tol;
}

/// Wall-clock bookkeeping and incumbent reporting for one solve. Reports only strictly improving
/// objectives; an exception thrown by the observer (hooks should not throw, but a user's may) is
/// kept and rethrown by the backend after it has cleaned up (the search is stopped).
/// `bound` when it lies on its side of `objective` (below it when minimising, above when
/// maximising, within a relative 1e-6), else NaN: a search stopped or killed mid-way can report the
/// value of an unfinished LP as its best possible objective, which proves nothing.
[[nodiscard]] inline double consistent_bound(double bound, double objective, objective_sense sense) noexcept {
  if (!std::isfinite(bound)) return std::numeric_limits<double>::quiet_NaN();
  if (!std::isfinite(objective)) return bound;
  const double slack = 1e-6 * std::max(1.0, std::abs(objective));
  const bool beyond = sense == objective_sense::minimize ? bound > objective + slack : bound < objective - slack;
  return beyond ? std::numeric_limits<double>::quiet_NaN() : bound;
}

class solve_session {
 public:
  solve_session(const milp_model& model, const solver_options& options)
      : model_(model), options_(options), begin_(solver_clock::now()) {
    if (const auto limit = effective_time_limit(options.time_limit))
      deadline_ = begin_ + std::chrono::duration_cast<solver_clock::duration>(*limit);
  }

  [[nodiscard]] double seconds() const { return std::chrono::duration<double>(solver_clock::now() - begin_).count(); }
  [[nodiscard]] bool has_deadline() const noexcept { return deadline_.has_value(); }
  /// Seconds left before the deadline (may be <= 0); a large number when there is none.
  [[nodiscard]] double seconds_left() const {
    if (!deadline_) return 1e100;
    return std::chrono::duration<double>(*deadline_ - solver_clock::now()).count();
  }
  [[nodiscard]] bool deadline_passed() const { return deadline_ && solver_clock::now() >= *deadline_; }
  [[nodiscard]] bool callback_failed() const noexcept { return static_cast<bool>(callback_error_); }
  /// True, with `result` set to time_limit, when the deadline has passed before a search started.
  [[nodiscard]] bool expired_before_start(solver_result& result) const {
    if (!has_deadline() || seconds_left() > 0) return false;
    result.status = solve_status::time_limit;
    result.message = "time limit reached before the search started";
    return true;
  }

  /// Reports an incumbent (objective in the model's sense, with the offset) when it improves on
  /// the last one reported. Returns false when the observer threw (stop the search).
  bool report(double objective, double bound) {
    if (callback_error_) return false;
    if (!std::isfinite(objective)) return true;
    if (reported_ && !better_objective(objective, last_, model_.sense)) return true;
    reported_ = true;
    last_ = objective;
    if (!options_.observer.wants_incumbents()) return true;
    try {
      options_.observer.on_incumbent(seconds(), objective, consistent_bound(bound, objective, model_.sense));
    } catch (...) {
      callback_error_ = std::current_exception();
      return false;
    }
    return true;
  }
  /// Rethrows the callback's exception, if any.
  void rethrow_callback_error() const {
    if (callback_error_) std::rethrow_exception(callback_error_);
  }

  /// The start solution's objective when model.start satisfies the model, else nullopt.
  [[nodiscard]] std::optional<double> valid_start_objective() const {
    if (!model_.start || model_.start->size() != model_.num_variables()) return std::nullopt;
    if (model_.first_violation(*model_.start)) return std::nullopt;
    return model_.objective_value(*model_.start);
  }

  /// Completes a MILP result: drops a solver assignment that violates the model, uses a valid
  /// start when the backend has no solution or a worse one, drops a bound beyond the objective
  /// (consistent_bound; an optimum is its own bound), sets seconds, and reports the final
  /// incumbent. `result.values` must be empty or complete.
  void finish(solver_result& result) {
    // Never hand back an assignment that breaks the model (a solver stopped mid-way can).
    if (has_solution(result.status) && result.values.size() == model_.num_variables()) {
      if (const auto violation = model_.first_violation(result.values)) {
        result.message = "the solver's assignment was dropped: " + *violation;
        result.status = result.status == solve_status::optimal ? solve_status::error : solve_status::time_limit;
        result.values.clear();
        result.objective = std::numeric_limits<double>::quiet_NaN();
      }
    }
    if (const auto start_obj = valid_start_objective()) {
      const bool has = has_solution(result.status) && result.values.size() == model_.num_variables();
      if (!has || better_objective(*start_obj, result.objective, model_.sense)) {
        if (result.status == solve_status::infeasible) result.message = "backend reported infeasible, but the start satisfies the model";
        if (!has || result.status != solve_status::optimal) result.status = solve_status::feasible;
        result.values = *model_.start;
        result.objective = *start_obj;
      }
    }
    if (has_solution(result.status)) {
      result.bound = consistent_bound(result.bound, result.objective, model_.sense);
      if (result.status == solve_status::optimal && !std::isfinite(result.bound)) result.bound = result.objective;
      report(result.objective, result.bound);
    }
    result.seconds = seconds();
  }

 private:
  const milp_model& model_;
  const solver_options& options_;
  solver_clock::time_point begin_;
  std::optional<solver_clock::time_point> deadline_;
  bool reported_ = false;
  double last_ = 0;
  std::exception_ptr callback_error_;
};

/// The answer a backend gives without running its solver: status error with check_milp_model's
/// message on bad data, solve_without_variables for a model without variables; nullopt when the
/// solver must run. `who` prefixes the message. O(variables + nonzeros).
[[nodiscard]] inline std::optional<solver_result> answer_without_solver(const milp_model& model, const solve_session& session,
                                                                        const char* who) {
  solver_result result;
  if (auto bad = check_milp_model(model, who)) result.message = std::move(*bad);
  else if (model.num_variables() == 0) result = solve_without_variables(model);
  else return std::nullopt;
  result.seconds = session.seconds();
  return result;
}

}  // namespace memsched::detail
