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

/// Throws: option_error naming the field when max_intervals is 0, phase1_share or
/// phase1_share_with_start is not in [0, 1] (or NaN), or solver.relative_gap is NaN.
template <class Backend>
void check_moccasin_options(const moccasin_options<Backend>& options) {
  const auto fail = [](const char* option, const char* requirement) { throw option_error("moccasin_plan", option, requirement); };
  if (options.max_intervals == 0) fail("max_intervals", "must be >= 1");
  if (!(options.phase1_share >= 0 && options.phase1_share <= 1)) fail("phase1_share", "must be a share of the time limit, in [0, 1]");
  if (!(options.phase1_share_with_start >= 0 && options.phase1_share_with_start <= 1))
    fail("phase1_share_with_start", "must be a share of the time limit, in [0, 1]");
  detail::check_solver_options("moccasin_plan", options.solver);
}

/// Builds the Moccasin CP model of `graph` for `budget` bytes over the staged time domain of
/// options.order (see moccasin_model): `min_peak` minimises max(peak, budget) (the capacity
/// variable), `min_cost` minimises the total cost with the capacity fixed to the budget. Up to
/// options.max_intervals intervals per vertex.
/// Complexity: O(n * C) variables, O((n + m) * C^2) constraints, O(n^2) time slots.
/// Throws: invalid_order for a bad order, std::invalid_argument for a negative budget, option_error
/// naming max_intervals when it is 0, and what make_memory_graph throws.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] moccasin_model make_moccasin_model(const G& graph, std::int64_t budget, moccasin_phase phase,
                                                 const moccasin_model_options& options, const Maps&... maps) {
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  if (budget < 0) throw std::invalid_argument("make_moccasin_model: negative budget");
  if (options.max_intervals == 0) throw option_error("make_moccasin_model", "max_intervals", "must be >= 1");
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

/// The input order of a moccasin_plan call, after checking its arguments (throws as moccasin_plan
/// documents).
template <class Backend>
std::vector<std::size_t> moccasin_checked_order(const memory_graph& g, std::int64_t budget, const moccasin_options<Backend>& options) {
  if (budget < 0) throw std::invalid_argument("moccasin_plan: negative budget");
  std::vector<std::size_t> order;
  if (options.order) order = *options.order;
  else order.assign(g.topological_order().begin(), g.topological_order().end());
  detail::check_order(g, order, "moccasin_plan");
  return order;
}

/// What the steps of one moccasin_plan call share: its arguments, the staged domain's intervals per
/// vertex, the start plans mapped into it and the result being filled in.
template <class Backend>
struct moccasin_run {
  const memory_graph& g;
  std::int64_t budget;
  const moccasin_options<Backend>& options;
  std::chrono::steady_clock::time_point t0;
  call_deadline deadline;
  std::vector<std::size_t> order;
  std::vector<unsigned> counts;  ///< Intervals per vertex in both models.
  std::vector<std::pair<moccasin_schedule, std::string>> plan_starts;
  /// The cheapest start plan within the budget in bytes, also when the model cannot take it.
  std::optional<moccasin_fallback> fallback;
  remat_result result;

  [[nodiscard]] double elapsed() const { return deadline.elapsed(); }
  [[nodiscard]] const Backend& backend() const { return options.backend; }
  remat_result finish(solve_status status) {
    result.status = status;
    result.stats.seconds = elapsed();
    return std::move(result);
  }
};

/// Phase 1's model and outcome: phase 2 reads its budget and units, and the model stays alive
/// until the call returns (the memory estimate counts both models at once).
struct moccasin_phase1 {
  moccasin_model model;
  moccasin_schedule schedule;  ///< The lowest-peak schedule found (the input order without recomputation at first).
  std::int64_t peak_units = 0;  ///< Its peak; the largest int64 when phase 1 proved the model infeasible.
  /// The backend's status when it is unsupported or an error: the call ends with it.
  std::optional<solve_status> backend_failure{};
};

/// Maps plan `p` into the staged domain as a start of phase 2 (skipped when its first computations
/// do not follow the order); it becomes the fallback answer when it fits the budget in bytes and is
/// the cheapest so far. A plan recomputing a vertex more often than the counts allow raises them
/// when may_add_intervals, else it is no start (the fallback may still be it).
template <class Backend>
void offer_moccasin_start(moccasin_run<Backend>& run, const execution_plan& p, std::string name, bool may_add_intervals) {
  auto s = moccasin_schedule_of_plan(run.g, run.order, p);
  if (!s) return;
  plan_simulation sim;
  if (check_plan(run.g, p, &sim).valid && sim.peak_bytes <= run.budget &&
      (!run.fallback || sim.total_cost < run.fallback->sim.total_cost))
    run.fallback = moccasin_fallback{p, name, sim, run.elapsed()};
  const std::size_t n = run.g.size();
  std::vector<unsigned> c(n, 0);
  for (const auto& e : *s) ++c[e.second];
  for (std::size_t v = 0; v < n; ++v) {
    if (c[v] <= run.counts[v]) continue;
    if (!may_add_intervals) return;
    run.counts[v] = c[v];
  }
  run.plan_starts.emplace_back(std::move(*s), std::move(name));
}

/// Records the models' estimated size in the statistics; true (with the message) when it is over
/// options.max_bytes, so that neither model is built.
template <class Backend>
bool moccasin_models_too_large(moccasin_run<Backend>& run) {
  // Phase 1's model is alive while phase 2's is built: twice the model, once the backend.
  model_size_estimate size = moccasin_model_size(run.g, run.order, run.counts, run.backend().name());
  size.model_bytes *= 2;
  remat_stats& st = run.result.stats;
  st.variables = size.variables;
  st.constraints = size.constraints;
  st.nonzeros = size.nonzeros;
  if (size.bytes() <= run.options.max_bytes) return false;
  run.result.message = model_too_large("moccasin_plan", size, run.options.max_bytes);
  return true;
}

/// Phase 1's share of the time limit.
template <class Backend>
double moccasin_phase1_share(const moccasin_run<Backend>& run, const moccasin_model& m1) {
  // A start plan that already fits the budget leaves phase 1 a smaller share of the time.
  // Without one phase 2 cannot start until phase 1 meets the budget, so phase 1 may use all of
  // it: the capacity's domain starts at the budget, so phase 1 ends as soon as it is met.
  bool plan_fits = false;
  for (const auto& ps : run.plan_starts)
    if (auto e = encode_moccasin(run.g, m1, ps.first); e && e->second <= m1.budget_units) plan_fits = true;
  // A fallback plan outside the model is an answer already: phase 1 gets its usual share.
  return plan_fits ? std::min(run.options.phase1_share, run.options.phase1_share_with_start) : run.fallback ? run.options.phase1_share : 1.0;
}

/// Solves phase 1 (min max(peak, budget)) from the input order without recomputation when that
/// order alone exceeds the budget.
template <class Backend>
void solve_moccasin_phase1(moccasin_run<Backend>& run, moccasin_phase1& p1) {
  remat_stats& st = run.result.stats;
  moccasin_model& m1 = p1.model;
  auto enc = encode_moccasin(run.g, m1, p1.schedule);
  p1.peak_units = enc->second;
  if (p1.peak_units <= m1.budget_units) {
    st.phase1_status = solve_status::optimal;
    return;
  }
  m1.model.start = enc->first;
  const double share = moccasin_phase1_share(run, m1);
  double reported_peak = std::numeric_limits<double>::infinity();
  const scaled_observer peaks{run.options.solver.observer, run.t0, static_cast<double>(m1.byte_unit), &reported_peak};
  solver_options o = run.options.solver;
  o.observer = peaks;
  const solver_result r1 = solve_in_time_left(
      run.deadline, o, [&](const solver_options& so) { return run.backend().solve(m1.model, so); }, run.deadline.limit() * share);
  st.phase1_status = r1.status;
  if (!r1.message.empty()) run.result.message += "phase 1: " + r1.message + "\n";
  if (r1.status == solve_status::unsupported || r1.status == solve_status::error) {
    p1.backend_failure = r1.status;
    return;
  }
  if (has_solution(r1.status)) {
    p1.schedule = decode_moccasin(m1, r1.values);
    p1.peak_units = static_cast<std::int64_t>(r1.objective);
  }
  if (r1.status == solve_status::infeasible) p1.peak_units = std::numeric_limits<std::int64_t>::max();
}

/// Phase 1: builds its model (after the observer's phase event) and minimises max(peak, budget)
/// from the input order without recomputation.
template <class Backend>
moccasin_phase1 run_moccasin_phase1(moccasin_run<Backend>& run, const moccasin_schedule& no_remat) {
  remat_stats& st = run.result.stats;
  run.options.solver.observer.on_phase(run.elapsed(), "phase 1: min peak");
  const double build_start = run.deadline.elapsed();
  moccasin_phase1 p1{build_moccasin_model(run.g, run.order, run.budget, moccasin_phase::min_peak, run.counts, run.g.total_bytes()),
                     no_remat};
  run.deadline.reserve_for_build(build_start, 1.0);  // for freeing the models (Gecode runs in this process: no copy-on-write)
  const moccasin_model& m1 = p1.model;
  st.variables = m1.model.num_variables();
  st.intervals = m1.model.intervals().size();
  if (m1.rounded)
    run.result.message += "sizes beyond the backend's integer range: rounded up to units of " + std::to_string(m1.byte_unit) +
                          " bytes (plans fit in bytes; optimality and infeasibility are for the rounded sizes)\n";
  solve_moccasin_phase1(run, p1);
  if (p1.backend_failure) return p1;
  st.phase1_seconds = run.elapsed();
  st.phase1_peak = p1.peak_units == std::numeric_limits<std::int64_t>::max() ? 0 : p1.peak_units * m1.byte_unit;
  return p1;
}

/// A start of phase 2: the values of m2's variables and their cost in m2's units.
struct moccasin_start {
  std::optional<std::vector<std::int64_t>> values;  ///< nullopt: no start fits m2.
  std::int64_t cost = std::numeric_limits<std::int64_t>::max();
};

/// The cheapest start of phase 2 that fits m2's budget, of phase 1's schedule (when it meets the
/// budget) and the start plans; stats.start_source names it.
template <class Backend>
moccasin_start cheapest_moccasin_start(moccasin_run<Backend>& run, const moccasin_phase1& p1, const moccasin_model& m2) {
  moccasin_start start;
  auto consider = [&](const moccasin_schedule& s, const std::string& name) {
    auto enc = encode_moccasin(run.g, m2, s);
    if (!enc || enc->second > m2.budget_units) return;
    const std::int64_t c = m2.model.objective_value(enc->first);
    if (c < start.cost) {
      start.cost = c;
      start.values = std::move(enc->first);
      run.result.stats.start_source = name;
    }
  };
  if (p1.peak_units <= p1.model.budget_units) consider(p1.schedule, "phase 1");
  for (const auto& [schedule, name] : run.plan_starts) consider(schedule, name);
  return start;
}

/// The answer when no start fits phase 2's model: the fallback plan, else phase 1's verdict.
template <class Backend>
remat_result moccasin_without_start(moccasin_run<Backend>& run, const moccasin_phase1& p1) {
  remat_result& result = run.result;
  const remat_stats& st = result.stats;
  if (run.fallback) {
    result.message += "no start fits the model (sizes rounded up, or more computations than its intervals): the cheapest "
                      "start plan within the budget is returned";
    return return_fallback(result, std::move(*run.fallback), run.elapsed());
  }
  // Phase 1 did not reach the budget: proven impossible in this model, or out of time.
  const bool proven = st.phase1_status == solve_status::optimal || st.phase1_status == solve_status::infeasible;
  if (proven) result.message += "phase 1 proved the model's minimum peak above the budget\n";
  else
    result.message += "phase 1 found no schedule within the budget in its time (lowest peak " + std::to_string(st.phase1_peak) +
                      " bytes, budget " + std::to_string(run.budget) + " bytes) and no start plan fits the order and the budget\n";
  if (!result.message.empty() && result.message.back() == '\n') result.message.pop_back();
  // With rounded sizes the proof is about the rounded model, not about bytes.
  return run.finish(proven ? (p1.model.rounded ? solve_status::no_solution : solve_status::infeasible) : solve_status::time_limit);
}

/// Decodes phase 2's values into the plan, re-simulates it and sets the status and cost bound:
/// `optimal` only for exact costs and sizes, the bound lowered by the costs' rounding.
template <class Backend>
void take_moccasin_solution(moccasin_run<Backend>& run, const moccasin_model& m2, const std::vector<double>& values, solve_status status,
                            double bound) {
  remat_result& result = run.result;
  const double unit = m2.cost_unit;
  const auto computes = schedule_computes(decode_moccasin(m2, values));
  result.plan = plan_from_computes(run.g, std::span<const std::size_t>(computes));
  const plan_simulation sim = simulate_plan(run.g, result.plan);
  detail::take_simulated_figures(result, sim);
  if (sim.peak_bytes > run.budget) {
    result.status = solve_status::error;
    result.message += "decoded plan exceeds the budget (model error)\n";
  } else {
    result.status = status;
  }
  if (std::isfinite(bound)) {
    // Costs are rounded to whole units: subtract the largest rounding error (exact when unit is 1).
    const double slack = unit == 1.0 ? 0.0 : 0.5 * unit * static_cast<double>(result.stats.intervals);
    result.cost_bound = std::max(0.0, std::min(bound * unit - slack, result.total_cost));
    if (status == solve_status::optimal && unit == 1.0) result.cost_bound = result.total_cost;
  }
  if (status == solve_status::optimal && unit != 1.0) result.status = solve_status::feasible;  // optimal for rounded costs only
  if (result.status == solve_status::optimal && m2.rounded) {
    result.status = solve_status::feasible;  // optimal for rounded sizes only
    result.cost_bound.reset();
  }
}

/// Phase 2: minimises the cost within the budget from the cheapest start that fits, and returns
/// the answer (the fallback plan when it is cheaper than the model's best).
template <class Backend>
remat_result run_moccasin_phase2(moccasin_run<Backend>& run, const moccasin_phase1& p1) {
  remat_result& result = run.result;
  remat_stats& st = result.stats;
  moccasin_model m2 = build_moccasin_model(run.g, run.order, run.budget, moccasin_phase::min_cost, run.counts, run.g.total_bytes());
  moccasin_start start = cheapest_moccasin_start(run, p1, m2);
  if (!start.values) return moccasin_without_start(run, p1);
  st.start_cost = static_cast<double>(start.cost) * m2.cost_unit;
  m2.model.start = start.values;
  solver_options o = run.options.solver;
  run.options.solver.observer.on_phase(run.elapsed(), "phase 2: min cost");
  double reported_cost = std::numeric_limits<double>::infinity(), improved_at = st.phase1_seconds;
  const scaled_observer costs{run.options.solver.observer, run.t0, m2.cost_unit, &reported_cost, &improved_at};
  o.observer = costs;
  // No time left: time_limit, and the start is the answer.
  const solver_result r2 = solve_in_time_left(run.deadline, o, [&](const solver_options& so) { return run.backend().solve(m2.model, so); });
  st.solver_status = r2.status;
  if (!r2.message.empty()) result.message += "phase 2: " + r2.message + "\n";
  std::vector<double> values;
  solve_status status = r2.status;
  if (has_solution(r2.status)) {
    values = r2.values;
  } else if (r2.status == solve_status::time_limit || r2.status == solve_status::infeasible) {
    // The start is a solution of the model; a backend that did not return it still has one.
    values.assign(start.values->begin(), start.values->end());
    status = solve_status::feasible;
  } else {
    return run.finish(r2.status);
  }
  take_moccasin_solution(run, m2, values, status, r2.bound);
  st.seconds_to_best = improved_at;
  if (has_solution(result.status) && run.fallback && run.fallback->sim.total_cost < result.total_cost) {
    result.message += "a start plan outside the model (sizes rounded up, or more computations than its intervals) is cheaper "
                      "than its best: it is returned";
    return return_fallback(result, std::move(*run.fallback), run.elapsed());
  }
  if (!result.message.empty() && result.message.back() == '\n') result.message.pop_back();
  result.stats.seconds = run.elapsed();
  return std::move(result);
}

template <class Backend>
remat_result run_moccasin(const memory_graph& g, std::int64_t budget, const moccasin_options<Backend>& options,
                          std::chrono::steady_clock::time_point t0) {
  call_deadline deadline(t0, options.solver.time_limit);
  std::vector<std::size_t> order = moccasin_checked_order(g, budget, options);
  moccasin_run<Backend> run{g, budget, options, t0, deadline, std::move(order), {}, {}, {}, {}};
  const std::size_t n = g.size();
  run.result.stats.order = run.order;
  run.result.stats.backend = std::string(options.backend.name());
  if (n == 0) {
    run.result.cost_bound = 0;
    return run.finish(solve_status::optimal);
  }
  // Every plan computes each vertex once with its inputs resident; outputs stay resident.
  if (auto why = budget_below_lower_bound(g, budget)) {
    run.result.message = *why;
    return run.finish(solve_status::infeasible);
  }
  // Start plans mapped into the staged domain: the caller's (they may need more intervals per
  // vertex) and the eviction greedy's along the order (Checkmate's; used as they are). The cheapest
  // of them within the budget in bytes is also the fallback answer: the model cannot take a plan
  // at the budget once sizes are rounded up to the backend's integer units, nor a greedy plan that
  // recomputes a vertex more often than the intervals allow, and the answer is never dearer.
  run.counts.assign(n, options.max_intervals);
  for (std::size_t k = 0; k < options.start_plans.size(); ++k)
    offer_moccasin_start(run, options.start_plans[k], "plan " + std::to_string(k), true);
  moccasin_schedule no_remat;
  for (std::size_t k = 0; k < n; ++k) no_remat.emplace_back(moccasin_model::slot(k, k), run.order[k]);
  if (moccasin_models_too_large(run)) return run.finish(solve_status::no_solution);
  // The greedy's plans need no interval beyond the counts, so the model's size does not wait for
  // them (on a graph whose model is refused they would be O(n (n + m)) each for nothing).
  for (const auto& [plan, name] : eviction_start_plans(g, run.order, budget, run.deadline)) offer_moccasin_start(run, plan, name, false);
  const moccasin_phase1 p1 = run_moccasin_phase1(run, no_remat);
  if (p1.backend_failure) return run.finish(*p1.backend_failure);
  return run_moccasin_phase2(run, p1);
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
/// Throws: what check_moccasin_options throws (before any work), invalid_order for a bad order,
/// std::invalid_argument for a negative budget, and what make_memory_graph throws.
template <class G, class Backend, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] remat_result moccasin_plan(const G& graph, std::int64_t budget, const moccasin_options<Backend>& options,
                                         const Maps&... maps) {
  const auto t0 = std::chrono::steady_clock::now();  // the limit covers the graph's conversion too
  check_moccasin_options(options);
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
