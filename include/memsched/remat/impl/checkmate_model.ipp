#pragma once
// The definitions of remat/checkmate_model.hpp's functions declared MEMSCHED_DECL there. Header-only
// mode: that header includes this file at its end and they are compiled in the TUs that call them
// (core/config.hpp). With MEMSCHED_SEPARATE_COMPILATION only src/memsched.cpp includes it.

#include <memsched/remat/checkmate_model.hpp>

namespace memsched::detail {

/// Sets the model's order, positions, memory unit, budget in units and cost scale.
MEMSCHED_DECL void set_checkmate_scales(checkmate_model& cm, const memory_graph& g, std::int64_t budget, std::span<const std::size_t> order,
                                        const checkmate_model_options& options) {
  cm.order.assign(order.begin(), order.end());
  cm.position = detail::positions_of(order);
  cm.memory_unit = options.scale_memory ? detail::checkmate_memory_unit(g) : 1;
  cm.budget_units = budget / cm.memory_unit;
  double max_cost = 0;
  for (std::size_t v = 0; v < g.size(); ++v) max_cost = std::max(max_cost, g.cost(v));
  if (options.scale_cost && max_cost > 0) {
    int e = 0;
    std::frexp(max_cost, &e);           // max_cost in [2^(e-1), 2^e)
    cm.cost_scale = std::ldexp(1.0, 11 - e);  // largest scaled cost in [1024, 2048)
  }
}

/// The graph by input position, as the constraints read it: sizes, workspaces and costs in model
/// units, consumers, and how many of the model's edges have a consumer before each position.
struct checkmate_positions {
  std::vector<double> M, W, C;
  std::vector<std::vector<std::size_t>> users;  ///< users[i]: consumer positions of i, ascending.
  std::vector<std::size_t> edges_before;        ///< edges_before[k]: edges with consumer < k.
};

/// Fills cm.output and cm.edges (sorted by consumer) and returns the graph by position.
MEMSCHED_DECL checkmate_positions checkmate_position_data(checkmate_model& cm, const memory_graph& g) {
  const std::size_t n = g.size();
  const auto& order = cm.order;
  checkmate_positions at{std::vector<double>(n), std::vector<double>(n), std::vector<double>(n), std::vector<std::vector<std::size_t>>(n),
                         std::vector<std::size_t>(n + 1, 0)};
  cm.output.assign(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t v = order[i];
    at.M[i] = static_cast<double>(g.bytes(v) / cm.memory_unit);
    at.W[i] = static_cast<double>(g.workspace(v) / cm.memory_unit);
    at.C[i] = g.cost(v) * cm.cost_scale;
    cm.output[i] = g.is_output(v);
  }
  for (std::size_t k = 0; k < n; ++k) {
    std::vector<std::size_t> ins;
    for (auto p : g.predecessors(order[k])) ins.push_back(cm.position[p]);
    std::sort(ins.begin(), ins.end());
    for (std::size_t i : ins) {
      cm.edges.emplace_back(i, k);
      at.users[i].push_back(k);
    }
  }
  for (const auto& e : cm.edges) ++at.edges_before[e.second + 1];
  for (std::size_t k = 0; k < n; ++k) at.edges_before[k + 1] += at.edges_before[k];
  return at;
}

/// Adds R, S and U of every stage (stage by stage) and the objective's constant: each vertex's
/// computation in its own stage is the constant R[t][t].
MEMSCHED_DECL void add_checkmate_variables(checkmate_model& cm, const checkmate_positions& at) {
  milp_model& m = cm.model;
  constexpr std::size_t constant = checkmate_model::constant;
  const std::size_t n = cm.order.size();
  const double B = static_cast<double>(cm.budget_units);
  cm.R.resize(n);
  cm.S.resize(n);
  cm.U.resize(n);
  cm.FREE.resize(n);
  double offset = 0;
  for (std::size_t i = 0; i < n; ++i) offset += at.C[i];
  m.objective_offset = offset;
  for (std::size_t t = 0; t < n; ++t) {
    cm.R[t].assign(t + 1, constant);
    for (std::size_t i = 0; i < t; ++i) cm.R[t][i] = m.add_binary(at.C[i]);
    cm.S[t].assign(t, constant);
    for (std::size_t i = 0; i < t; ++i) cm.S[t][i] = m.add_binary();
    cm.U[t].assign(t + 1, constant);
    for (std::size_t k = 0; k <= t; ++k) cm.U[t][k] = m.add_continuous(0, B);
  }
}

/// A linear expression with a constant, for constraints that mention the constant diagonal R[t][t]
/// or the fixed S[n] (outputs resident after the last stage).
struct checkmate_expr {
  std::vector<linear_term> terms;
  double constant = 0;
};

/// Adds c R[t][i] to e.
MEMSCHED_DECL void add_checkmate_r(const checkmate_model& cm, checkmate_expr& e, std::size_t t, std::size_t i, double c) {
  if (cm.R[t][i] == checkmate_model::constant)
    e.constant += c;
  else
    e.terms.push_back({cm.R[t][i], c});
}

/// Adds c S[t][i] to e (S[n][i]: 1 for outputs).
MEMSCHED_DECL void add_checkmate_s(const checkmate_model& cm, checkmate_expr& e, std::size_t t, std::size_t i, double c) {
  if (t == cm.order.size())
    e.constant += cm.output[i] ? c : 0.0;
  else
    e.terms.push_back({cm.S[t][i], c});
}

/// Adds the row lower <= e <= upper, unless e is a constant.
MEMSCHED_DECL void add_checkmate_row(checkmate_model& cm, checkmate_expr e, double lower, double upper) {
  if (e.terms.empty()) return;
  cm.model.add_constraint(std::move(e.terms), lower - e.constant, upper - e.constant);
}

/// Stage t: R[t][k] <= R[t][j] + S[t][j] for each input j of k, k <= t, and checkpoints carried,
/// S[t][i] <= R[t-1][i] + S[t-1][i] (trivial for i = t-1).
MEMSCHED_DECL void add_checkmate_dependencies(checkmate_model& cm, const checkmate_positions& at, std::size_t t) {
  for (std::size_t e = 0; e < at.edges_before[t + 1]; ++e) {
    const auto [j, k] = cm.edges[e];
    checkmate_expr x;
    add_checkmate_r(cm, x, t, k, 1);
    add_checkmate_r(cm, x, t, j, -1);
    add_checkmate_s(cm, x, t, j, -1);
    add_checkmate_row(cm, std::move(x), -infinity, 0);
  }
  if (t >= 1)
    for (std::size_t i = 0; i + 1 < t; ++i) {
      checkmate_expr x;
      add_checkmate_s(cm, x, t, i, 1);
      add_checkmate_r(cm, x, t - 1, i, -1);
      add_checkmate_s(cm, x, t - 1, i, -1);
      add_checkmate_row(cm, std::move(x), -infinity, 0);
    }
}

/// Stage t: FREE[t][(i, k)] for k < t, with the hazard count of the paper. FREE stays the constant
/// 0 when o_i is still needed (o_t reads it, or it is an output and t the last stage).
MEMSCHED_DECL void add_checkmate_frees(checkmate_model& cm, const checkmate_positions& at, std::size_t t) {
  const std::size_t n = cm.order.size();
  cm.FREE[t].assign(at.edges_before[t], checkmate_model::constant);
  for (std::size_t e = 0; e < at.edges_before[t]; ++e) {
    const auto [i, k] = cm.edges[e];
    const bool frontier_reads = std::binary_search(at.users[i].begin(), at.users[i].end(), t);
    const bool last_and_output = t + 1 == n && cm.output[i];
    if (frontier_reads || last_and_output) continue;  // FREE = 0: o_i is still needed
    const std::size_t f = cm.model.add_binary();
    cm.FREE[t][e] = f;
    // hazards = (1 - R[t][k]) + S[t+1][i] + sum of R[t][j] over users j of i with k < j < t.
    checkmate_expr h;
    h.constant = 1;
    add_checkmate_r(cm, h, t, k, -1);
    double max_hazards = 1;
    if (t + 1 < n) {
      add_checkmate_s(cm, h, t + 1, i, 1);
      max_hazards += 1;
    }
    for (std::size_t j : at.users[i])
      if (j > k && j < t) {
        add_checkmate_r(cm, h, t, j, 1);
        max_hazards += 1;
      }
    // 1 - FREE <= hazards  and  max_hazards (1 - FREE) >= hazards.
    checkmate_expr lo = h;
    lo.terms.push_back({f, 1});
    add_checkmate_row(cm, std::move(lo), 1, infinity);
    checkmate_expr hi = h;
    hi.terms.push_back({f, max_hazards});
    add_checkmate_row(cm, std::move(hi), -infinity, max_hazards);
  }
}

/// Stage t's memory: the U chain, and U + workspace <= budget (recorded in cm.budget_rows).
MEMSCHED_DECL void add_checkmate_memory(checkmate_model& cm, const checkmate_positions& at, std::size_t t) {
  const auto& M = at.M;
  const auto& W = at.W;
  const double B = static_cast<double>(cm.budget_units);
  for (std::size_t k = 0; k <= t; ++k) {
    checkmate_expr x;
    x.terms.push_back({cm.U[t][k], 1});
    if (k == 0) {
      for (std::size_t i = 0; i < t; ++i)
        if (M[i] != 0) add_checkmate_s(cm, x, t, i, -M[i]);
    } else {
      x.terms.push_back({cm.U[t][k - 1], -1});
      for (std::size_t e = at.edges_before[k - 1]; e < at.edges_before[k]; ++e)
        if (cm.FREE[t][e] != checkmate_model::constant && M[cm.edges[e].first] != 0) x.terms.push_back({cm.FREE[t][e], M[cm.edges[e].first]});
    }
    if (M[k] != 0) add_checkmate_r(cm, x, t, k, -M[k]);
    add_checkmate_row(cm, std::move(x), 0, 0);
    if (W[k] != 0) {
      checkmate_expr w;
      w.terms.push_back({cm.U[t][k], 1});
      add_checkmate_r(cm, w, t, k, W[k]);
      cm.budget_rows.push_back(cm.model.num_constraints());
      add_checkmate_row(cm, std::move(w), -infinity, B);
    }
  }
}

/// Outputs resident after the last stage: R[n-1][i] + S[n-1][i] >= 1.
MEMSCHED_DECL void add_checkmate_outputs_resident(checkmate_model& cm) {
  const std::size_t n = cm.order.size();
  for (std::size_t i = 0; i + 1 < n; ++i)
    if (cm.output[i]) {
      checkmate_expr x;
      add_checkmate_r(cm, x, n - 1, i, 1);
      add_checkmate_s(cm, x, n - 1, i, 1);
      add_checkmate_row(cm, std::move(x), 1, infinity);
    }
}

MEMSCHED_DEF [[nodiscard]] std::optional<checkmate_model> build_checkmate_model_until(const memory_graph& g, std::int64_t budget,
                                                                                       std::span<const std::size_t> order,
                                                                                       const checkmate_model_options& options,
                                                                                       const call_deadline* deadline) {
  if (budget < 0) throw std::invalid_argument("build_checkmate_model: negative budget");
  detail::check_checkmate_order(g, order, "build_checkmate_model");
  checkmate_model cm;
  set_checkmate_scales(cm, g, budget, order, options);
  const checkmate_positions at = checkmate_position_data(cm, g);
  {
    const model_size_estimate size = checkmate_model_size(g, order, {}, false, std::numeric_limits<std::uint64_t>::max(), options);
    cm.model.reserve(size.variables, size.constraints);
  }
  add_checkmate_variables(cm, at);
  for (std::size_t t = 0; t < g.size(); ++t) {
    if (deadline != nullptr && deadline->passed()) return std::nullopt;
    add_checkmate_dependencies(cm, at, t);
    add_checkmate_frees(cm, at, t);
    add_checkmate_memory(cm, at, t);
  }
  add_checkmate_outputs_resident(cm);
  return cm;
}

}  // namespace memsched::detail
