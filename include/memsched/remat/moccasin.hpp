#pragma once
// Moccasin (Bartan, Li, Teague, Lott, Dhillon, ICML 2023): rematerialization as a CP model with
// retention intervals, solved by any cp_backend (for example gecode_backend, link memsched::gecode).
// See docs/moccasin.md for the model, its Gecode mapping and measured figures.

#include <memsched/core/errors.hpp>
#include <memsched/core/status.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/remat/detail/moccasin_model.hpp>
#include <memsched/remat/remat_result.hpp>
#include <memsched/sim/execution_plan.hpp>
#include <memsched/sim/plan_from_computes.hpp>
#include <memsched/sim/simulate_order.hpp>
#include <memsched/sim/simulate_plan.hpp>
#include <memsched/solver/cp_concepts.hpp>
#include <memsched/solver/cp_model.hpp>
#include <memsched/solver/solver_options.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace memsched {

/// Statistics of a moccasin() call, beyond remat_result.
struct moccasin_stats {
  std::size_t variables = 0, intervals = 0;
  std::int64_t phase1_peak = 0;      ///< Peak (bytes, model units scaled back) at the end of phase 1.
  double phase1_seconds = 0;
  solve_status phase1_status = solve_status::error;
  solve_status phase2_status = solve_status::error;
  std::string start;                 ///< Where phase 2 started: "phase1" or "plan k".
  std::string message;               ///< The backend's messages.
};

/// Options of moccasin().
struct moccasin_options {
  /// The input topological order (vertex indices) that fixes the staged time domain; empty: the
  /// graph's topological order (memory_graph::topological_order()).
  std::vector<std::size_t> order;
  unsigned max_intervals = 2;  ///< C_v: retention intervals (computations) per vertex, >= 1.
  /// Time limit (for both phases together), threads, gap and verbosity for the backend; its
  /// on_incumbent receives phase-2 plans: seconds since the call, total cost, cost bound.
  solver_options solver;
  double phase1_share = 0.5;  ///< Most of the time limit phase 1 may use (it stops once the budget is met).
  double phase1_share_with_start = 0.1;  ///< The same when a start plan already fits the budget.
  /// Plans to start phase 2 from as well (for example best_heuristic_plan's): used when their first
  /// computations follow `order`, recomputations fit the stages and the peak fits the budget.
  std::vector<execution_plan> start_plans;
  /// Phase-1 improvements: seconds since the call and the peak of the incumbent (bytes).
  std::function<void(double seconds, std::int64_t peak_bytes)> on_phase1;
  moccasin_stats* stats = nullptr;  ///< When set, receives the details of the call.
};

/// Builds the Moccasin CP model of `graph` for `budget` bytes over the staged time domain of
/// `options.order` (see moccasin_model): phase 1 minimises max(peak, budget) (the capacity
/// variable), phase 2 minimises the total cost with the capacity fixed to the budget. Up to
/// options.max_intervals intervals per vertex. Size O(n * C) variables, O((n + m) * C^2)
/// constraints, O(n^2) time slots. Throws invalid_order for a bad order, std::invalid_argument for
/// a negative budget, a phase other than 1 or 2 or max_intervals 0, and what make_memory_graph throws.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] moccasin_model make_moccasin_model(const G& graph, std::int64_t budget, int phase, const moccasin_options& options,
                                                 const Maps&... maps) {
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  if (budget < 0) throw std::invalid_argument("make_moccasin_model: negative budget");
  if (phase != 1 && phase != 2) throw std::invalid_argument("make_moccasin_model: phase must be 1 or 2");
  if (options.max_intervals == 0) throw std::invalid_argument("make_moccasin_model: max_intervals must be >= 1");
  std::vector<std::size_t> order = options.order;
  if (order.empty()) order.assign(g.topological_order().begin(), g.topological_order().end());
  detail::check_order(g, order, "make_moccasin_model");
  return detail::build_moccasin_model(g, order, budget, phase, std::vector<unsigned>(g.size(), options.max_intervals),
                                      g.total_bytes());
}

/// Decodes a solution of a moccasin_model (values indexed by variable) into an execution plan:
/// the computations in slot order with every value freed right after its last use. O(n C log(n C) + m C).
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] execution_plan moccasin_plan(const G& graph, const moccasin_model& model, const std::vector<double>& values,
                                           const Maps&... maps) {
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  const auto computes = detail::schedule_computes(detail::decode_moccasin(model, values));
  return plan_from_computes(g, std::span<const std::size_t>(computes));
}

namespace detail {

template <class Backend>
remat_result run_moccasin(const memory_graph& g, std::int64_t budget, const Backend& backend, const moccasin_options& options,
                          moccasin_stats* stats) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(clock::now() - t0).count(); };
  moccasin_stats local;
  moccasin_stats& st = stats ? *stats : local;
  st = moccasin_stats{};
  if (budget < 0) throw std::invalid_argument("moccasin: negative budget");
  if (options.max_intervals == 0) throw std::invalid_argument("moccasin: max_intervals must be >= 1");
  const std::size_t n = g.size();
  std::vector<std::size_t> order = options.order;
  if (order.empty()) order.assign(g.topological_order().begin(), g.topological_order().end());
  detail::check_order(g, order, "moccasin");
  remat_result result;
  result.status = solve_status::infeasible;
  if (n == 0) {
    result.status = solve_status::optimal;
    result.cost_bound = 0;
    return result;
  }
  // Every plan computes each vertex once with its inputs resident; outputs stay resident.
  std::int64_t outputs = 0, need = 0;
  for (std::size_t v = 0; v < n; ++v) {
    std::int64_t b = g.bytes(v) + g.workspace(v);
    for (auto u : g.predecessors(v)) b += g.bytes(u);
    need = std::max(need, b);
    if (g.is_output(v)) outputs += g.bytes(v);
  }
  if (need > budget || outputs > budget) {
    result.seconds = elapsed();
    return result;
  }

  // Start plans mapped into the staged domain; they may need more intervals per vertex.
  std::vector<unsigned> counts(n, options.max_intervals);
  std::vector<moccasin_schedule> plan_starts;
  for (const auto& p : options.start_plans)
    if (auto s = moccasin_schedule_of_plan(g, order, p)) {
      std::vector<unsigned> c(n, 0);
      for (const auto& e : *s) ++c[e.second];
      for (std::size_t v = 0; v < n; ++v) counts[v] = std::max(counts[v], c[v]);
      plan_starts.push_back(std::move(*s));
    }
  moccasin_schedule no_remat;
  for (std::size_t k = 0; k < n; ++k) no_remat.emplace_back(moccasin_model::slot(k, k), order[k]);

  const auto remaining = [&]() -> std::optional<std::chrono::duration<double>> {
    if (!options.solver.time_limit) return std::nullopt;
    return std::chrono::duration<double>(std::max(0.0, options.solver.time_limit->count() - elapsed()));
  };

  // Phase 1: minimise max(peak, budget) from the input order without recomputation.
  moccasin_model m1 = build_moccasin_model(g, order, budget, 1, counts, g.total_bytes());
  st.variables = m1.model.num_variables();
  st.intervals = m1.model.intervals().size();
  moccasin_schedule phase1 = no_remat;
  std::int64_t phase1_peak_units = 0;
  {
    auto enc = encode_moccasin(g, m1, no_remat);
    phase1_peak_units = enc->second;
    if (phase1_peak_units > m1.budget_units) {
      m1.model.start = enc->first;
      // A start plan that already fits the budget leaves phase 1 a smaller share of the time.
      bool plan_fits = false;
      for (const auto& ps : plan_starts)
        if (auto e = encode_moccasin(g, m1, ps); e && e->second <= m1.budget_units) plan_fits = true;
      const double share = plan_fits ? std::min(options.phase1_share, options.phase1_share_with_start) : options.phase1_share;
      solver_options o = options.solver;
      if (o.time_limit) o.time_limit = std::chrono::duration<double>(options.solver.time_limit->count() * share);
      struct phase1_observer {
        const std::function<void(double, std::int64_t)>& on_phase1;
        const std::function<double()> elapsed;
        std::int64_t unit;
        void on_incumbent(double, double objective, double) const {
          if (on_phase1) on_phase1(elapsed(), static_cast<std::int64_t>(objective) * unit);
        }
      } phase1_obs{options.on_phase1, elapsed, m1.byte_unit};
      o.observer = phase1_obs;
      const solver_result r1 = backend.solve(m1.model, o);
      st.phase1_status = r1.status;
      if (!r1.message.empty()) st.message += "phase 1: " + r1.message + "\n";
      if (r1.status == solve_status::unsupported || r1.status == solve_status::error) {
        result.status = r1.status;
        result.seconds = elapsed();
        return result;
      }
      if (has_solution(r1.status)) {
        phase1 = decode_moccasin(m1, r1.values);
        phase1_peak_units = static_cast<std::int64_t>(r1.objective);
      }
      if (r1.status == solve_status::infeasible) phase1_peak_units = std::numeric_limits<std::int64_t>::max();
    } else {
      st.phase1_status = solve_status::optimal;
    }
  }
  st.phase1_seconds = elapsed();
  st.phase1_peak = phase1_peak_units == std::numeric_limits<std::int64_t>::max() ? 0 : phase1_peak_units * m1.byte_unit;

  // Phase 2: minimise the cost within the budget, from the cheapest start that fits.
  moccasin_model m2 = build_moccasin_model(g, order, budget, 2, counts, g.total_bytes());
  std::optional<std::vector<std::int64_t>> start;
  std::int64_t start_cost = std::numeric_limits<std::int64_t>::max();
  auto consider = [&](const moccasin_schedule& s, const std::string& name) {
    auto enc = encode_moccasin(g, m2, s);
    if (!enc || enc->second > m2.budget_units) return;
    const std::int64_t c = m2.model.objective_value(enc->first);
    if (c < start_cost) {
      start_cost = c;
      start = std::move(enc->first);
      st.start = name;
    }
  };
  if (phase1_peak_units <= m1.budget_units) consider(phase1, "phase1");
  for (std::size_t k = 0; k < plan_starts.size(); ++k) consider(plan_starts[k], "plan " + std::to_string(k));
  if (!start) {
    // Phase 1 did not reach the budget: proven impossible in this model, or out of time.
    result.status = st.phase1_status == solve_status::optimal || st.phase1_status == solve_status::infeasible
                        ? solve_status::infeasible
                        : solve_status::time_limit;
    result.seconds = elapsed();
    return result;
  }
  m2.model.start = start;
  solver_options o = options.solver;
  o.time_limit = remaining();
  const double unit = m2.cost_unit;
  struct phase2_observer {
    observer_ref user;
    const std::function<double()> elapsed;
    double unit;
    void on_incumbent(double, double objective, double bound) const { user.on_incumbent(elapsed(), objective * unit, bound * unit); }
  } phase2_obs{options.solver.observer, elapsed, unit};
  o.observer = phase2_obs;
  const solver_result r2 = backend.solve(m2.model, o);
  st.phase2_status = r2.status;
  if (!r2.message.empty()) st.message += "phase 2: " + r2.message + "\n";
  std::vector<double> values;
  solve_status status = r2.status;
  if (has_solution(r2.status)) {
    values = r2.values;
  } else if (r2.status == solve_status::time_limit || r2.status == solve_status::infeasible) {
    // The start is a solution of the model; a backend that did not return it still has one.
    values.assign(start->begin(), start->end());
    status = solve_status::feasible;
  } else {
    result.status = r2.status;
    result.seconds = elapsed();
    return result;
  }
  const auto computes = schedule_computes(decode_moccasin(m2, values));
  result.plan = plan_from_computes(g, std::span<const std::size_t>(computes));
  const plan_simulation sim = simulate_plan(g, result.plan);
  result.peak_bytes = sim.peak_bytes;
  result.total_cost = sim.total_cost;
  result.overhead = sim.overhead;
  if (sim.peak_bytes > budget) {
    result.status = solve_status::error;
    st.message += "decoded plan exceeds the budget (model error)\n";
  } else {
    result.status = status;
  }
  if (std::isfinite(r2.bound)) {
    // Costs are rounded to whole units: subtract the largest rounding error (exact when unit is 1).
    const double slack = unit == 1.0 ? 0.0 : 0.5 * unit * static_cast<double>(st.intervals);
    result.cost_bound = std::max(0.0, std::min(r2.bound * unit - slack, result.total_cost));
    if (status == solve_status::optimal && unit == 1.0) result.cost_bound = result.total_cost;
  }
  if (status == solve_status::optimal && unit != 1.0) result.status = solve_status::feasible;  // optimal for rounded costs only
  result.seconds = elapsed();
  return result;
}

}  // namespace detail

/// Plans `graph` within `budget` bytes with the Moccasin CP model solved by `backend` (a
/// cp_backend, e.g. gecode_backend): phase 1 minimises max(peak, budget) starting from the input
/// order without recomputation, phase 2 minimises the total cost within the budget starting from
/// phase 1 and options.start_plans. The solution is decoded to a plan (computations in time
/// order, earliest frees) and re-simulated. Status: `optimal` when the backend proved the staged
/// model's optimum (costs integral), `feasible` when a limit stopped it, `infeasible` when no plan
/// fits (the budget is below what every plan needs, or phase 1 proved the model's minimum peak
/// above it), `time_limit` when phase 1 ran out of time, `unsupported`/`error` from the backend.
/// Optimal is relative to the staged space of the order with at most max_intervals computations
/// per vertex. Exponential worst case; bounded by options.solver.time_limit. Throws invalid_order
/// for a bad order, std::invalid_argument for a negative budget or max_intervals 0, and what
/// make_memory_graph throws. options.stats (optional) receives details.
template <class G, cp_backend Backend, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] remat_result moccasin(const G& graph, std::int64_t budget, const Backend& backend, const moccasin_options& options,
                                    const Maps&... maps) {
  return detail::run_moccasin(detail::to_memory_graph(graph, maps...), budget, backend, options, options.stats);
}


}  // namespace memsched
