#pragma once
// Checkmate's approximation (Jain et al., MLSys 2020, Section 5): solve the LP relaxation of the
// Checkmate MILP, round the checkpoint matrix S (deterministic thresholds and randomized
// rounding), take the cheapest R for each rounded S, simulate, keep the cheapest plan within the
// budget. Like the paper, the LP is also solved at smaller budgets (the rounding loses memory).
// The Moccasin paper found that often no rounding fits; then the status is no_solution with a
// message (this strategy cannot meet the budget; that is no proof).

#include <memsched/core/status.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/remat/checkmate_model.hpp>
#include <memsched/remat/detail/call_deadline.hpp>
#include <memsched/remat/detail/checkmate_staging.hpp>
#include <memsched/remat/detail/simulated_result.hpp>
#include <memsched/remat/detail/solver_glue.hpp>
#include <memsched/remat/remat_result.hpp>
#include <memsched/sim/simulate_plan.hpp>
#include <memsched/solver/concepts.hpp>
#include <memsched/solver/solver_options.hpp>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace memsched {

/// How checkmate_lp_plan rounds (also used by checkmate_milp_plan's LP-rounding start).
struct lp_rounding_options {
  /// The LP is solved at budget x each fraction (the first should be 1: its optimum is a bound).
  std::vector<double> lp_budget_fractions{1.0, 0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.6, 0.5};
  /// S[t][i] = 1 when the LP value exceeds the threshold.
  std::vector<double> thresholds{0.01, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.99};
  std::size_t random_roundings = 16;  ///< Randomized roundings per LP (S[t][i] = 1 with the LP value as probability).
  std::uint64_t seed = 1;             ///< Of the randomized rounding.
};

/// Options of checkmate_lp_plan (plain aggregate; the backend type is deduced:
/// `checkmate_lp_options{.backend = glpk_backend{}, .solver = {.time_limit = 10s}}`).
template <lp_backend Backend>
struct checkmate_lp_options {
  Backend backend{};
  /// For the whole call (LPs still unsolved when time_limit runs out are skipped), and each LP's
  /// verbosity / threads / node_limit.
  solver_options solver;
  /// Input topological order (vertex indices); nullopt: the lowest-peak order among Kahn, DFS and greedy.
  std::optional<std::vector<std::size_t>> order;
  lp_rounding_options rounding;
  checkmate_model_options model;
  /// Memory cap for the model and the backend's copy, estimated before building
  /// (checkmate_model_size): a model over it is not built and the call returns no_solution with a
  /// message naming both sizes. Default: half the physical memory (default_max_bytes).
  std::uint64_t max_bytes = default_max_bytes();
};

/// Throws: option_error naming solver.relative_gap when it is NaN. Every value of the other fields
/// is valid (a budget fraction that scales the budget below 0, or NaN, skips its LP; any threshold
/// and count of random roundings works).
template <class Backend>
void check_checkmate_lp_options(const checkmate_lp_options<Backend>& options) {
  detail::check_solver_options("checkmate_lp_plan", options.solver);
}

namespace detail {

/// Rounds the S values of one LP solution many ways; calls keep(plan) for each plan, until
/// `deadline` (when not null) has passed (checked before each rounding).
template <class Keep>
void round_checkmate_lp(const memory_graph& g, const checkmate_model& cm, const std::vector<double>& lp,
                        const lp_rounding_options& o, std::mt19937_64& rng, Keep&& keep, const call_deadline* deadline) {
  const std::size_t n = cm.order.size();
  auto round_with = [&](auto&& decide) {
    if (deadline != nullptr && deadline->passed()) return;
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

/// checkmate_lp_plan on a converted graph; the time limit counts from `t0` (the caller's entry).
template <class Backend>
remat_result checkmate_lp_on(const memory_graph& g, std::int64_t budget, const checkmate_lp_options<Backend>& options,
                             checkmate_clock::time_point t0 = checkmate_clock::now()) {
  call_deadline deadline(t0, options.solver.time_limit);
  if (budget < 0) throw std::invalid_argument("checkmate_lp_plan: negative budget");
  remat_result res;
  res.stats.order = options.order ? *options.order : checkmate_best_basic_order(g);
  check_checkmate_order(g, res.stats.order, "checkmate_lp_plan");
  res.stats.backend = std::string(options.backend.name());
  auto finish = [&](solve_status status, std::string message) {
    res.status = status;
    res.message = std::move(message);
    res.stats.seconds = seconds_since(t0);
    return std::move(res);
  };
  if (auto why = checkmate_obviously_infeasible(g, budget)) return finish(solve_status::infeasible, *why);
  {
    const model_size_estimate size = checkmate_model_size(g, res.stats.order, options.backend.name(), true, options.max_bytes, options.model);
    res.stats.variables = size.variables;
    res.stats.constraints = size.constraints;
    res.stats.nonzeros = size.nonzeros;
    if (size.bytes() > options.max_bytes)
      return finish(solve_status::no_solution, model_too_large("checkmate_lp_plan", size, options.max_bytes));
  }
  const lp_rounding_options& ro = options.rounding;
  std::mt19937_64 rng(ro.seed);
  std::optional<plan_simulation> best_sim;
  bool any_lp = false, lp_error = false, stopped = false;
  std::string errors;
  // One model, built once (interrupted at the deadline) and re-budgeted for each LP.
  std::optional<checkmate_model> cm;
  for (std::size_t f = 0; f < ro.lp_budget_fractions.size(); ++f) {
    if (!deadline.backend_time_left()) {
      stopped = true;
      break;
    }
    const double scaled = std::floor(static_cast<double>(budget) * ro.lp_budget_fractions[f]);
    if (!(scaled >= 0)) continue;
    // A budget near 2^63 rounds up to 2^63 as a double, one past int64's range: such a budget is
    // above every peak anyway.
    const std::int64_t lp_budget = scaled >= 0x1p63 ? std::numeric_limits<std::int64_t>::max() : static_cast<std::int64_t>(scaled);
    if (!cm) {
      const double build_start = deadline.elapsed();
      cm = build_checkmate_model_until(g, lp_budget, res.stats.order, options.model, &deadline);
      deadline.reserve_for_build(build_start, 1.5);  // for freeing the model
      if (!cm) {
        stopped = true;
        break;
      }
      res.stats.variables = cm->model.num_variables();
      res.stats.constraints = cm->model.num_constraints();
      res.stats.nonzeros = cm->model.num_nonzeros();
      res.stats.memory_unit = cm->memory_unit;
    } else {
      set_checkmate_budget(*cm, lp_budget);
    }
    if (!deadline.backend_time_left()) {
      stopped = true;
      break;
    }
    solver_options so = options.solver;
    so.observer = {};
    so.time_limit = deadline.for_backend();
    const solver_result lp = options.backend.solve_relaxation(cm->model, so);
    if (lp.status == solve_status::infeasible) {
      if (f == 0 && ro.lp_budget_fractions[0] >= 1.0)
        return finish(solve_status::infeasible, "the LP relaxation is infeasible: no staged plan of this order fits the budget");
      continue;  // smaller budgets are infeasible too
    }
    if (lp.status != solve_status::optimal || lp.values.size() != cm->model.num_variables()) {
      if (lp.status == solve_status::error || lp.status == solve_status::unsupported) {
        lp_error = true;
        errors = lp.message;
      }
      continue;
    }
    any_lp = true;
    ++res.stats.lps_solved;
    if (ro.lp_budget_fractions[f] >= 1.0 && !std::isnan(lp.objective)) {
      const double bound = cm->cost_of_objective(lp.objective);
      res.cost_bound = res.cost_bound ? std::max(*res.cost_bound, bound) : bound;
      options.solver.observer.on_bound(seconds_since(t0), *res.cost_bound);
    }
    round_checkmate_lp(
        g, *cm, lp.values, ro, rng,
        [&](execution_plan plan) {
          ++res.stats.roundings;
          const plan_simulation sim = simulate_plan(g, plan);
          if (sim.peak_bytes > budget) return;
          ++res.stats.roundings_fit;
          if (!best_sim || sim.total_cost < best_sim->total_cost ||
              (sim.total_cost == best_sim->total_cost && sim.peak_bytes < best_sim->peak_bytes)) {
            if (!best_sim || sim.total_cost < best_sim->total_cost)
              options.solver.observer.on_incumbent(seconds_since(t0), sim.total_cost, res.cost_bound.value_or(std::nan("")));
            best_sim = sim;
            res.plan = std::move(plan);
            res.stats.seconds_to_best = seconds_since(t0);
          }
        },
        &deadline);
  }
  if (best_sim) {
    detail::take_simulated_figures(res, *best_sim);
    return finish(solve_status::feasible, stopped || deadline.passed() ? "stopped at the time limit" : "");
  }
  if (!any_lp)
    return finish(lp_error ? solve_status::error : solve_status::time_limit,
                  lp_error ? errors : "no LP relaxation solved within the time limit");
  if (stopped || deadline.passed())
    return finish(solve_status::time_limit, "no rounding of " + std::to_string(res.stats.roundings) + " (from " +
                                                std::to_string(res.stats.lps_solved) + " LPs) fits the budget before the time limit");
  return finish(solve_status::no_solution, "no rounding of " + std::to_string(res.stats.roundings) + " (from " +
                                               std::to_string(res.stats.lps_solved) + " LPs) fits the budget");
}

}  // namespace detail

/// Checkmate's two-phase LP rounding within `budget` for an input order (see the file comment),
/// with options.backend (an lp_backend). Deterministic for a seed (given the LP solutions).
/// Status: `feasible` with the cheapest plan that fits; `no_solution` (empty plan, message) when no
/// rounding fits (this is no proof) or when the model's estimated memory is over options.max_bytes
/// (not built; the message names both sizes); `infeasible` when proven (the budget is below what every
/// plan needs, or the LP relaxation at the full budget is infeasible: no staged plan of the order
/// fits); `time_limit` when no LP was solved in time; `error` when the backend fails. cost_bound is
/// the LP bound at the full budget (a lower bound for the staged plans of the order); observer:
/// on_bound for it, on_incumbent for each cheaper plan. stats: order, backend, model size,
/// lps_solved, roundings, roundings_fit.
/// Complexity: one LP per budget fraction plus O((thresholds + random_roundings) x (n^2 + n m)) per LP.
/// Throws: what check_checkmate_lp_options throws (before any work), invalid_order on a bad
/// options.order, std::invalid_argument on a negative budget, and what make_memory_graph throws.
template <class G, class Backend, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] remat_result checkmate_lp_plan(const G& graph, std::int64_t budget, const checkmate_lp_options<Backend>& options,
                                             const Maps&... maps) {
  const auto t0 = detail::checkmate_clock::now();
  check_checkmate_lp_options(options);
  return detail::checkmate_lp_on(detail::to_memory_graph(graph, maps...), budget, options, t0);
}

/// checkmate_lp_plan with default options for the backend given as template argument:
/// `checkmate_lp_plan<glpk_backend>(graph, budget)`.
template <lp_backend Backend, class G>
  requires memory_graph_source<G>
[[nodiscard]] remat_result checkmate_lp_plan(const G& graph, std::int64_t budget) {
  return checkmate_lp_plan(graph, budget, checkmate_lp_options<Backend>{});
}

}  // namespace memsched
