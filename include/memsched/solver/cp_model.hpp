#pragma once
// A backend-neutral constraint-programming scheduling model: integer (and 0/1) variables, optional
// intervals, cumulative resources, reified linear constraints, clauses, all-different, element,
// a reservoir-style "cover" constraint and a linear objective to minimise. Built once, solved by any
// cp_backend (solver/cp_concepts.hpp).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace memsched {

/// An integer variable: lower <= x <= upper and, when `domain` is not empty, x is one of its
/// (sorted, distinct) values.
struct cp_variable {
  std::int64_t lower = 0;
  std::int64_t upper = 0;
  std::vector<std::int64_t> domain;
  std::string name;
  /// True when the domain is within {0, 1}: the variable can be used as a literal.
  [[nodiscard]] bool is_boolean() const noexcept { return lower >= 0 && upper <= 1; }
};

/// A boolean variable or its negation.
struct cp_literal {
  std::size_t variable = 0;
  bool positive = true;
  [[nodiscard]] cp_literal operator!() const noexcept { return {variable, !positive}; }
};

/// An interval [start, end) of `length` (three variables); when `presence` is set the interval
/// exists only when that boolean is 1 (an optional interval), and then start + length == end.
struct cp_interval {
  std::size_t start = 0;
  std::size_t length = 0;
  std::size_t end = 0;
  std::optional<std::size_t> presence;
  std::string name;
};

struct cp_term {
  std::size_t variable = 0;
  std::int64_t coefficient = 0;
};

/// lower <= sum(coefficient * variable) <= upper, enforced only when every literal of `enforce`
/// is true (half-reification; empty: always).
struct cp_linear {
  std::vector<cp_term> terms;
  std::int64_t lower = std::numeric_limits<std::int64_t>::min();
  std::int64_t upper = std::numeric_limits<std::int64_t>::max();
  std::vector<cp_literal> enforce;
};

/// At least one literal is true.
struct cp_clause {
  std::vector<cp_literal> literals;
};

/// An interval consuming `demand` units of a resource while it is present.
struct cp_task {
  std::size_t interval = 0;
  std::int64_t demand = 0;
};

/// At every time, the demands of the present tasks running then sum to at most the capacity: the
/// constant `capacity`, or the variable `capacity_variable` when set.
struct cp_cumulative {
  std::vector<cp_task> tasks;
  std::int64_t capacity = 0;
  std::optional<std::size_t> capacity_variable;
};

/// The variables take distinct values; when `presence` is not empty (one boolean per variable),
/// only entries whose presence is 1 take part.
struct cp_all_different {
  std::vector<std::size_t> variables;
  std::vector<std::size_t> presence;
};

/// result == table[index] (index 0-based).
struct cp_element {
  std::vector<std::int64_t> table;
  std::size_t index = 0;
  std::size_t result = 0;
};

/// Reservoir-style precedence: if `target` is present, some present candidate interval c runs
/// strictly before and still runs at the start of target: start(c) < start(target) < end(c).
/// (A producer whose value is resident when the consumer starts.)
struct cp_cover {
  std::size_t target = 0;
  std::vector<std::size_t> candidates;
};

/// A CP model. Variable, interval and constraint indices are dense: the i-th added has index i.
/// Values of a solution are one integer per variable (solver_result::values[i] is variable i).
/// The objective sum(objective) + objective_offset is minimised (negate it to maximise); an empty
/// objective asks for any feasible assignment.
class cp_model {
 public:
  static constexpr std::int64_t min_value = std::numeric_limits<std::int64_t>::min();
  static constexpr std::int64_t max_value = std::numeric_limits<std::int64_t>::max();

  std::vector<cp_term> objective;
  std::int64_t objective_offset = 0;
  /// An assignment (one value per variable) to start from (local search needs one), or nullopt.
  /// Entries equal to `unset` are left to the backend (it completes them by a short search).
  std::optional<std::vector<std::int64_t>> start;
  static constexpr std::int64_t unset = std::numeric_limits<std::int64_t>::min();
  /// Search hints, optional. `branch_order`: variables to decide first, in this order (smallest
  /// value first). `groups`: units that local search frees or fixes together (each a list of
  /// variables; variables in no group are never fixed); `group_neighbours[g]`: groups related to
  /// group g (local search grows neighbourhoods along them).
  std::vector<std::size_t> branch_order;
  std::vector<std::vector<std::size_t>> groups;
  std::vector<std::vector<std::size_t>> group_neighbours;
  /// `group_intervals[g]`: intervals belonging to group g. When set, local search also frees the
  /// groups whose present intervals (in the incumbent) run at a random time (time-window neighbourhoods).
  std::vector<std::vector<std::size_t>> group_intervals;

  /// Adds lower <= x <= upper; returns its index. Throws std::invalid_argument when lower > upper.
  std::size_t add_variable(std::int64_t lower, std::int64_t upper, std::string name = {}) {
    if (lower > upper) throw std::invalid_argument("cp_model::add_variable: '" + name + "' has lower > upper");
    variables_.push_back({lower, upper, {}, std::move(name)});
    return variables_.size() - 1;
  }
  /// Adds a variable over a finite set of values (sorted and deduplicated here). Throws
  /// std::invalid_argument when the set is empty.
  std::size_t add_variable(std::vector<std::int64_t> values, std::string name = {}) {
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    if (values.empty()) throw std::invalid_argument("cp_model::add_variable: '" + name + "' has an empty domain");
    variables_.push_back({values.front(), values.back(), std::move(values), std::move(name)});
    return variables_.size() - 1;
  }
  std::size_t add_boolean(std::string name = {}) { return add_variable(0, 1, std::move(name)); }
  std::size_t add_constant(std::int64_t value, std::string name = {}) { return add_variable(value, value, std::move(name)); }

  /// Adds an interval over existing variables; returns its index. Throws std::invalid_argument on
  /// an unknown variable or a presence that is not boolean.
  std::size_t add_interval(cp_interval iv) {
    check_var(iv.start, "add_interval");
    check_var(iv.length, "add_interval");
    check_var(iv.end, "add_interval");
    if (iv.presence) check_bool(*iv.presence, "add_interval");
    intervals_.push_back(std::move(iv));
    return intervals_.size() - 1;
  }

  /// The constraint adders check their indices and throw std::invalid_argument naming the adder.
  std::size_t add(cp_linear c) {
    for (const auto& t : c.terms) check_var(t.variable, "add(cp_linear)");
    for (const auto& l : c.enforce) check_bool(l.variable, "add(cp_linear)");
    linears_.push_back(std::move(c));
    return linears_.size() - 1;
  }
  std::size_t add(cp_clause c) {
    for (const auto& l : c.literals) check_bool(l.variable, "add(cp_clause)");
    clauses_.push_back(std::move(c));
    return clauses_.size() - 1;
  }
  std::size_t add(cp_cumulative c) {
    for (const auto& t : c.tasks) {
      check_interval(t.interval, "add(cp_cumulative)");
      if (t.demand < 0) throw std::invalid_argument("cp_model::add(cp_cumulative): negative demand");
    }
    if (c.capacity_variable) check_var(*c.capacity_variable, "add(cp_cumulative)");
    cumulatives_.push_back(std::move(c));
    return cumulatives_.size() - 1;
  }
  std::size_t add(cp_all_different c) {
    for (auto v : c.variables) check_var(v, "add(cp_all_different)");
    if (!c.presence.empty() && c.presence.size() != c.variables.size())
      throw std::invalid_argument("cp_model::add(cp_all_different): presence must be empty or one per variable");
    for (auto v : c.presence) check_bool(v, "add(cp_all_different)");
    all_differents_.push_back(std::move(c));
    return all_differents_.size() - 1;
  }
  std::size_t add(cp_element c) {
    check_var(c.index, "add(cp_element)");
    check_var(c.result, "add(cp_element)");
    if (c.table.empty()) throw std::invalid_argument("cp_model::add(cp_element): empty table");
    elements_.push_back(std::move(c));
    return elements_.size() - 1;
  }
  std::size_t add(cp_cover c) {
    check_interval(c.target, "add(cp_cover)");
    for (auto i : c.candidates) check_interval(i, "add(cp_cover)");
    covers_.push_back(std::move(c));
    return covers_.size() - 1;
  }

  /// end(a) <= start(b) when both are present.
  void add_precedence(std::size_t a, std::size_t b) {
    check_interval(a, "add_precedence");
    check_interval(b, "add_precedence");
    cp_linear c{{{intervals_[a].end, 1}, {intervals_[b].start, -1}}, min_value, 0, {}};
    if (intervals_[a].presence) c.enforce.push_back({*intervals_[a].presence, true});
    if (intervals_[b].presence) c.enforce.push_back({*intervals_[b].presence, true});
    add(std::move(c));
  }

  [[nodiscard]] const std::vector<cp_variable>& variables() const noexcept { return variables_; }
  [[nodiscard]] const std::vector<cp_interval>& intervals() const noexcept { return intervals_; }
  [[nodiscard]] const std::vector<cp_linear>& linears() const noexcept { return linears_; }
  [[nodiscard]] const std::vector<cp_clause>& clauses() const noexcept { return clauses_; }
  [[nodiscard]] const std::vector<cp_cumulative>& cumulatives() const noexcept { return cumulatives_; }
  [[nodiscard]] const std::vector<cp_all_different>& all_differents() const noexcept { return all_differents_; }
  [[nodiscard]] const std::vector<cp_element>& elements() const noexcept { return elements_; }
  [[nodiscard]] const std::vector<cp_cover>& covers() const noexcept { return covers_; }
  [[nodiscard]] std::size_t num_variables() const noexcept { return variables_.size(); }

  /// The objective value of an assignment. O(objective terms).
  [[nodiscard]] std::int64_t objective_value(const std::vector<std::int64_t>& values) const {
    std::int64_t z = objective_offset;
    for (const auto& t : objective) z += t.coefficient * values.at(t.variable);
    return z;
  }

  /// The first domain or constraint that `values` violates, as a message; nullopt when it
  /// satisfies them all. O(variables + constraint sizes + tasks log tasks).
  [[nodiscard]] std::optional<std::string> first_violation(const std::vector<std::int64_t>& values) const {
    if (values.size() != variables_.size()) return "wrong number of values";
    for (std::size_t i = 0; i < variables_.size(); ++i) {
      const auto& v = variables_[i];
      if (values[i] < v.lower || values[i] > v.upper ||
          (!v.domain.empty() && !std::binary_search(v.domain.begin(), v.domain.end(), values[i])))
        return "variable " + std::to_string(i) + " (" + v.name + ") outside its domain";
    }
    auto lit = [&](const cp_literal& l) { return (values[l.variable] != 0) == l.positive; };
    auto present = [&](std::size_t i) { return !intervals_[i].presence || values[*intervals_[i].presence] != 0; };
    for (std::size_t i = 0; i < intervals_.size(); ++i) {
      const auto& iv = intervals_[i];
      if (present(i) && (values[iv.start] + values[iv.length] != values[iv.end] || values[iv.length] < 0))
        return "interval " + std::to_string(i) + " (" + iv.name + "): start + length != end";
    }
    for (std::size_t r = 0; r < linears_.size(); ++r) {
      const auto& c = linears_[r];
      if (!std::all_of(c.enforce.begin(), c.enforce.end(), lit)) continue;
      __int128 s = 0;
      for (const auto& t : c.terms) s += static_cast<__int128>(t.coefficient) * values[t.variable];
      if (s < c.lower || s > c.upper) return "linear constraint " + std::to_string(r) + " violated";
    }
    for (std::size_t r = 0; r < clauses_.size(); ++r)
      if (std::none_of(clauses_[r].literals.begin(), clauses_[r].literals.end(), lit))
        return "clause " + std::to_string(r) + " violated";
    for (std::size_t r = 0; r < cumulatives_.size(); ++r) {
      const auto& c = cumulatives_[r];
      const std::int64_t cap = c.capacity_variable ? values[*c.capacity_variable] : c.capacity;
      std::map<std::int64_t, std::int64_t> delta;
      for (const auto& t : c.tasks) {
        if (!present(t.interval)) continue;
        const auto& iv = intervals_[t.interval];
        if (values[iv.length] == 0) continue;
        delta[values[iv.start]] += t.demand;
        delta[values[iv.end]] -= t.demand;
      }
      std::int64_t load = 0;
      for (const auto& [time, d] : delta) {
        load += d;
        if (load > cap) return "cumulative " + std::to_string(r) + " over capacity at time " + std::to_string(time);
      }
    }
    for (std::size_t r = 0; r < all_differents_.size(); ++r) {
      const auto& c = all_differents_[r];
      std::vector<std::int64_t> seen;
      for (std::size_t k = 0; k < c.variables.size(); ++k)
        if (c.presence.empty() || values[c.presence[k]] != 0) seen.push_back(values[c.variables[k]]);
      std::sort(seen.begin(), seen.end());
      if (std::adjacent_find(seen.begin(), seen.end()) != seen.end()) return "all_different " + std::to_string(r) + " violated";
    }
    for (std::size_t r = 0; r < elements_.size(); ++r) {
      const auto& c = elements_[r];
      const std::int64_t i = values[c.index];
      if (i < 0 || i >= static_cast<std::int64_t>(c.table.size()) || c.table[static_cast<std::size_t>(i)] != values[c.result])
        return "element " + std::to_string(r) + " violated";
    }
    for (std::size_t r = 0; r < covers_.size(); ++r) {
      const auto& c = covers_[r];
      if (!present(c.target)) continue;
      const std::int64_t t = values[intervals_[c.target].start];
      const bool ok = std::any_of(c.candidates.begin(), c.candidates.end(), [&](std::size_t i) {
        return present(i) && values[intervals_[i].start] < t && t < values[intervals_[i].end];
      });
      if (!ok) return "cover " + std::to_string(r) + " violated";
    }
    return std::nullopt;
  }

 private:
  void check_var(std::size_t v, const char* where) const {
    if (v >= variables_.size()) throw std::invalid_argument(std::string("cp_model::") + where + ": unknown variable " + std::to_string(v));
  }
  void check_bool(std::size_t v, const char* where) const {
    check_var(v, where);
    if (!variables_[v].is_boolean())
      throw std::invalid_argument(std::string("cp_model::") + where + ": variable " + std::to_string(v) + " is not boolean");
  }
  void check_interval(std::size_t i, const char* where) const {
    if (i >= intervals_.size()) throw std::invalid_argument(std::string("cp_model::") + where + ": unknown interval " + std::to_string(i));
  }

  std::vector<cp_variable> variables_;
  std::vector<cp_interval> intervals_;
  std::vector<cp_linear> linears_;
  std::vector<cp_clause> clauses_;
  std::vector<cp_cumulative> cumulatives_;
  std::vector<cp_all_different> all_differents_;
  std::vector<cp_element> elements_;
  std::vector<cp_cover> covers_;
};

}  // namespace memsched
