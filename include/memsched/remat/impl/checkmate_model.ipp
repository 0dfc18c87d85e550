#pragma once
// The definitions of remat/checkmate_model.hpp's functions declared MEMSCHED_DECL there. Header-only
// mode: that header includes this file at its end and they are compiled in the TUs that call them
// (core/config.hpp). With MEMSCHED_SEPARATE_COMPILATION only src/memsched.cpp includes it.

#include <memsched/remat/checkmate_model.hpp>

namespace memsched::detail {

MEMSCHED_DEF [[nodiscard]] std::optional<checkmate_model> build_checkmate_model_until(const memory_graph& g, std::int64_t budget,
                                                                                       std::span<const std::size_t> order,
                                                                                       const checkmate_model_options& options,
                                                                                       const call_deadline* deadline) {
  if (budget < 0) throw std::invalid_argument("build_checkmate_model: negative budget");
  detail::check_checkmate_order(g, order, "build_checkmate_model");
  const std::size_t n = g.size();
  checkmate_model cm;
  constexpr std::size_t constant = checkmate_model::constant;
  cm.order.assign(order.begin(), order.end());
  cm.position = detail::positions_of(order);
  cm.memory_unit = options.scale_memory ? detail::checkmate_memory_unit(g) : 1;
  cm.budget_units = budget / cm.memory_unit;
  double max_cost = 0;
  for (std::size_t v = 0; v < n; ++v) max_cost = std::max(max_cost, g.cost(v));
  if (options.scale_cost && max_cost > 0) {
    int e = 0;
    std::frexp(max_cost, &e);           // max_cost in [2^(e-1), 2^e)
    cm.cost_scale = std::ldexp(1.0, 11 - e);  // largest scaled cost in [1024, 2048)
  }
  const auto& pos = cm.position;
  std::vector<double> M(n), W(n), C(n);
  cm.output.assign(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t v = order[i];
    M[i] = static_cast<double>(g.bytes(v) / cm.memory_unit);
    W[i] = static_cast<double>(g.workspace(v) / cm.memory_unit);
    C[i] = g.cost(v) * cm.cost_scale;
    cm.output[i] = g.is_output(v);
  }
  // Edges by position, sorted by consumer; users[i]: consumer positions of i, ascending.
  std::vector<std::vector<std::size_t>> users(n);
  for (std::size_t k = 0; k < n; ++k) {
    std::vector<std::size_t> ins;
    for (auto p : g.predecessors(order[k])) ins.push_back(pos[p]);
    std::sort(ins.begin(), ins.end());
    for (std::size_t i : ins) {
      cm.edges.emplace_back(i, k);
      users[i].push_back(k);
    }
  }
  std::vector<std::size_t> edges_before(n + 1, 0);  // number of edges with consumer < k
  for (const auto& e : cm.edges) ++edges_before[e.second + 1];
  for (std::size_t k = 0; k < n; ++k) edges_before[k + 1] += edges_before[k];

  milp_model& m = cm.model;
  {
    const model_size_estimate size = checkmate_model_size(g, order, {}, false, std::numeric_limits<std::uint64_t>::max(), options);
    m.reserve(size.variables, size.constraints);
  }
  const double B = static_cast<double>(cm.budget_units);
  cm.R.resize(n);
  cm.S.resize(n);
  cm.U.resize(n);
  cm.FREE.resize(n);
  double offset = 0;
  for (std::size_t i = 0; i < n; ++i) offset += C[i];
  m.objective_offset = offset;
  for (std::size_t t = 0; t < n; ++t) {
    cm.R[t].assign(t + 1, constant);
    for (std::size_t i = 0; i < t; ++i) cm.R[t][i] = m.add_binary(C[i]);
    cm.S[t].assign(t, constant);
    for (std::size_t i = 0; i < t; ++i) cm.S[t][i] = m.add_binary();
    cm.U[t].assign(t + 1, constant);
    for (std::size_t k = 0; k <= t; ++k) cm.U[t][k] = m.add_continuous(0, B);
  }
  // A linear expression with a constant, for constraints that mention the constant diagonal.
  struct expr {
    std::vector<linear_term> terms;
    double constant = 0;
  };
  auto add_r = [&](expr& e, std::size_t t, std::size_t i, double c) {
    if (cm.R[t][i] == constant)
      e.constant += c;
    else
      e.terms.push_back({cm.R[t][i], c});
  };
  auto add_s = [&](expr& e, std::size_t t, std::size_t i, double c) {
    if (t == n)
      e.constant += cm.output[i] ? c : 0.0;
    else
      e.terms.push_back({cm.S[t][i], c});
  };
  auto row = [&](expr e, double lower, double upper) {
    if (e.terms.empty()) return;
    m.add_constraint(std::move(e.terms), lower - e.constant, upper - e.constant);
  };

  for (std::size_t t = 0; t < n; ++t) {
    if (deadline != nullptr && deadline->passed()) return std::nullopt;
    // Dependencies: R[t][k] <= R[t][j] + S[t][j] for each input j of k, k <= t.
    for (std::size_t e = 0; e < edges_before[t + 1]; ++e) {
      const auto [j, k] = cm.edges[e];
      expr x;
      add_r(x, t, k, 1);
      add_r(x, t, j, -1);
      add_s(x, t, j, -1);
      row(std::move(x), -infinity, 0);
    }
    // Checkpoints carried: S[t][i] <= R[t-1][i] + S[t-1][i] (trivial for i = t-1).
    if (t >= 1)
      for (std::size_t i = 0; i + 1 < t; ++i) {
        expr x;
        add_s(x, t, i, 1);
        add_r(x, t - 1, i, -1);
        add_s(x, t - 1, i, -1);
        row(std::move(x), -infinity, 0);
      }
    // FREE[t][(i, k)] for k < t, with the hazard count of the paper.
    cm.FREE[t].assign(edges_before[t], constant);
    for (std::size_t e = 0; e < edges_before[t]; ++e) {
      const auto [i, k] = cm.edges[e];
      const bool frontier_reads = std::binary_search(users[i].begin(), users[i].end(), t);
      const bool last_and_output = t + 1 == n && cm.output[i];
      if (frontier_reads || last_and_output) continue;  // FREE = 0: o_i is still needed
      const std::size_t f = m.add_binary();
      cm.FREE[t][e] = f;
      // hazards = (1 - R[t][k]) + S[t+1][i] + sum of R[t][j] over users j of i with k < j < t.
      expr h;
      h.constant = 1;
      add_r(h, t, k, -1);
      double max_hazards = 1;
      if (t + 1 < n) {
        add_s(h, t + 1, i, 1);
        max_hazards += 1;
      }
      for (std::size_t j : users[i])
        if (j > k && j < t) {
          add_r(h, t, j, 1);
          max_hazards += 1;
        }
      // 1 - FREE <= hazards  and  max_hazards (1 - FREE) >= hazards.
      expr lo = h;
      lo.terms.push_back({f, 1});
      row(std::move(lo), 1, infinity);
      expr hi = h;
      hi.terms.push_back({f, max_hazards});
      row(std::move(hi), -infinity, max_hazards);
    }
    // Memory: the U chain, and U + workspace <= budget.
    for (std::size_t k = 0; k <= t; ++k) {
      expr x;
      x.terms.push_back({cm.U[t][k], 1});
      if (k == 0) {
        for (std::size_t i = 0; i < t; ++i)
          if (M[i] != 0) add_s(x, t, i, -M[i]);
      } else {
        x.terms.push_back({cm.U[t][k - 1], -1});
        for (std::size_t e = edges_before[k - 1]; e < edges_before[k]; ++e)
          if (cm.FREE[t][e] != constant && M[cm.edges[e].first] != 0) x.terms.push_back({cm.FREE[t][e], M[cm.edges[e].first]});
      }
      if (M[k] != 0) add_r(x, t, k, -M[k]);
      row(std::move(x), 0, 0);
      if (W[k] != 0) {
        expr w;
        w.terms.push_back({cm.U[t][k], 1});
        add_r(w, t, k, W[k]);
        cm.budget_rows.push_back(m.num_constraints());
        row(std::move(w), -infinity, B);
      }
    }
  }
  // Outputs resident after the last stage: R[n-1][i] + S[n-1][i] >= 1.
  for (std::size_t i = 0; i + 1 < n; ++i)
    if (cm.output[i]) {
      expr x;
      add_r(x, n - 1, i, 1);
      add_s(x, n - 1, i, 1);
      row(std::move(x), 1, infinity);
    }
  return cm;
}

}  // namespace memsched::detail
