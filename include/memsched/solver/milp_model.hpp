#pragma once
// A backend-neutral mixed-integer linear program: built once, solved by any milp_backend.

#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace memsched {

enum class variable_type : unsigned char { continuous, integer, binary };

inline constexpr double infinity = std::numeric_limits<double>::infinity();

struct milp_variable {
  double lower = 0;
  double upper = infinity;
  variable_type type = variable_type::continuous;
  double objective = 0;  ///< Coefficient in the objective.
  std::string name;      ///< Optional; backends that need names (CBC start solutions) make them up.
};

struct linear_term {
  std::size_t variable = 0;
  double coefficient = 0;
};

/// lower <= sum(coefficient * variable) <= upper (either side may be infinite).
struct linear_constraint {
  std::vector<linear_term> terms;
  double lower = -infinity;
  double upper = infinity;
  std::string name;
};

enum class objective_sense : unsigned char { minimize, maximize };

/// Variables with bounds and types, sparse linear constraints, a linear objective and an optional
/// start solution. Indices are dense: variable i is the i-th added.
class milp_model {
 public:
  objective_sense sense = objective_sense::minimize;
  double objective_offset = 0;

  /// Adds a variable and returns its index. Throws std::invalid_argument when lower > upper or a
  /// binary variable has bounds outside [0, 1].
  std::size_t add_variable(milp_variable v) {
    if (v.type == variable_type::binary) {
      v.lower = std::max(v.lower, 0.0);
      v.upper = std::min(v.upper, 1.0);
    }
    if (!(v.lower <= v.upper)) throw std::invalid_argument("milp_model: variable '" + v.name + "' has lower > upper");
    variables_.push_back(std::move(v));
    return variables_.size() - 1;
  }
  std::size_t add_binary(double objective = 0, std::string name = {}) {
    return add_variable({0, 1, variable_type::binary, objective, std::move(name)});
  }
  std::size_t add_continuous(double lower, double upper, double objective = 0, std::string name = {}) {
    return add_variable({lower, upper, variable_type::continuous, objective, std::move(name)});
  }
  std::size_t add_integer(double lower, double upper, double objective = 0, std::string name = {}) {
    return add_variable({lower, upper, variable_type::integer, objective, std::move(name)});
  }

  /// Adds lower <= terms <= upper and returns its index. Throws std::invalid_argument on a term
  /// naming an unknown variable or a non-finite coefficient.
  std::size_t add_constraint(std::vector<linear_term> terms, double lower, double upper, std::string name = {}) {
    for (const auto& t : terms)
      if (t.variable >= variables_.size() || !std::isfinite(t.coefficient))
        throw std::invalid_argument("milp_model: constraint '" + name + "' has a bad term");
    constraints_.push_back({std::move(terms), lower, upper, std::move(name)});
    return constraints_.size() - 1;
  }
  std::size_t add_less_equal(std::vector<linear_term> terms, double rhs, std::string name = {}) {
    return add_constraint(std::move(terms), -infinity, rhs, std::move(name));
  }
  std::size_t add_greater_equal(std::vector<linear_term> terms, double rhs, std::string name = {}) {
    return add_constraint(std::move(terms), rhs, infinity, std::move(name));
  }
  std::size_t add_equal(std::vector<linear_term> terms, double rhs, std::string name = {}) {
    return add_constraint(std::move(terms), rhs, rhs, std::move(name));
  }

  /// Reserves room for this many variables and constraints (a builder that counted its model first
  /// avoids the vectors' growth, which briefly holds three times their size).
  void reserve(std::size_t variables, std::size_t constraints) {
    variables_.reserve(variables);
    constraints_.reserve(constraints);
  }

  [[nodiscard]] const std::vector<milp_variable>& variables() const noexcept { return variables_; }
  [[nodiscard]] const std::vector<linear_constraint>& constraints() const noexcept { return constraints_; }
  [[nodiscard]] std::vector<milp_variable>& variables() noexcept { return variables_; }
  /// Mutable rows, to change bounds or coefficients in place (terms must keep naming existing
  /// variables with finite coefficients).
  [[nodiscard]] std::vector<linear_constraint>& constraints() noexcept { return constraints_; }
  [[nodiscard]] std::size_t num_variables() const noexcept { return variables_.size(); }
  [[nodiscard]] std::size_t num_constraints() const noexcept { return constraints_.size(); }
  [[nodiscard]] std::size_t num_nonzeros() const noexcept {
    std::size_t nnz = 0;
    for (const auto& c : constraints_) nnz += c.terms.size();
    return nnz;
  }

  /// A full assignment to try first (one value per variable), or nullopt.
  std::optional<std::vector<double>> start;

  /// The objective value of an assignment (with the offset). O(variables).
  [[nodiscard]] double objective_value(const std::vector<double>& values) const {
    double z = objective_offset;
    for (std::size_t i = 0; i < variables_.size(); ++i) z += variables_[i].objective * values.at(i);
    return z;
  }

  /// The index of the first bound, integrality or constraint that `values` violates by more than
  /// `tolerance`, as a message; nullopt when it satisfies them all. O(variables + nonzeros).
  [[nodiscard]] std::optional<std::string> first_violation(const std::vector<double>& values, double tolerance = 1e-6) const {
    if (values.size() != variables_.size()) return "wrong number of values";
    for (std::size_t i = 0; i < variables_.size(); ++i) {
      const auto& v = variables_[i];
      if (values[i] < v.lower - tolerance || values[i] > v.upper + tolerance) return "variable " + std::to_string(i) + " out of bounds";
      if (v.type != variable_type::continuous && std::abs(values[i] - std::round(values[i])) > tolerance)
        return "variable " + std::to_string(i) + " not integral";
    }
    for (std::size_t r = 0; r < constraints_.size(); ++r) {
      double lhs = 0;
      for (const auto& t : constraints_[r].terms) lhs += t.coefficient * values[t.variable];
      const double scale = std::max(1.0, std::abs(lhs));
      if (lhs < constraints_[r].lower - tolerance * scale || lhs > constraints_[r].upper + tolerance * scale)
        return "constraint " + std::to_string(r) + (constraints_[r].name.empty() ? "" : " (" + constraints_[r].name + ")") + " violated";
    }
    return std::nullopt;
  }

 private:
  std::vector<milp_variable> variables_;
  std::vector<linear_constraint> constraints_;
};

}  // namespace memsched
