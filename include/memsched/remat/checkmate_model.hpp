#pragma once
// The MILP of Checkmate (Jain et al., MLSys 2020) for one input topological order: the model, its
// index maps, and the conversions between plans and assignments. checkmate_milp (checkmate.hpp)
// solves it; checkmate_lp_rounding (checkmate_lp_rounding.hpp) rounds its LP relaxation.
//
// Stage t (t = 0..n-1) of the plan computes, in input-order position order, a subset of the first
// t+1 vertices of the order, ending with o_t (frontier advancing); values may be kept across stages
// (checkpoints). Variables (positions i, k, stages t):
//   R[t][i]  (i <= t)  o_i is computed in stage t; R[t][t] = 1 is a constant, not a variable;
//   S[t][i]  (i <  t)  o_i is resident at the start of stage t (S[0] is empty);
//   FREE[t][e]  (edge e = (i, k), k < t)  o_i is freed right after o_k is computed in stage t;
//   U[t][k]  (k <= t)  memory units resident after o_k's slot in stage t (continuous, in [0, budget]).
// Constraints: R[t][k] <= R[t][j] + S[t][j] for every input j of k; S[t][i] <= R[t-1][i] +
// S[t-1][i]; every output resident after the last stage; FREE linearised with the paper's hazard
// count; U[t][0] = sum M S[t][*] + M_0 R[t][0], U[t][k] = U[t][k-1] + M_k R[t][k] - sum_i M_i
// FREE[t][(i, k-1)]; U[t][k] + W_k R[t][k] <= budget. Objective: sum cost x R.
// Reductions: memory in units of the gcd of all sizes and workspaces; R[t][t] and S[t+1][t] (trivial
// carry) are constants; FREE[t][(i, t)] and FREE[t][t][t] happen after the last slot of stage t and
// never enter U (the paper's elimination of FREE[t][k][k]: a recomputation k < t that nobody reads
// is never optimal, so it needs no free); FREE[t][(i, k)] is fixed to 0 (not created) when o_t reads
// o_i, or when t is the last stage and o_i is an output.

#include <memsched/core/config.hpp>
#include <memsched/core/errors.hpp>
#include <memsched/core/status.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/remat/detail/call_deadline.hpp>
#include <memsched/remat/detail/checkmate_staging.hpp>
#include <memsched/sim/execution_plan.hpp>
#include <memsched/sim/plan_from_computes.hpp>
#include <memsched/sim/simulate_plan.hpp>
#include <memsched/solver/milp_model.hpp>
#include <memsched/solver/model_size.hpp>
#include <memsched/solver/solver_options.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace memsched {

/// Checkmate's MILP for one graph, budget and input order, with the maps from (stage, position) to
/// model variables so callers can inspect or extend the model. Positions index `order`.
struct checkmate_model {
  static constexpr std::size_t constant = std::numeric_limits<std::size_t>::max();  ///< Not a variable.

  milp_model model;
  std::vector<std::size_t> order;     ///< Input order: position -> vertex.
  std::vector<std::size_t> position;  ///< Vertex -> position.
  std::int64_t memory_unit = 1;       ///< Bytes per model memory unit (gcd of sizes and workspaces).
  std::int64_t budget_units = 0;      ///< floor(budget / memory_unit).
  double cost_scale = 1;              ///< Model objective = cost_scale x total cost (a power of two).
  std::vector<std::vector<std::size_t>> R;     ///< R[t][i], i <= t; R[t][t] is `constant` (= 1).
  std::vector<std::vector<std::size_t>> S;     ///< S[t][i], i < t.
  std::vector<std::vector<std::size_t>> U;     ///< U[t][k], k <= t.
  std::vector<std::pair<std::size_t, std::size_t>> edges;  ///< (producer, consumer) positions, by consumer.
  std::vector<std::vector<std::size_t>> FREE;  ///< FREE[t][e] for the edges with consumer < t; `constant` = 0.
  std::vector<char> output;                    ///< By position.
  std::vector<std::size_t> budget_rows;        ///< The rows U[t][k] + W_k R[t][k] <= budget_units.

  /// Value of R[t][i] in an assignment (1 for the constant diagonal).
  [[nodiscard]] bool r(const std::vector<double>& x, std::size_t t, std::size_t i) const {
    return R[t][i] == constant ? true : x[R[t][i]] > 0.5;
  }
  /// Value of S[t][i] in an assignment; S[n][i] is 1 exactly for outputs.
  [[nodiscard]] bool s(const std::vector<double>& x, std::size_t t, std::size_t i) const {
    if (t == order.size()) return output[i] != 0;
    return S[t][i] != constant && x[S[t][i]] > 0.5;
  }
  /// Converts a model objective value back to a total cost.
  [[nodiscard]] double cost_of_objective(double objective) const { return objective / cost_scale; }
};

/// Options of build_checkmate_model.
struct checkmate_model_options {
  bool scale_memory = true;  ///< Divide sizes, workspaces and the budget by their gcd.
  bool scale_cost = true;    ///< Scale costs by a power of two so that the largest is in [1024, 2048).
};

namespace detail {

inline std::int64_t checkmate_memory_unit(const memory_graph& g) {
  std::int64_t unit = 0;
  for (std::size_t v = 0; v < g.size(); ++v) unit = std::gcd(std::gcd(unit, g.bytes(v)), g.workspace(v));
  return unit == 0 ? 1 : unit;
}

}  // namespace detail

/// The size of Checkmate's MILP for `order` (exactly what build_checkmate_model builds: variables,
/// constraints, nonzeros), and the bytes it and `backend` (a backend's name, e.g. "cbc") will need,
/// counted without building it (`lp`: the backend solves only LP relaxations). The count stops, with complete = false, as soon as the bytes pass
/// `stop_above` (so refusing a huge model is cheap). O(n + m log m + n * d) for the stages counted,
/// d = most inputs of a vertex. Precondition: `order` is a topological order of g (not checked).
[[nodiscard]] inline model_size_estimate checkmate_model_size(const memory_graph& g, std::span<const std::size_t> order,
                                                              std::string_view backend, bool lp = false,
                                                              std::uint64_t stop_above = std::numeric_limits<std::uint64_t>::max(),
                                                              const checkmate_model_options& options = {}) {
  const std::size_t n = order.size();
  const std::vector<std::size_t> pos = detail::positions_of(order);
  const std::int64_t unit = options.scale_memory ? detail::checkmate_memory_unit(g) : 1;
  std::vector<char> has_m(n), has_w(n), output(n);
  for (std::size_t i = 0; i < n; ++i) {
    has_m[i] = g.bytes(order[i]) / unit != 0;
    has_w[i] = g.workspace(order[i]) / unit != 0;
    output[i] = g.is_output(order[i]);
  }
  // The builder's rows, stage by stage. d[i]: edges (i, k) with consumer k < t; the FREE variables
  // of stage t are those edges except the ones whose producer the frontier o_t reads (or, at the
  // last stage, that are outputs); each FREE has two rows of 2 + [t + 1 < n] + c terms, c = users of
  // i strictly between k and t, whose sum over the edges of i is d[i] (d[i] - 1) / 2.
  std::vector<std::uint64_t> d(n, 0);
  std::vector<std::size_t> mark(n, std::numeric_limits<std::size_t>::max());
  std::uint64_t edges_below = 0, edges_below_m = 0, pairs_below = 0;  // over consumers < t
  std::uint64_t prefix_m = 0, prefix_w = 0;                              // vertices < t with bytes / workspace
  std::uint64_t index_entries = 0, rows_terms_capacity = 0;
  model_size_estimate e;
  auto bytes_so_far = [&] {
    // Our model: variables and rows (terms with the slack of push_back growth), the index maps.
    e.model_bytes = e.variables * sizeof(milp_variable) + e.constraints * sizeof(linear_constraint) +
                    rows_terms_capacity * sizeof(linear_term) + index_entries * sizeof(std::size_t) + 4 * n * sizeof(std::vector<std::size_t>);
    detail::add_backend_bytes(e, backend, lp);
    return e.bytes();
  };
  std::vector<std::size_t> excluded;
  for (std::size_t t = 0; t < n; ++t) {
    const std::size_t v = order[t];
    std::uint64_t in_t = 0;
    excluded.clear();
    for (auto p : g.predecessors(v)) {
      ++in_t;
      const std::size_t i = pos[p];
      if (mark[i] != t) mark[i] = t, excluded.push_back(i);
    }
    if (t + 1 == n)
      for (std::size_t i = 0; i < n; ++i)
        if (output[i] && mark[i] != t) mark[i] = t, excluded.push_back(i);
    std::uint64_t free_vars = edges_below, free_m = edges_below_m, free_pairs = pairs_below;
    for (std::size_t i : excluded) {
      free_vars -= d[i];
      if (has_m[i]) free_m -= d[i];
      free_pairs -= d[i] * (d[i] - (d[i] > 0)) / 2;
    }
    const std::uint64_t tt = t, has_next = t + 1 < n;
    e.variables += 3 * tt + 1 + free_vars;
    index_entries += 3 * tt + 1 + edges_below;
    std::uint64_t rows = 0, terms = 0;
    // Dependencies: the edges with consumer <= t (3 terms, 2 when the consumer is o_t itself).
    rows += edges_below + in_t;
    terms += 3 * edges_below + 2 * in_t;
    // Checkpoints carried.
    if (t >= 2) rows += tt - 1, terms += 3 * (tt - 1);
    // FREE linearisation.
    rows += 2 * free_vars;
    terms += 2 * (free_vars * (2 + has_next) + free_pairs);
    // The U chain and the workspace rows.
    rows += tt + 1;
    terms += (tt + 1) + tt + prefix_m + free_m + prefix_m;
    const std::uint64_t w_rows = prefix_w + has_w[t];
    rows += w_rows;
    terms += w_rows + prefix_w;
    e.constraints += rows;
    e.nonzeros += terms;
    // Rows grow by push_back: capacity is a power of two at least the size (1.5x on average).
    rows_terms_capacity += terms + terms / 2;
    // The edges with consumer t join the counts of stage t + 1.
    for (auto p : g.predecessors(v)) {
      const std::size_t i = pos[p];
      pairs_below += d[i];
      ++d[i];
      ++edges_below;
      if (has_m[i]) ++edges_below_m;
    }
    prefix_m += has_m[t];
    prefix_w += has_w[t];
    if (bytes_so_far() > stop_above && t + 1 < n) {
      e.complete = false;
      return e;
    }
  }
  // Outputs resident after the last stage.
  for (std::size_t i = 0; i + 1 < n; ++i)
    if (output[i]) ++e.constraints, e.nonzeros += 2, rows_terms_capacity += 2;
  bytes_so_far();
  return e;
}

namespace detail {

/// build_checkmate_model, stopped (nullopt) once `deadline` (when not null) has passed: checked
/// once per stage, so a call overruns it by one stage's rows at most.
MEMSCHED_DECL [[nodiscard]] std::optional<checkmate_model> build_checkmate_model_until(const memory_graph& g, std::int64_t budget,
                                                                                       std::span<const std::size_t> order,
                                                                                       const checkmate_model_options& options,
                                                                                       const call_deadline* deadline);

/// Changes the budget of a model built by build_checkmate_model: the same model (bit for bit) as
/// a new build for `budget`, in O(n^2) instead of the build's O(n^2 m). Precondition: budget >= 0.
inline void set_checkmate_budget(checkmate_model& cm, std::int64_t budget) {
  const std::int64_t units = budget / cm.memory_unit;
  const double delta = static_cast<double>(units) - static_cast<double>(cm.budget_units);
  auto& vars = cm.model.variables();
  for (const auto& stage : cm.U)
    for (std::size_t u : stage) vars[u].upper = static_cast<double>(units);
  auto& rows = cm.model.constraints();
  for (std::size_t r : cm.budget_rows) rows[r].upper += delta;  // integers: exact
  cm.budget_units = units;
}

}  // namespace detail

/// Builds Checkmate's MILP (see the file comment) for `order`, a topological order of g (vertex
/// indices). O(n^2 + n m) variables and constraints; O(n^2 m) time in the worst case.
/// Throws invalid_order when `order` is not a topological order, std::invalid_argument on a
/// negative budget.
[[nodiscard]] inline checkmate_model build_checkmate_model(const memory_graph& g, std::int64_t budget,
                                                           std::span<const std::size_t> order,
                                                           const checkmate_model_options& options = {}) {
  return *detail::build_checkmate_model_until(g, budget, order, options, nullptr);
}

/// Decodes an assignment of a Checkmate model into an execution plan (the paper's Algorithm 1):
/// stage by stage, the computations R[t][*] in position order, skipping a computation of a value
/// that is a checkpoint of the stage (already resident); recomputations nobody reads are dropped
/// and every value is freed right after its last use (as early as possible), so the plan's peak
/// and cost are at most what the assignment accounts for. O(n^2 + plan length).
/// Precondition: `x` satisfies the model (model.first_violation(x) is nullopt).
[[nodiscard]] inline execution_plan decode_checkmate_solution(const memory_graph& g, const checkmate_model& cm,
                                                              const std::vector<double>& x) {
  const std::size_t n = cm.order.size();
  std::vector<std::vector<char>> r(n);
  for (std::size_t t = 0; t < n; ++t) {
    r[t].assign(t + 1, 0);
    for (std::size_t i = 0; i <= t; ++i) r[t][i] = cm.r(x, t, i) && !(i < t && cm.s(x, t, i));
  }
  return detail::staged_plan(g, cm.order, r);
}

namespace detail {

/// The full assignment of a Checkmate model for given R (r[t][i], i <= t) and S (s[t][i], i < t;
/// s[n] = outputs): FREE by its definition, U by its recurrence. O(n^2 + n m).
inline std::vector<double> complete_checkmate_assignment(const memory_graph& g, const checkmate_model& cm,
                                                         const std::vector<std::vector<char>>& r,
                                                         const std::vector<std::vector<char>>& s) {
  const std::size_t n = cm.order.size();
  std::vector<double> x(cm.model.num_variables(), 0.0);
  for (std::size_t t = 0; t < n; ++t) {
    for (std::size_t i = 0; i < t; ++i) {
      x[cm.R[t][i]] = r[t][i];
      x[cm.S[t][i]] = s[t][i];
    }
  }
  auto R = [&](std::size_t t, std::size_t i) { return r[t][i] != 0; };
  auto Sx = [&](std::size_t t, std::size_t i) { return s[t][i] != 0; };
  // FREE by its definition, U by its recurrence.
  std::vector<std::vector<std::size_t>> users(n);
  for (const auto& [i, k] : cm.edges) users[i].push_back(k);
  std::vector<double> M(n);
  for (std::size_t i = 0; i < n; ++i) M[i] = static_cast<double>(g.bytes(cm.order[i]) / cm.memory_unit);
  for (std::size_t t = 0; t < n; ++t) {
    std::vector<double> freed_after(t + 1, 0.0);
    for (std::size_t e = 0; e < cm.FREE[t].size(); ++e) {
      if (cm.FREE[t][e] == checkmate_model::constant) continue;
      const auto [i, k] = cm.edges[e];
      bool f = R(t, k) && !Sx(t + 1, i);
      for (std::size_t j : users[i])
        if (j > k && j <= t && R(t, j)) f = false;
      x[cm.FREE[t][e]] = f;
      if (f) freed_after[k] += M[i];
    }
    double u = 0;
    for (std::size_t i = 0; i < t; ++i)
      if (Sx(t, i)) u += M[i];
    for (std::size_t k = 0; k <= t; ++k) {
      if (k > 0) u -= freed_after[k - 1];
      if (R(t, k)) u += M[k];
      x[cm.U[t][k]] = u;
    }
  }
  return x;
}

}  // namespace detail

/// Encodes an execution plan as an assignment of a Checkmate model, for a start solution. The plan
/// must compute the vertices for the first time in the model's input order (else nullopt). Its
/// computations are re-staged: stage t holds those after the first computation of o_{t-1} up to
/// the first computation of o_t, sorted into position order with duplicates merged; computations
/// after the first computation of the last vertex are dropped. S is the smallest set of checkpoints
/// that the re-staged computations need, FREE and U follow. The re-staged plan may use more memory
/// than `plan`: check the assignment with cm.model.first_violation. O(n^2 + n m + plan length).
[[nodiscard]] inline std::optional<std::vector<double>> encode_checkmate_plan(const memory_graph& g, const checkmate_model& cm,
                                                                             const execution_plan& plan) {
  const std::size_t n = cm.order.size();
  if (n != g.size()) return std::nullopt;
  std::vector<std::vector<char>> r(n);
  for (std::size_t t = 0; t < n; ++t) r[t].assign(t + 1, 0);
  std::vector<char> seen(n, 0);
  std::size_t stage = 0;  // the stage the next computation belongs to
  for (const auto& step : plan.steps) {
    if (step.op != plan_op::compute) continue;
    if (step.node >= n) return std::nullopt;
    if (stage == n) break;  // after the last first computation: dropped
    const std::size_t i = cm.position[step.node];
    if (!seen[i]) {
      if (i != stage) return std::nullopt;  // first computations out of input order
      seen[i] = 1;
      r[stage][i] = 1;
      ++stage;
    } else {
      r[stage][i] = 1;
    }
  }
  if (stage != n) return std::nullopt;
  // Smallest checkpoints: walk stages backwards with the set of positions needed at the stage end.
  std::vector<std::vector<char>> s(n + 1);
  s[n].assign(n, 0);
  for (std::size_t i = 0; i < n; ++i) s[n][i] = cm.output[i];
  std::vector<char> need(n, 0);
  for (std::size_t t = n; t-- > 0;) {
    need = s[t + 1];
    need.resize(n, 0);
    for (std::size_t k = t + 1; k-- > 0;) {
      if (!r[t][k]) continue;
      if (!need[k] && k != t) {  // a computation nobody needs: drop it
        r[t][k] = 0;
        continue;
      }
      need[k] = 0;
      for (auto p : g.predecessors(cm.order[k])) need[cm.position[p]] = 1;
    }
    s[t].assign(n, 0);
    for (std::size_t i = 0; i < t; ++i) s[t][i] = need[i];
    for (std::size_t i = t; i < n; ++i)
      if (need[i]) return std::nullopt;  // a value needed before its first computation: not a valid plan
  }
  return detail::complete_checkmate_assignment(g, cm, r, s);
}

}  // namespace memsched

#ifndef MEMSCHED_SEPARATE_COMPILATION
#include <memsched/remat/impl/checkmate_model.ipp>
#endif
