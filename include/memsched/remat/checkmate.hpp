#pragma once
// Checkmate (Jain et al., MLSys 2020): optimal rematerialization as a mixed-integer linear program
// over the staged plans of an input topological order (the model: checkmate_model.hpp), solved by
// any milp_backend, with start solutions (caller's plans, the plan without recomputation, a staged
// eviction greedy, LP rounding when the backend solves LPs) and large-neighbourhood search.

#include <memsched/core/errors.hpp>
#include <memsched/core/status.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/remat/checkmate_lp_rounding.hpp>
#include <memsched/remat/checkmate_model.hpp>
#include <memsched/remat/detail/call_deadline.hpp>
#include <memsched/remat/detail/checkmate_greedy.hpp>
#include <memsched/remat/detail/checkmate_staging.hpp>
#include <memsched/remat/detail/simulated_result.hpp>
#include <memsched/remat/detail/solver_glue.hpp>
#include <memsched/remat/input_order.hpp>
#include <memsched/remat/remat_result.hpp>
#include <memsched/sim/execution_plan.hpp>
#include <memsched/sim/plan_from_computes.hpp>
#include <memsched/sim/simulate_plan.hpp>
#include <memsched/solver/concepts.hpp>
#include <memsched/solver/milp_model.hpp>
#include <memsched/solver/solver_options.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace memsched {

/// Options of checkmate_milp_plan (plain aggregate; the backend type is deduced:
/// `checkmate_options{.backend = cbc_backend{}, .solver = {.time_limit = 60s}}`).
template <milp_backend Backend>
struct checkmate_options {
  Backend backend{};
  /// time_limit: wall clock for the whole call; node_limit: for each backend solve; relative_gap,
  /// threads, verbosity: for the backend; observer: on_phase ("starts", "lns", "full solve"),
  /// on_incumbent(seconds, total cost, bound) for each better plan, on_bound for the LP bound.
  solver_options solver;
  /// Input topological order (vertex indices). nullopt: the lowest-peak order among Kahn, DFS and
  /// greedy (remat_input_order computes better ones, e.g. Serenity's or the graph file's).
  std::optional<std::vector<std::size_t>> order;
  /// Start solutions tried (the cheapest one that fits the model is given to the solver): these
  /// plans (skipped unless their first computations follow the input order), the plan of the input
  /// order without recomputation, and the staged eviction greedy (greedy_starts).
  std::vector<execution_plan> start_plans;
  /// Also try the staged recomputation-on-demand greedy (several eviction policies) as starts.
  bool greedy_starts = true;
  /// Also try checkmate_lp_plan's rounding as a start when the backend solves LPs (lp_backend),
  /// with at most lp_rounding_fraction of the time limit.
  bool lp_rounding_start = true;
  double lp_rounding_fraction = 0.25;
  lp_rounding_options lp_rounding;
  /// Large-neighbourhood search before the full solve, when there is a time limit and a start:
  /// repeatedly free a window of stages (or of positions) and re-solve it with the rest fixed to the
  /// incumbent. Fraction of the time limit it may use (0 disables).
  double lns_fraction = 0.75;
  std::size_t lns_window = 0;  ///< Stages (positions) per window; 0: about n / 10, within [6, 20].
  std::chrono::duration<double> lns_round_time{6.0};  ///< Time limit of one neighbourhood solve.
  /// The full solve after the search runs only when at least this much time is left (a short CBC
  /// run adds nothing but a bound no better than the LP's).
  std::chrono::duration<double> min_full_solve_time{10.0};
  checkmate_model_options model;
  /// Memory cap for the model, the LP rounding's copy and the backend's, estimated before building
  /// (checkmate_model_size): a model over it is not built and the call returns no_solution with a
  /// message naming both sizes. Default: half the physical memory (default_max_bytes).
  std::uint64_t max_bytes = default_max_bytes();
};

/// Throws: option_error naming the field when lp_rounding_fraction or lns_fraction is not in
/// [0, 1] (or NaN), lns_round_time or min_full_solve_time is negative or NaN, or
/// solver.relative_gap is NaN.
template <class Backend>
void check_checkmate_options(const checkmate_options<Backend>& options) {
  const auto fail = [](const char* option, const char* requirement) { throw option_error("checkmate_milp_plan", option, requirement); };
  if (!(options.lp_rounding_fraction >= 0 && options.lp_rounding_fraction <= 1))
    fail("lp_rounding_fraction", "must be a share of the time limit, in [0, 1]");
  if (!(options.lns_fraction >= 0 && options.lns_fraction <= 1)) fail("lns_fraction", "must be a share of the time limit, in [0, 1]");
  if (!(options.lns_round_time.count() >= 0)) fail("lns_round_time", "must be >= 0 seconds");
  if (!(options.min_full_solve_time.count() >= 0)) fail("min_full_solve_time", "must be >= 0 seconds");
  detail::check_solver_options("checkmate_milp_plan", options.solver);
}

namespace detail {

/// The solve loop of checkmate_milp: start, large-neighbourhood search, full solve.
template <class Backend>
class checkmate_solver {
 public:
  checkmate_solver(const memory_graph& g, std::int64_t budget, const checkmate_options<Backend>& o, const call_deadline& deadline)
      : g_(g), budget_(budget), backend_(o.backend), o_(o), deadline_(deadline) {}

  /// The start plans that need no model (the caller's, the plan without recomputation, the
  /// eviction greedy), with their names; made before the model so that a model the time limit
  /// stops still leaves an answer.
  void make_start_plans(std::span<const std::size_t> order) {
    for (std::size_t k = 0; k < o_.start_plans.size(); ++k) plans_.emplace_back(o_.start_plans[k], "plan " + std::to_string(k));
    plans_.emplace_back(plan_from_computes(g_, order), "no-remat");
    if (o_.greedy_starts)
      for (auto& start : eviction_start_plans(g_, order, budget_, deadline_)) plans_.push_back(std::move(start));
  }

  /// The answer when the time limit stopped the model's build: the cheapest start plan within the
  /// budget (by the simulator), status feasible, else time_limit.
  remat_result without_model(remat_result res) const {
    std::optional<plan_simulation> best;
    for (const auto& [plan, source] : plans_) {
      // A caller's plan the simulator rejects, or whose first computations do not follow the
      // order (what encode_checkmate_plan needs), is no answer (encoding would skip it too).
      plan_simulation sim;
      if (!check_plan(g_, plan, &sim).valid || first_computation_order(plan, g_.size()) != res.stats.order) continue;
      if (sim.peak_bytes > budget_ || (best && sim.total_cost >= best->total_cost)) continue;
      best = sim;
      res.plan = plan;
      res.stats.start_source = source;
      res.stats.start_cost = sim.total_cost;
    }
    res.stats.solver_status = solve_status::time_limit;
    res.message = "the time limit stopped the model's build";
    if (best) {
      // Every vertex runs at least once: a plan that recomputes nothing is optimal all the same.
      const bool no_recomputation = best->total_cost <= g_.total_cost() * (1 + 1e-12);
      res.status = no_recomputation ? solve_status::optimal : solve_status::feasible;
      if (no_recomputation) res.cost_bound = best->total_cost;
      res.peak_bytes = best->peak_bytes;
      res.total_cost = best->total_cost;
      res.overhead = best->overhead;
      res.stats.seconds_to_best = deadline_.elapsed();
      res.message += "; the cheapest start plan within the budget is returned";
    } else {
      res.status = solve_status::time_limit;
    }
    res.stats.seconds = deadline_.elapsed();
    return res;
  }

  remat_result run(checkmate_model& cm) {
    remat_result res;
    res.stats.order = cm.order;
    res.stats.backend = std::string(backend_.name());
    res.stats.variables = cm.model.num_variables();
    res.stats.constraints = cm.model.num_constraints();
    res.stats.nonzeros = cm.model.num_nonzeros();
    res.stats.memory_unit = cm.memory_unit;
    cm_ = &cm;
    o_.solver.observer.on_phase(deadline_.elapsed(), "starts");
    choose_start(res);
    // A start that recomputes nothing (of positive cost) is optimal: every vertex runs at least once.
    const bool trivially_optimal = best_ && best_objective_ <= cm.model.objective_offset * (1 + 1e-12);
    const double limit = trivially_optimal ? 0.0 : deadline_.limit();
    if (best_ && std::isfinite(limit) && limit > 0 && o_.lns_fraction > 0 && deadline_.backend_time_left()) {
      o_.solver.observer.on_phase(deadline_.elapsed(), "lns");
      lns(res, limit * o_.lns_fraction);
    }
    // The full model, from the incumbent, for the rest of the time.
    solver_options so = base_options();
    const auto full_limit = deadline_.for_backend();
    cm.model.start = best_;
    solver_result full;
    if (trivially_optimal) {
      full.status = solve_status::optimal;
      full.objective = full.bound = best_objective_;
    } else if (best_ && full_limit && *full_limit < o_.min_full_solve_time) {  // (no time at all: solve_in_time_left)
      full.status = solve_status::time_limit;
      full.message = "no time left for the full solve";
    } else {
      // The backend's incumbents, as total costs since the call started (re-checked by offer below).
      const scaled_observer translate{o_.solver.observer, deadline_.start(), 1.0 / cm.cost_scale, &reported_cost_};
      so.observer = translate;
      full = solve_in_time_left(
          deadline_, so,
          [&](const solver_options& s) {
            o_.solver.observer.on_phase(deadline_.elapsed(), "full solve");
            return backend_.solve(cm.model, s);
          },
          std::numeric_limits<double>::infinity(), "no time left for the full solve");
    }
    res.stats.solver_status = full.status;
    if (has_solution(full.status) && full.values.size() == cm.model.num_variables()) offer(full.values, cm.model.objective_value(full.values));
    // A bound above the incumbent is no bound (a stopped solver may report garbage): ignore it.
    if (!std::isnan(full.bound) && (!best_ || full.bound <= best_objective_ * (1 + 1e-9) + 1e-9))
      res.cost_bound = cm.cost_of_objective(full.bound);
    if (lp_bound_ && (!res.cost_bound || *lp_bound_ > *res.cost_bound)) res.cost_bound = lp_bound_;
    res.message = full.message;
    if (rejected_ > 0) res.message += (res.message.empty() ? "" : "; ") + std::to_string(rejected_) + " solver assignment(s) violating the model rejected";
    if (!best_) {
      res.status = full.status;  // infeasible, time_limit, unsupported or error: nothing to decode
      if (has_solution(full.status)) {
        res.status = solve_status::error;
        res.message = "the solver's assignment violates the model; " + res.message;
      }
      res.stats.seconds = deadline_.elapsed();
      return res;
    }
    res.plan = decode_checkmate_solution(g_, cm, *best_);
    const plan_simulation sim = simulate_plan(g_, res.plan);
    detail::take_simulated_figures(res, sim);
    res.stats.seconds_to_best = best_seconds_;
    const bool proven = full.status == solve_status::optimal && full.objective >= best_objective_ - 1e-9 * std::max(1.0, std::abs(best_objective_));
    res.status = proven ? solve_status::optimal : solve_status::feasible;
    // A proven optimum is the tightest bound there is: the LP's or the solver's (e.g. 7.67 against
    // a proven 8) says less.
    if (proven) res.cost_bound = res.total_cost;
    if (sim.peak_bytes > budget_) {
      res.status = solve_status::error;
      res.message = "decoded plan exceeds the budget (peak " + std::to_string(sim.peak_bytes) + ")";
    }
    res.stats.seconds = deadline_.elapsed();
    return res;
  }

 private:
  /// The caller's gap, threads, verbosity and node limit; no time limit, no observer (set per solve).
  solver_options base_options() const {
    solver_options so = o_.solver;
    so.time_limit.reset();
    so.observer = {};
    return so;
  }

  /// Takes an assignment when it satisfies the model and is better than the incumbent; reports it.
  /// (Backend answers are re-checked: a solver that stops early may hand back a bad assignment.)
  bool offer(const std::vector<double>& x, double objective) {
    if (best_ && objective >= best_objective_ - 1e-9 * std::max(1.0, std::abs(best_objective_))) return false;
    if (x.size() != cm_->model.num_variables() || cm_->model.first_violation(x)) {
      ++rejected_;
      return false;
    }
    best_ = x;
    best_objective_ = objective;
    best_seconds_ = deadline_.elapsed();
    const double cost = cm_->cost_of_objective(objective);
    if (cost < reported_cost_) {
      reported_cost_ = cost;
      o_.solver.observer.on_incumbent(best_seconds_, cost, lp_bound_.value_or(std::numeric_limits<double>::quiet_NaN()));
    }
    return true;
  }

  /// Offers every start candidate (make_start_plans' in their order, then the LP rounding, only
  /// when the best start still recomputes something), each until the deadline.
  void choose_start(remat_result& res) {
    auto take = [&](const execution_plan& plan, const std::string& source) {
      const auto x = encode_checkmate_plan(g_, *cm_, plan);
      if (!x || cm_->model.first_violation(*x)) return;
      if (offer(*x, cm_->model.objective_value(*x))) {
        res.stats.start_source = source;
        res.stats.start_cost = cm_->cost_of_objective(best_objective_);
      }
    };
    for (const auto& [plan, source] : plans_) {
      if (deadline_.passed()) break;
      take(plan, source);
    }
    if constexpr (lp_backend<Backend>) {
      const bool no_recomputation = best_ && best_objective_ <= cm_->model.objective_offset * (1 + 1e-12);
      if (o_.lp_rounding_start && !no_recomputation && deadline_.backend_time_left()) {
        checkmate_lp_options<Backend> lo{.backend = backend_, .solver = base_options(), .order = cm_->order,
                                         .rounding = o_.lp_rounding, .model = o_.model, .max_bytes = o_.max_bytes};
        lo.solver.time_limit = deadline_.remaining(deadline_.limit() * o_.lp_rounding_fraction);
        const remat_result lr = checkmate_lp_on(g_, budget_, lo);
        lp_bound_ = lr.cost_bound;
        if (lp_bound_) o_.solver.observer.on_bound(deadline_.elapsed(), *lp_bound_);
        if (has_solution(lr.status)) take(lr.plan, "lp rounding");
      }
    }
  }

  /// The model restricted to the variables not in `fixed`, the fixed ones replaced by the
  /// incumbent's values (rows left without variables are dropped: the incumbent satisfies them).
  /// `columns` receives the full-model index of every sub-model variable.
  milp_model restricted_model(const std::vector<char>& fixed, std::vector<std::size_t>& columns) const {
    const milp_model& full = cm_->model;
    const std::vector<double>& x = *best_;
    milp_model sub;
    std::vector<std::size_t> index(full.num_variables(), checkmate_model::constant);
    columns.clear();
    double offset = full.objective_offset;
    for (std::size_t v = 0; v < full.num_variables(); ++v) {
      if (fixed[v]) {
        offset += full.variables()[v].objective * x[v];
      } else {
        index[v] = sub.add_variable(full.variables()[v]);
        columns.push_back(v);
      }
    }
    sub.objective_offset = offset;
    for (const auto& c : full.constraints()) {
      std::vector<linear_term> terms;
      double constant = 0;
      for (const auto& t : c.terms) {
        if (fixed[t.variable])
          constant += t.coefficient * x[t.variable];
        else
          terms.push_back({index[t.variable], t.coefficient});
      }
      if (terms.empty()) continue;
      sub.add_constraint(std::move(terms), c.lower - constant, c.upper - constant);
    }
    std::vector<double> start(columns.size());
    for (std::size_t k = 0; k < columns.size(); ++k) start[k] = x[columns[k]];
    sub.start = std::move(start);
    return sub;
  }

  /// Large-neighbourhood search: alternately free a window of stages and a window of positions;
  /// everything else is fixed to the incumbent and the restricted model is solved.
  void lns(remat_result& res, double until) {
    const checkmate_model& cm = *cm_;
    const std::size_t n = cm.order.size();
    if (n < 3) return;
    std::size_t w = o_.lns_window ? o_.lns_window : std::clamp<std::size_t>(n / 10, 6, 20);
    w = std::min(w, n);
    std::vector<std::vector<std::size_t>> users(n);
    for (const auto& [i, k] : cm.edges) users[i].push_back(k);
    std::size_t stage_start = 0, pos_start = 0;
    std::size_t round = 0, fails = 0;
    std::vector<char> fixed(cm.model.num_variables(), 0);
    std::vector<std::size_t> columns;
    constexpr std::size_t constant = checkmate_model::constant;
    while (deadline_.elapsed() < until && deadline_.backend_time_left() && fails < 4 * ((n + w - 1) / w) + 4) {
      const bool by_stage = round % 2 == 0;
      std::size_t& start = by_stage ? stage_start : pos_start;
      if (start >= n) start = 0;
      const std::size_t a = start, b = std::min(n, start + w);
      start += std::max<std::size_t>(1, w / 2);
      ++round;
      // R and S outside the window are fixed; FREE and U whose inputs are all fixed follow.
      auto is_fixed = [&](std::size_t var) { return var == constant || fixed[var]; };
      for (std::size_t t = 0; t < n; ++t)
        for (std::size_t i = 0; i <= t; ++i) {
          const bool inside = by_stage ? (t >= a && t < b) : (i >= a && i < b);
          if (cm.R[t][i] != constant) fixed[cm.R[t][i]] = !inside;
          if (i < t) fixed[cm.S[t][i]] = !inside;
        }
      for (std::size_t t = 0; t < n; ++t) {
        for (std::size_t e = 0; e < cm.FREE[t].size(); ++e) {
          if (cm.FREE[t][e] == constant) continue;
          const auto [i, k] = cm.edges[e];
          bool f = is_fixed(cm.R[t][k]) && (t + 1 == n || is_fixed(cm.S[t + 1][i]));
          for (std::size_t j : users[i])
            if (j > k && j < t && !is_fixed(cm.R[t][j])) f = false;
          fixed[cm.FREE[t][e]] = f;
        }
        bool chain = true;
        for (std::size_t i = 0; i < t; ++i) chain = chain && is_fixed(cm.S[t][i]);
        for (std::size_t k = 0; k <= t; ++k) {
          chain = chain && is_fixed(cm.R[t][k]);
          if (k > 0)
            for (std::size_t e = 0; e < cm.FREE[t].size(); ++e)
              if (cm.edges[e].second == k - 1) chain = chain && is_fixed(cm.FREE[t][e]);
          fixed[cm.U[t][k]] = chain;
        }
      }
      const milp_model sub_model = restricted_model(fixed, columns);
      solver_options so = base_options();
      so.relative_gap = 1e-9;
      so.time_limit = deadline_.for_backend(std::max(0.05, std::min(o_.lns_round_time.count(), until - deadline_.elapsed())));
      const solver_result sub = backend_.solve(sub_model, so);
      ++res.stats.lns_rounds;
      bool improved = false;
      if (has_solution(sub.status) && sub.values.size() == columns.size()) {
        std::vector<double> x = *best_;
        for (std::size_t k = 0; k < columns.size(); ++k) x[columns[k]] = sub.values[k];
        improved = offer(x, cm.model.objective_value(x));
      }
      if (improved) {
        ++res.stats.lns_improvements;
        fails = 0;
      } else {
        ++fails;
      }
      // Adapt the window: grow it when the neighbourhood was solved to optimality quickly.
      if (sub.status == solve_status::optimal && sub.seconds < so.time_limit->count() / 4 && w < n) w = std::min(n, w + w / 2 + 1);
      if (sub.status != solve_status::optimal && w > 4) w = std::max<std::size_t>(4, w * 3 / 4);
    }
  }

  const memory_graph& g_;
  std::int64_t budget_;
  const Backend& backend_;
  const checkmate_options<Backend>& o_;
  const call_deadline& deadline_;
  std::vector<std::pair<execution_plan, std::string>> plans_;  // make_start_plans'
  checkmate_model* cm_ = nullptr;
  std::optional<std::vector<double>> best_;
  std::optional<double> lp_bound_;  // LP relaxation optimum at the budget (from the LP rounding)
  std::size_t rejected_ = 0;        // backend assignments that violated the model
  double best_objective_ = infinity;
  double best_seconds_ = 0;
  double reported_cost_ = infinity;  // the best total cost the observer has seen
};

}  // namespace detail

/// Checkmate's optimal rematerialization with options.backend (a milp_backend): builds the MILP
/// for the input order (options.order, or the lowest-peak basic order), gives the backend the
/// cheapest start solution that fits (the options' start plans, the plan without recomputation,
/// the eviction greedy, the LP rounding), improves it by large-neighbourhood search when a time
/// limit is set, solves the full model for the rest of the time, decodes the best assignment and
/// checks it with the simulator.
/// Status: `optimal` (proven for the staged plans of the order), `feasible` (a limit stopped the
/// proof), `infeasible` (proven: no staged plan of the order fits, or a vertex cannot run within
/// the budget at all), `no_solution` (the model's estimated memory is over options.max_bytes: not
/// built; message names both), `time_limit` (nothing found; when the limit stopped the model's
/// build, the cheapest start plan that needs no model is returned if one fits), `error` or `unsupported` (from the
/// backend; see message). cost_bound: the solver's proven bound on that plan space (total_cost when
/// optimal). stats: order, backend,
/// model size, start_source/start_cost, seconds_to_best, LNS rounds, solver_status.
/// Complexity: exponential worst case; model size O(n^2 + n m).
/// Throws: what check_checkmate_options throws (before any work), invalid_order on a bad
/// options.order, std::invalid_argument on a negative budget, and what make_memory_graph throws.
template <class G, class Backend, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] remat_result checkmate_milp_plan(const G& graph, std::int64_t budget, const checkmate_options<Backend>& options,
                                               const Maps&... maps) {
  const auto t0 = detail::checkmate_clock::now();
  check_checkmate_options(options);
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  if (budget < 0) throw std::invalid_argument("checkmate_milp_plan: negative budget");
  const std::vector<std::size_t> order = options.order ? *options.order : detail::checkmate_best_basic_order(g);
  detail::check_checkmate_order(g, order, "checkmate_milp_plan");
  if (auto why = detail::checkmate_obviously_infeasible(g, budget)) {
    remat_result res;
    res.stats.order = order;
    res.stats.backend = std::string(options.backend.name());
    res.status = solve_status::infeasible;
    res.message = *why;
    res.stats.seconds = detail::seconds_since(t0);
    return res;
  }
  // The model, the LP rounding's own copy of it while the start is chosen, and the backend's copy.
  model_size_estimate size = checkmate_model_size(g, order, options.backend.name(), false, options.max_bytes, options.model);
  if constexpr (lp_backend<Backend>)
    if (options.lp_rounding_start) size.model_bytes *= 2;
  // A result that carries the order and the model's size (the answers without a solve).
  auto sized_result = [&] {
    remat_result res;
    res.stats.order = order;
    res.stats.backend = std::string(options.backend.name());
    res.stats.variables = size.variables;
    res.stats.constraints = size.constraints;
    res.stats.nonzeros = size.nonzeros;
    return res;
  };
  if (size.bytes() > options.max_bytes) {
    remat_result res = sized_result();
    res.status = solve_status::no_solution;
    res.message = detail::model_too_large("checkmate_milp_plan", size, options.max_bytes);
    res.stats.seconds = detail::seconds_since(t0);
    return res;
  }
  detail::call_deadline deadline(t0, options.solver.time_limit);
  detail::checkmate_solver<Backend> solver(g, budget, options, deadline);
  solver.make_start_plans(order);
  const double build_start = deadline.elapsed();
  std::optional<checkmate_model> cm = detail::build_checkmate_model_until(g, budget, order, options.model, &deadline);
  deadline.reserve_for_build(build_start, 1.5);  // for freeing the model
  if (!cm) return solver.without_model(sized_result());
  return solver.run(*cm);
}

/// checkmate_milp_plan with default options for the backend given as template argument:
/// `checkmate_milp_plan<cbc_backend>(graph, budget)` (no time limit: use with small graphs).
template <milp_backend Backend, class G>
  requires memory_graph_source<G>
[[nodiscard]] remat_result checkmate_milp_plan(const G& graph, std::int64_t budget) {
  return checkmate_milp_plan(graph, budget, checkmate_options<Backend>{});
}

}  // namespace memsched
