#pragma once
// Moccasin (Bartan, Li, Teague, Lott, Dhillon, ICML 2023): rematerialization as a CP model with
// retention intervals, solved by any cp_backend (for example gecode_backend, link memsched::gecode).
// See docs/moccasin.md for the model, its Gecode mapping and measured figures.

#include <memsched/core/errors.hpp>
#include <memsched/core/status.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/remat/detail/call_deadline.hpp>
#include <memsched/remat/detail/checkmate_greedy.hpp>
#include <memsched/remat/detail/moccasin_model.hpp>
#include <memsched/remat/detail/plan_builder.hpp>
#include <memsched/remat/detail/simulated_result.hpp>
#include <memsched/remat/detail/solver_glue.hpp>
#include <memsched/remat/moccasin_model.hpp>
#include <memsched/remat/remat_result.hpp>
#include <memsched/sim/execution_plan.hpp>
#include <memsched/sim/plan_from_computes.hpp>
#include <memsched/sim/simulate_order.hpp>
#include <memsched/sim/simulate_plan.hpp>
#include <memsched/solver/cp_concepts.hpp>
#include <memsched/solver/cp_model.hpp>
#include <memsched/solver/model_size.hpp>
#include <memsched/solver/solver_options.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace memsched {

/// Options of moccasin_plan (plain aggregate; the backend type is deduced:
/// `moccasin_options{.backend = gecode_backend{}, .solver = {.time_limit = 60s}}`).
template <cp_backend Backend>
struct moccasin_options {
  Backend backend{};
  /// time_limit: for the whole call (conversion, both models, both phases, decoding); node_limit:
  /// for each phase's solve; threads, gap, verbosity: for the backend; observer:
  /// on_phase("phase 1: min peak" / "phase 2: min cost"), then on_incumbent(seconds, value, bound)
  /// with value = the peak in bytes during phase 1 and the total cost during phase 2.
  solver_options solver;
  /// The input topological order (vertex indices) that fixes the staged time domain; nullopt: the
  /// graph's topological order (memory_graph::topological_order()).
  std::optional<std::vector<std::size_t>> order;
  unsigned max_intervals = 2;  ///< C_v: retention intervals (computations) per vertex, >= 1.
  /// Most of the time limit phase 1 may use when a start plan already fits the budget: in the
  /// model, the smaller of this and phase1_share_with_start; only in bytes (see moccasin_plan),
  /// this. Without one, phase 2 cannot start before phase 1 meets the budget, so phase 1 may use
  /// all the time (it stops once the budget is met).
  double phase1_share = 0.5;
  double phase1_share_with_start = 0.1;  ///< The same when a start plan already fits the budget.
  /// Plans to start phase 2 from as well (for example best_heuristic_plan's): used when their first
  /// computations follow `order`, recomputations fit the stages and the peak fits the budget (also
  /// as the answer when the model cannot take them: see moccasin_plan).
  std::vector<execution_plan> start_plans;
  /// Memory cap for the two models and the backend's copy, estimated before building
  /// (detail::moccasin_model_size): a model over it is not built and the call returns no_solution
  /// with a message naming both sizes. Default: half the physical memory (default_max_bytes).
  std::uint64_t max_bytes = default_max_bytes();
};

/// Builds the Moccasin CP model of `graph` for `budget` bytes over the staged time domain of
/// options.order (see moccasin_model): `min_peak` minimises max(peak, budget) (the capacity
/// variable), `min_cost` minimises the total cost with the capacity fixed to the budget. Up to
/// options.max_intervals intervals per vertex.
/// Complexity: O(n * C) variables, O((n + m) * C^2) constraints, O(n^2) time slots.
/// Throws: invalid_order for a bad order, std::invalid_argument for a negative budget or
/// max_intervals 0, and what make_memory_graph throws.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] moccasin_model make_moccasin_model(const G& graph, std::int64_t budget, moccasin_phase phase,
                                                 const moccasin_model_options& options, const Maps&... maps) {
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  if (budget < 0) throw std::invalid_argument("make_moccasin_model: negative budget");
  if (options.max_intervals == 0) throw std::invalid_argument("make_moccasin_model: max_intervals must be >= 1");
  std::vector<std::size_t> order;
  if (options.order) order = *options.order;
  else order.assign(g.topological_order().begin(), g.topological_order().end());
  detail::check_order(g, order, "make_moccasin_model");
  return detail::build_moccasin_model(g, order, budget, phase, std::vector<unsigned>(g.size(), options.max_intervals),
                                      g.total_bytes());
}

/// Decodes a solution of a moccasin_model (values indexed by variable) into an execution plan:
/// the computations in slot order with every value freed right after its last use.
/// Complexity: O(n C log(n C) + m C). Throws: what make_memory_graph throws.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] execution_plan decode_moccasin_solution(const G& graph, const moccasin_model& model, const std::vector<double>& values,
                                                      const Maps&... maps) {
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  const auto computes = detail::schedule_computes(detail::decode_moccasin(model, values));
  return plan_from_computes(g, std::span<const std::size_t>(computes));
}

namespace detail {

/// A start plan that follows the order and fits the budget in bytes, with its simulation.
struct moccasin_fallback {
  execution_plan plan;
  std::string source;
  plan_simulation sim;
  double found_at = 0;  ///< Seconds into the call.
};

/// `result` answered by the fallback plan: status feasible (the model proved nothing about plans
/// outside it), no cost bound, the plan's figures.
inline remat_result return_fallback(remat_result& result, moccasin_fallback&& fallback, double seconds) {
  result.plan = std::move(fallback.plan);
  result.status = solve_status::feasible;
  result.cost_bound.reset();
  take_simulated_figures(result, fallback.sim);
  result.stats.start_source = std::move(fallback.source);
  result.stats.start_cost = fallback.sim.total_cost;
  result.stats.seconds_to_best = fallback.found_at;
  result.stats.seconds = seconds;
  if (!result.message.empty() && result.message.back() == '\n') result.message.pop_back();
  return std::move(result);
}

template <class Backend>
remat_result run_moccasin(const memory_graph& g, std::int64_t budget, const moccasin_options<Backend>& options,
                          std::chrono::steady_clock::time_point t0) {
  call_deadline deadline(t0, options.solver.time_limit);
  auto elapsed = [&] { return deadline.elapsed(); };
  const Backend& backend = options.backend;
  if (budget < 0) throw std::invalid_argument("moccasin_plan: negative budget");
  if (options.max_intervals == 0) throw std::invalid_argument("moccasin_plan: max_intervals must be >= 1");
  const std::size_t n = g.size();
  std::vector<std::size_t> order;
  if (options.order) order = *options.order;
  else order.assign(g.topological_order().begin(), g.topological_order().end());
  detail::check_order(g, order, "moccasin_plan");
  remat_result result;
  result.stats.order = order;
  result.stats.backend = std::string(backend.name());
  remat_stats& st = result.stats;
  auto finish = [&](solve_status status) {
    result.status = status;
    result.stats.seconds = elapsed();
    return std::move(result);
  };
  if (n == 0) {
    result.cost_bound = 0;
    return finish(solve_status::optimal);
  }
  // Every plan computes each vertex once with its inputs resident; outputs stay resident.
  if (auto why = budget_below_lower_bound(g, budget)) {
    result.message = *why;
    return finish(solve_status::infeasible);
  }
  // Start plans mapped into the staged domain: the caller's (they may need more intervals per
  // vertex) and the eviction greedy's along the order (Checkmate's; used as they are). The cheapest
  // of them within the budget in bytes is also the fallback answer: the model cannot take a plan
  // at the budget once sizes are rounded up to the backend's integer units, nor a greedy plan that
  // recomputes a vertex more often than the intervals allow, and the answer is never dearer.
  std::vector<unsigned> counts(n, options.max_intervals);
  std::vector<std::pair<moccasin_schedule, std::string>> plan_starts;
  std::optional<moccasin_fallback> fallback;
  auto offer = [&](const execution_plan& p, std::string name, bool may_add_intervals) {
    auto s = moccasin_schedule_of_plan(g, order, p);
    if (!s) return;
    plan_simulation sim;
    if (check_plan(g, p, &sim).valid && sim.peak_bytes <= budget && (!fallback || sim.total_cost < fallback->sim.total_cost))
      fallback = moccasin_fallback{p, name, sim, elapsed()};
    std::vector<unsigned> c(n, 0);
    for (const auto& e : *s) ++c[e.second];
    for (std::size_t v = 0; v < n; ++v) {
      if (c[v] <= counts[v]) continue;
      if (!may_add_intervals) return;
      counts[v] = c[v];
    }
    plan_starts.emplace_back(std::move(*s), std::move(name));
  };
  for (std::size_t k = 0; k < options.start_plans.size(); ++k) offer(options.start_plans[k], "plan " + std::to_string(k), true);
  moccasin_schedule no_remat;
  for (std::size_t k = 0; k < n; ++k) no_remat.emplace_back(moccasin_model::slot(k, k), order[k]);
  {
    // Phase 1's model is alive while phase 2's is built: twice the model, once the backend.
    model_size_estimate size = moccasin_model_size(g, order, counts, backend.name());
    size.model_bytes *= 2;
    st.variables = size.variables;
    st.constraints = size.constraints;
    st.nonzeros = size.nonzeros;
    if (size.bytes() > options.max_bytes) {
      result.message = model_too_large("moccasin_plan", size, options.max_bytes);
      return finish(solve_status::no_solution);
    }
  }
  // The greedy's plans need no interval beyond the counts, so the model's size does not wait for
  // them (on a graph whose model is refused they would be O(n (n + m)) each for nothing).
  for (const auto& [plan, name] : eviction_start_plans(g, order, budget, deadline)) offer(plan, name, false);

  // Phase 1: minimise max(peak, budget) from the input order without recomputation.
  options.solver.observer.on_phase(elapsed(), "phase 1: min peak");
  const double build_start = deadline.elapsed();
  moccasin_model m1 = build_moccasin_model(g, order, budget, moccasin_phase::min_peak, counts, g.total_bytes());
  deadline.reserve_for_build(build_start, 1.0);  // for freeing the models (Gecode runs in this process: no copy-on-write)
  st.variables = m1.model.num_variables();
  st.intervals = m1.model.intervals().size();
  if (m1.rounded)
    result.message += "sizes beyond the backend's integer range: rounded up to units of " + std::to_string(m1.byte_unit) +
                      " bytes (plans fit in bytes; optimality and infeasibility are for the rounded sizes)\n";
  moccasin_schedule phase1 = no_remat;
  std::int64_t phase1_peak_units = 0;
  {
    auto enc = encode_moccasin(g, m1, no_remat);
    phase1_peak_units = enc->second;
    if (phase1_peak_units > m1.budget_units) {
      m1.model.start = enc->first;
      // A start plan that already fits the budget leaves phase 1 a smaller share of the time.
      // Without one phase 2 cannot start until phase 1 meets the budget, so phase 1 may use all of
      // it: the capacity's domain starts at the budget, so phase 1 ends as soon as it is met.
      bool plan_fits = false;
      for (const auto& ps : plan_starts)
        if (auto e = encode_moccasin(g, m1, ps.first); e && e->second <= m1.budget_units) plan_fits = true;
      // A fallback plan outside the model is an answer already: phase 1 gets its usual share.
      const double share = plan_fits ? std::min(options.phase1_share, options.phase1_share_with_start)
                                     : fallback ? options.phase1_share
                                                : 1.0;
      double reported_peak = std::numeric_limits<double>::infinity();
      const scaled_observer peaks{options.solver.observer, t0, static_cast<double>(m1.byte_unit), &reported_peak};
      solver_options o = options.solver;
      o.observer = peaks;
      const solver_result r1 = solve_in_time_left(
          deadline, o, [&](const solver_options& so) { return backend.solve(m1.model, so); }, deadline.limit() * share);
      st.phase1_status = r1.status;
      if (!r1.message.empty()) result.message += "phase 1: " + r1.message + "\n";
      if (r1.status == solve_status::unsupported || r1.status == solve_status::error) return finish(r1.status);
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
  moccasin_model m2 = build_moccasin_model(g, order, budget, moccasin_phase::min_cost, counts, g.total_bytes());
  std::optional<std::vector<std::int64_t>> start;
  std::int64_t start_cost = std::numeric_limits<std::int64_t>::max();
  auto consider = [&](const moccasin_schedule& s, const std::string& name) {
    auto enc = encode_moccasin(g, m2, s);
    if (!enc || enc->second > m2.budget_units) return;
    const std::int64_t c = m2.model.objective_value(enc->first);
    if (c < start_cost) {
      start_cost = c;
      start = std::move(enc->first);
      st.start_source = name;
    }
  };
  if (phase1_peak_units <= m1.budget_units) consider(phase1, "phase 1");
  for (const auto& [schedule, name] : plan_starts) consider(schedule, name);
  if (!start && fallback) {
    result.message += "no start fits the model (sizes rounded up, or more computations than its intervals): the cheapest "
                      "start plan within the budget is returned";
    return return_fallback(result, std::move(*fallback), elapsed());
  }
  if (!start) {
    // Phase 1 did not reach the budget: proven impossible in this model, or out of time.
    const bool proven = st.phase1_status == solve_status::optimal || st.phase1_status == solve_status::infeasible;
    if (proven) result.message += "phase 1 proved the model's minimum peak above the budget\n";
    else
      result.message += "phase 1 found no schedule within the budget in its time (lowest peak " + std::to_string(st.phase1_peak) +
                        " bytes, budget " + std::to_string(budget) + " bytes) and no start plan fits the order and the budget\n";
    if (!result.message.empty() && result.message.back() == '\n') result.message.pop_back();
    // With rounded sizes the proof is about the rounded model, not about bytes.
    return finish(proven ? (m1.rounded ? solve_status::no_solution : solve_status::infeasible) : solve_status::time_limit);
  }
  st.start_cost = static_cast<double>(start_cost) * m2.cost_unit;
  m2.model.start = start;
  solver_options o = options.solver;
  const double unit = m2.cost_unit;
  options.solver.observer.on_phase(elapsed(), "phase 2: min cost");
  double reported_cost = std::numeric_limits<double>::infinity(), improved_at = st.phase1_seconds;
  const scaled_observer costs{options.solver.observer, t0, unit, &reported_cost, &improved_at};
  o.observer = costs;
  // No time left: time_limit, and the start is the answer.
  const solver_result r2 = solve_in_time_left(deadline, o, [&](const solver_options& so) { return backend.solve(m2.model, so); });
  st.solver_status = r2.status;
  if (!r2.message.empty()) result.message += "phase 2: " + r2.message + "\n";
  std::vector<double> values;
  solve_status status = r2.status;
  if (has_solution(r2.status)) {
    values = r2.values;
  } else if (r2.status == solve_status::time_limit || r2.status == solve_status::infeasible) {
    // The start is a solution of the model; a backend that did not return it still has one.
    values.assign(start->begin(), start->end());
    status = solve_status::feasible;
  } else {
    return finish(r2.status);
  }
  const auto computes = schedule_computes(decode_moccasin(m2, values));
  result.plan = plan_from_computes(g, std::span<const std::size_t>(computes));
  const plan_simulation sim = simulate_plan(g, result.plan);
  detail::take_simulated_figures(result, sim);
  if (sim.peak_bytes > budget) {
    result.status = solve_status::error;
    result.message += "decoded plan exceeds the budget (model error)\n";
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
  if (result.status == solve_status::optimal && m2.rounded) {
    result.status = solve_status::feasible;  // optimal for rounded sizes only
    result.cost_bound.reset();
  }
  st.seconds_to_best = improved_at;
  if (has_solution(result.status) && fallback && fallback->sim.total_cost < result.total_cost) {
    result.message += "a start plan outside the model (sizes rounded up, or more computations than its intervals) is cheaper "
                      "than its best: it is returned";
    return return_fallback(result, std::move(*fallback), elapsed());
  }
  if (!result.message.empty() && result.message.back() == '\n') result.message.pop_back();
  result.stats.seconds = elapsed();
  return result;
}

}  // namespace detail

/// Plans `graph` within `budget` bytes with the Moccasin CP model solved by options.backend (a
/// cp_backend, e.g. gecode_backend): phase 1 minimises max(peak, budget) starting from the input
/// order without recomputation, phase 2 minimises the total cost within the budget starting from
/// the cheapest of phase 1, options.start_plans and the eviction greedy along the order (the start
/// plans Checkmate makes). The solution is decoded to a plan (computations in time order, earliest
/// frees) and re-simulated. The answer is never dearer than the cheapest start plan that follows
/// the order and fits the budget in bytes: when none fits the model (sizes rounded up to the
/// backend's integer units can push a plan at the budget over it; a greedy plan may recompute a
/// vertex more often than max_intervals) or it is cheaper than the model's best, that plan is
/// returned, status `feasible`, no cost bound, stats.start_source naming it, and message saying so.
/// Status: `optimal` when the backend proved the staged model's optimum (costs integral),
/// `feasible` when a limit stopped it, `infeasible` when proven (the budget is below what every
/// plan needs, or phase 1 proved the model's minimum peak above it), `time_limit` when phase 1 ran
/// out of time, `no_solution` when the models' estimated memory is over options.max_bytes (not
/// built; message names both sizes) or when sizes beyond the backend's integer range were rounded
/// up (moccasin_model::rounded) and phase 1 found the rounded model's peak above the budget,
/// `unsupported`/`error` from the backend (message). With rounded sizes `optimal` becomes
/// `feasible` and there is no cost bound. Optimal is relative to the staged
/// space of the order with at most max_intervals computations per vertex. stats: order, backend,
/// variables, intervals, phase1_status/peak/seconds, start_source/start_cost, solver_status
/// (phase 2). Progress through options.solver.observer (see moccasin_options::solver).
/// Complexity: exponential worst case; bounded by options.solver.time_limit / node_limit.
/// Throws: invalid_order for a bad order, std::invalid_argument for a negative budget or
/// max_intervals 0, and what make_memory_graph throws.
template <class G, class Backend, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] remat_result moccasin_plan(const G& graph, std::int64_t budget, const moccasin_options<Backend>& options,
                                         const Maps&... maps) {
  const auto t0 = std::chrono::steady_clock::now();  // the limit covers the graph's conversion too
  return detail::run_moccasin(detail::to_memory_graph(graph, maps...), budget, options, t0);
}

/// moccasin_plan with default options for the backend given as template argument:
/// `moccasin_plan<gecode_backend>(graph, budget)` (no time limit: use with small graphs).
template <cp_backend Backend, class G>
  requires memory_graph_source<G>
[[nodiscard]] remat_result moccasin_plan(const G& graph, std::int64_t budget) {
  return moccasin_plan(graph, budget, moccasin_options<Backend>{});
}

}  // namespace memsched
