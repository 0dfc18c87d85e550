#pragma once
// Checkmate's approximation (Jain et al., MLSys 2020, Section 5): solve the LP relaxation of the
// Checkmate MILP, round the checkpoint matrix S (deterministic thresholds and randomized
// rounding), take the cheapest R for each rounded S, simulate, keep the cheapest plan within the
// budget. Like the paper, the LP is also solved at smaller budgets (the rounding loses memory).
// The Moccasin paper found that often no rounding fits; then the status is infeasible with a
// message (this strategy cannot meet the budget; not a proof).

#include <memsched/core/status.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/remat/checkmate_model.hpp>
#include <memsched/remat/detail/checkmate_staging.hpp>
#include <memsched/remat/remat_result.hpp>
#include <memsched/sim/simulate_plan.hpp>
#include <memsched/solver/concepts.hpp>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace memsched {

/// Options of checkmate_lp_rounding.
struct checkmate_lp_options {
  /// Input topological order (vertex indices); nullopt: the lowest-peak order among Kahn, DFS and greedy.
  std::optional<std::vector<std::size_t>> order;
  /// The LP is solved at budget x each fraction (the first should be 1: its optimum is a bound).
  std::vector<double> lp_budget_fractions{1.0, 0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.6, 0.5};
  /// S[t][i] = 1 when the LP value exceeds the threshold.
  std::vector<double> thresholds{0.01, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.99};
  std::size_t random_roundings = 16;  ///< Randomized roundings per LP (S[t][i] = 1 with the LP value as probability).
  std::uint64_t seed = 1;             ///< Of the randomized rounding.
  std::optional<std::chrono::duration<double>> time_limit;  ///< Whole call; LPs still unsolved are skipped.
  int verbosity = 0;
  checkmate_model_options model;
};

/// What checkmate_lp_rounding returns: the plan (status feasible) or none (infeasible, message),
/// the LP bound at the full budget in cost_bound (a lower bound for the staged plans of `order`).
struct [[nodiscard]] checkmate_lp_result : remat_result {
  std::vector<std::size_t> order;
  std::string backend;
  std::string message;
  std::size_t lps_solved = 0;
  std::size_t roundings = 0;         ///< Rounded S tried.
  std::size_t roundings_fit = 0;     ///< Of those, plans within the budget.
};

namespace detail {

/// Rounds the S values of one LP solution many ways; calls keep(plan, simulation) for each plan.
template <class Keep>
void round_checkmate_lp(const memory_graph& g, const checkmate_model& cm, const std::vector<double>& lp,
                        const checkmate_lp_options& o, std::mt19937_64& rng, Keep&& keep) {
  const std::size_t n = cm.order.size();
  auto round_with = [&](auto&& decide) {
    std::vector<std::vector<char>> s(n + 1);
    for (std::size_t t = 0; t < n; ++t) {
      s[t].assign(n, 0);
      for (std::size_t i = 0; i < t; ++i) s[t][i] = decide(lp[cm.S[t][i]]) ? 1 : 0;
    }
    s[n].assign(n, 0);
    const auto r = cheapest_r_for_s(g, cm.order, s);
    keep(staged_plan(g, cm.order, r));
  };
  for (double th : o.thresholds) round_with([&](double v) { return v > th; });
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (std::size_t k = 0; k < o.random_roundings; ++k) round_with([&](double v) { return u(rng) < v; });
}

}  // namespace detail

/// Checkmate's two-phase LP rounding within `budget` for an input order (see the file comment).
/// Deterministic for a seed (given the LP solutions). Cost: one LP per budget fraction plus
/// O((thresholds + random_roundings) x (n^2 + n m)) per LP. Status feasible with the cheapest plan
/// that fits, or infeasible with an empty plan and a message; time_limit when no LP was solved in
/// time; error when the backend fails. Throws invalid_order on a bad options.order,
/// std::invalid_argument on a negative budget, and what make_memory_graph throws.
template <lp_backend Backend, class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] checkmate_lp_result checkmate_lp_rounding(const G& graph, std::int64_t budget, const Backend& backend,
                                                        const checkmate_lp_options& options = {}, const Maps&... maps) {
  const auto t0 = detail::checkmate_clock::now();
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  if (budget < 0) throw std::invalid_argument("checkmate_lp_rounding: negative budget");
  checkmate_lp_result res;
  res.order = options.order ? *options.order : detail::checkmate_best_basic_order(g);
  detail::check_checkmate_order(g, res.order, "checkmate_lp_rounding");
  res.backend = std::string(Backend::name);
  if (auto why = detail::checkmate_obviously_infeasible(g, budget)) {
    res.status = solve_status::infeasible;
    res.message = *why;
    res.seconds = detail::seconds_since(t0);
    return res;
  }
  const double limit = options.time_limit ? options.time_limit->count() : infinity;
  std::mt19937_64 rng(options.seed);
  std::optional<plan_simulation> best_sim;
  bool any_lp = false, lp_error = false;
  std::string errors;
  for (std::size_t f = 0; f < options.lp_budget_fractions.size(); ++f) {
    const double elapsed = detail::seconds_since(t0);
    if (elapsed >= limit) break;
    const auto lp_budget = static_cast<std::int64_t>(std::floor(static_cast<double>(budget) * options.lp_budget_fractions[f]));
    if (lp_budget < 0) continue;
    const checkmate_model cm = build_checkmate_model(g, lp_budget, res.order, options.model);
    solver_options so;
    so.verbosity = options.verbosity;
    if (std::isfinite(limit)) so.time_limit = std::chrono::duration<double>(std::max(0.01, limit - elapsed));
    const solver_result lp = backend.solve_relaxation(cm.model, so);
    if (lp.status == solve_status::infeasible) {
      if (f == 0 && options.lp_budget_fractions[0] >= 1.0) {
        res.status = solve_status::infeasible;
        res.message = "the LP relaxation is infeasible: no staged plan of this order fits the budget";
        res.seconds = detail::seconds_since(t0);
        return res;
      }
      continue;  // smaller budgets are infeasible too
    }
    if (lp.status != solve_status::optimal || lp.values.size() != cm.model.num_variables()) {
      if (lp.status == solve_status::error || lp.status == solve_status::unsupported) {
        lp_error = true;
        errors = lp.message;
      }
      continue;
    }
    any_lp = true;
    ++res.lps_solved;
    if (options.lp_budget_fractions[f] >= 1.0 && !std::isnan(lp.objective)) {
      const double bound = cm.cost_of_objective(lp.objective);
      res.cost_bound = res.cost_bound ? std::max(*res.cost_bound, bound) : bound;
    }
    detail::round_checkmate_lp(g, cm, lp.values, options, rng, [&](execution_plan plan) {
      ++res.roundings;
      const plan_simulation sim = simulate_plan(g, plan);
      if (sim.peak_bytes > budget) return;
      ++res.roundings_fit;
      if (!best_sim || sim.total_cost < best_sim->total_cost ||
          (sim.total_cost == best_sim->total_cost && sim.peak_bytes < best_sim->peak_bytes)) {
        best_sim = sim;
        res.plan = std::move(plan);
      }
    });
  }
  res.seconds = detail::seconds_since(t0);
  if (best_sim) {
    res.status = solve_status::feasible;
    res.peak_bytes = best_sim->peak_bytes;
    res.total_cost = best_sim->total_cost;
    res.overhead = best_sim->overhead;
    return res;
  }
  if (!any_lp) {
    res.status = lp_error ? solve_status::error : solve_status::time_limit;
    res.message = lp_error ? errors : "no LP relaxation solved within the time limit";
    return res;
  }
  res.status = solve_status::infeasible;
  res.message = "no rounding of " + std::to_string(res.roundings) + " (from " + std::to_string(res.lps_solved) +
                " LPs) fits the budget";
  return res;
}

}  // namespace memsched
