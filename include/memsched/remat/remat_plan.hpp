#pragma once
// remat_plan: the library's best rematerialization plan for a graph and a budget,
// a portfolio run along one input order: every heuristic, DTR with each cheap eviction score,
// HiRemate on training graphs, then (with a MILP backend) Checkmate's MILP warm-started from every
// plan found so far that follows the order, so that it is never worse than the best of them and
// its proof or LP bound certifies the answer. Every candidate is re-checked by the simulator.

#include <memsched/core/errors.hpp>
#include <memsched/core/observer.hpp>
#include <memsched/core/status.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/remat/best_heuristic.hpp>
#include <memsched/remat/checkmate.hpp>
#include <memsched/remat/checkpoint_plan.hpp>
#include <memsched/remat/cost_lower_bound.hpp>
#include <memsched/remat/detail/call_deadline.hpp>
#include <memsched/remat/detail/checkmate_greedy.hpp>
#include <memsched/remat/detail/checkmate_staging.hpp>
#include <memsched/remat/detail/plan_builder.hpp>
#include <memsched/remat/detail/simulated_result.hpp>
#include <memsched/remat/dtr.hpp>
#include <memsched/remat/free_order.hpp>
#include <memsched/remat/hiremate.hpp>
#include <memsched/remat/input_order.hpp>
#include <memsched/remat/lifetime_search.hpp>
#include <memsched/remat/remat_result.hpp>
#include <memsched/sim/execution_plan.hpp>
#include <memsched/sim/simulate_order.hpp>
#include <memsched/sim/simulate_plan.hpp>
#include <memsched/solver/concepts.hpp>
#include <memsched/solver/model_size.hpp>
#include <memsched/solver/solver_options.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdio>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace memsched {

/// The backend of remat_plan_options when no MILP solver is wanted (the default): remat_plan then
/// runs the heuristics, DTR and HiRemate, and proves nothing beyond plans without recomputation.
struct no_solver {
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "none"; }
};

/// What remat_plan_options accepts as its backend: a milp_backend, or no_solver.
template <class B>
concept remat_plan_backend = milp_backend<B> || std::same_as<B, no_solver>;

/// Options of remat_plan (plain aggregate; the backend type is deduced, no_solver when absent:
/// `remat_plan_options{.backend = cbc_backend{}, .solver = {.time_limit = 10s}}`).
template <remat_plan_backend Backend = no_solver>
struct remat_plan_options {
  /// Checkmate's MILP runs last when this is a milp_backend; no_solver skips it.
  Backend backend{};
  /// time_limit: wall clock for the whole call (every stage); the MILP gets what the other stages
  /// leave. relative_gap, threads, verbosity, node_limit: for the backend (threads also for
  /// HiRemate's classes). observer: on_phase ("heuristics", "dtr", "eviction-greedy", "lifetime-search", "hiremate",
  /// "checkmate-milp"),
  /// on_incumbent(seconds, total cost, bound) for each better plan, on_bound for the MILP's bound.
  solver_options solver;
  /// Input topological order of DTR and Checkmate (vertex indices). nullopt: the lowest-peak order
  /// among Kahn, DFS and greedy, as checkmate_milp_plan (remat_input_order computes others).
  std::optional<std::vector<std::size_t>> order;
  /// More input orders (the order as a decision): the whole portfolio runs along `order`, then
  /// along each of these (a time limit is shared evenly among the orders still to run); the
  /// cheapest plan wins (ties: the earlier order). Vertex indices, topological orders.
  std::vector<std::vector<std::size_t>> more_orders;
  /// Options of the heuristics stage (its `heuristics` list: which ones; empty: all).
  best_heuristic_options heuristics;
  /// DTR's eviction scores tried, in this order, each run stopping at the time limit; empty:
  /// dtr-eq, local, lru, size, then dtr (the exact neighbourhood, O(R (n + m)) per eviction, R the resident values) on
  /// graphs of at most dtr_exact_max_vertices.
  std::vector<dtr_heuristic> dtr_heuristics;
  std::size_t dtr_exact_max_vertices = default_dtr_exact_max_vertices;
  /// Counted limit of each DTR run (dtr_options::max_computations); 0: 8 n + 64, so that a score
  /// that thrashes gives up after a few passes over the graph.
  std::size_t dtr_max_computations = 0;
  /// Checkmate's eviction greedy along the order (recomputation on demand, one plan per eviction
  /// policy; milliseconds on graphs of thousands of vertices), after DTR: the cheapest plan on
  /// some graphs, and a start for the stages after it.
  bool eviction_greedy = true;
  /// lifetime_search_plan along the order (the native engine that does not thrash where DTR does),
  /// with at most this many search rounds (0: the stage is skipped). It starts from the cheapest
  /// of its own repair and the earlier stages' valid plans that follow the order (start_plans).
  std::size_t lifetime_rounds = 200;
  /// With a time limit: the lifetime search's share of the time left when it starts, and, when a
  /// MILP follows, its refinement's share before the MILP.
  double lifetime_fraction = 0.3;
  /// The order as a decision beyond whole orders: after the portfolio along each order,
  /// free_order_plan (copies of values re-ordered by Serenity, then the lifetime search along
  /// that order), for the time the orders leave (at least one order's share), unless a plan
  /// recomputes nothing. Its plan wins when it is the cheapest; it reaches budgets below every
  /// order's peak where no order has a plan. cost_bound and `optimal` then hold over every plan.
  bool free_order = false;
  /// HiRemate (default hiremate_options) on graphs with training roles.
  bool hiremate = true;
  /// With a time limit and a MILP backend: HiRemate's share of the time left when it starts (the
  /// MILP gets the rest); without a backend it may use all of it.
  double hiremate_fraction = 0.3;
  /// Options of the HiRemate stage, checked before any stage runs. remat_plan sets its time_limit
  /// (the share above), its threads (solver.threads) and heuristic_start = false (the heuristics
  /// stage has run them on the whole graph).
  hiremate_options hiremate_stage_options;
  /// Checkmate: the full solve after its large-neighbourhood search runs when at least this much
  /// time is left (checkmate_options::min_full_solve_time).
  std::chrono::duration<double> min_full_solve_time{2.0};
  /// Checkmate's cap on the model's estimated memory (checkmate_options::max_bytes).
  std::uint64_t max_bytes = default_max_bytes();
  /// A ladder of budgets, so that a looser budget never gets a dearer plan. With N > 0, the
  /// portfolio first runs at each ladder budget below `budget` (j/N of ladder_peak, j = 1 .. N-1,
  /// those no plan is known to be unable to meet), lowest first, each run offered the plan of the
  /// one below; then at `budget`, offered the last. Without a time limit the plan at any budget is
  /// then no dearer than the plan remat_plan returns at any ladder budget below it, by
  /// construction. It costs up to N - 1 more portfolio runs; with a time limit the ladder gets at
  /// most half of it. 0: no ladder.
  std::size_t ladder_steps = 0;
  /// The peak the ladder's budgets are fractions of (bytes); 0: the peak without recomputation
  /// along the first input order. j/N x peak is computed as the tool computes "P%" of its reference
  /// peak, so the tool's budgets at multiples of 100/N percent are ladder budgets.
  std::int64_t ladder_peak = 0;
};

namespace detail {

/// More ladder steps than this would only repeat budgets a byte apart.
inline constexpr std::size_t max_ladder_steps = 1000;

/// Throws option_error naming the field of remat_plan_options that is out of range.
template <class Backend>
void check_remat_plan_options(const remat_plan_options<Backend>& o) {
  auto share = [](double f, const char* field) {
    if (!(f >= 0 && f <= 1)) throw option_error("remat_plan", field, "must be a share of the time left, in [0, 1]");
  };
  share(o.lifetime_fraction, "lifetime_fraction");
  share(o.hiremate_fraction, "hiremate_fraction");
  if (!(o.min_full_solve_time.count() >= 0)) throw option_error("remat_plan", "min_full_solve_time", "must be >= 0 seconds");
  if (o.ladder_steps > max_ladder_steps) throw option_error("remat_plan", "ladder_steps", "must be at most " + std::to_string(max_ladder_steps));
  if (o.ladder_peak < 0) throw option_error("remat_plan", "ladder_peak", "must be >= 0 bytes (0: the peak along the first order)");
  check_solver_options("remat_plan", o.solver);
  if (o.hiremate) check_hiremate_options(o.hiremate_stage_options);
}

/// Forwards a stage's reports (Checkmate's, the lifetime search's) to remat_plan's observer: times
/// shifted to the portfolio's call, phases prefixed with the stage, and only incumbents better than
/// what the observer has seen, as the stage finds them (so the anytime profile does not wait for
/// the stage to end).
struct remat_plan_forwarder {
  observer_ref to;
  double offset = 0;
  double* reported = nullptr;  // the best cost reported so far (shared with the portfolio)
  std::string_view stage;
  void on_incumbent(double seconds, double value, double bound) {
    if (value >= *reported) return;
    *reported = value;
    to.on_incumbent(offset + seconds, value, bound);
  }
  void on_bound(double seconds, double bound) { to.on_bound(offset + seconds, bound); }
  void on_phase(double seconds, std::string_view phase) {
    const std::string p = std::string(stage) + ": " + std::string(phase);
    to.on_phase(offset + seconds, p);
  }
};

/// The rule that ended a portfolio's run, and its words for the message.
struct run_end {
  remat_end_rule rule = remat_end_rule::none;
  std::string text;

  static run_end time_limit() { return {remat_end_rule::time_limit, "the time limit"}; }
};

/// The portfolio's state: the best valid plan, the start plans for the MILP, what each stage did.
template <class Backend>
class remat_portfolio {
 public:
  /// `reported`: the best cost the observer has seen (shared by the portfolios of several orders).
  /// `seed`: a plan to offer before any stage (the ladder's plan at a lower budget), or null.
  remat_portfolio(const memory_graph& g, std::int64_t budget, const remat_plan_options<Backend>& o, const call_deadline& deadline,
                  std::vector<std::size_t> order, double& reported, const remat_result* seed)
      : g_(g), budget_(budget), o_(o), deadline_(deadline), order_(std::move(order)), reported_(reported), seed_(seed) {}

  remat_result run() {
    if (seed_) offer(*seed_, seed_->stats.method.starts_with("ladder") ? seed_->stats.method : "ladder: " + seed_->stats.method);
    heuristics();
    dtr();
    eviction();
    lifetime();
    hiremate();
    if constexpr (milp_backend<Backend>) {
      refine_before_milp();
      milp();
    }
    refine();
    return finish();
  }

 private:
  static constexpr bool has_milp = milp_backend<Backend>;

  /// Whether the time limit has passed; remembers that it stopped something.
  bool out_of_time() {
    if (!deadline_.passed()) return false;
    stopped_ = true;
    return true;
  }

  /// Takes r's plan when the simulator finds it valid, within the budget and cheaper than the best
  /// so far (ties: the earlier candidate); keeps it as a MILP start when it follows the order.
  void offer(const remat_result& r, std::string method) {
    ++tried_;
    if (!has_solution(r.status)) return;
    plan_simulation sim;
    if (!check_plan(g_, r.plan, &sim).valid || sim.peak_bytes > budget_) {
      ++rejected_;
      return;
    }
    ++valid_;
    // (Heuristics often return the same plan: each start costs the lifetime search a conversion
    // and Checkmate an encoding of the model.)
    if (first_computation_order(r.plan, g_.size()) == order_ && std::find(starts_.begin(), starts_.end(), r.plan) == starts_.end())
      starts_.push_back(r.plan);
    if (found_ && !(sim.total_cost < best_.total_cost - 1e-9 * std::max(1.0, std::abs(best_.total_cost)))) return;
    found_ = true;
    refine_stalled_ = 0;
    best_ = r;
    take_simulated_figures(best_, sim);
    method_ = std::move(method);
    best_seconds_ = deadline_.elapsed();
    // (Checkmate's and the lifetime search's incumbents reach the observer through
    // remat_plan_forwarder as they are found.)
    if (reported_ == std::numeric_limits<double>::infinity() || sim.total_cost < reported_ - 1e-9 * std::max(1.0, std::abs(reported_))) {
      reported_ = sim.total_cost;
      o_.solver.observer.on_incumbent(best_seconds_, sim.total_cost, std::numeric_limits<double>::quiet_NaN());
    }
  }

  void heuristics() {
    if (out_of_time()) return;
    o_.solver.observer.on_phase(deadline_.elapsed(), "heuristics");
    const strategy_input in = prepare_strategy(g_, forward_mask(g_), "remat_plan");
    std::vector<remat_heuristic> hs = o_.heuristics.heuristics;
    if (hs.empty()) hs.assign(all_remat_heuristics.begin(), all_remat_heuristics.end());
    for (auto h : hs) {
      if (out_of_time()) return;
      offer(run_heuristic_on(g_, in, h, budget_, o_.heuristics, std::chrono::steady_clock::now()), "heuristic:" + std::string(to_string(h)));
    }
  }

  void dtr() {
    if (out_of_time()) return;
    o_.solver.observer.on_phase(deadline_.elapsed(), "dtr");
    const std::vector<dtr_heuristic> scores =
        o_.dtr_heuristics.empty() ? dtr_portfolio_scores(g_.size(), o_.dtr_exact_max_vertices) : o_.dtr_heuristics;
    const dtr_options base{.order = order_,
                           .use_spare_memory = true,
                           .max_computations = o_.dtr_max_computations ? o_.dtr_max_computations : dtr_portfolio_computations(g_.size())};
    dtr_each_score(g_, budget_, scores, base, deadline_, [&](const remat_result& r, dtr_heuristic h) {
      if (r.status == solve_status::time_limit) stopped_ = true;
      offer(r, "dtr:" + std::string(to_string(h)));
    });
  }

  void eviction() {
    if (!o_.eviction_greedy || out_of_time()) return;
    o_.solver.observer.on_phase(deadline_.elapsed(), "eviction-greedy");
    for (auto& [plan, name] : eviction_start_plans(g_, order_, budget_, deadline_)) {
      remat_result r;
      r.status = solve_status::feasible;  // offer() simulates it: valid and within the budget by construction
      r.plan = std::move(plan);
      offer(r, name);
    }
  }

  void lifetime() {
    if (o_.lifetime_rounds == 0 || out_of_time()) return;
    std::optional<double> limit;
    if (deadline_.limited()) limit = std::max(0.0, deadline_.left()) * o_.lifetime_fraction;
    const remat_result r = run_lifetime_search(0, starts_, limit);
    if (r.status == solve_status::time_limit) stopped_ = true;
    offer(r, "lifetime-search");
  }

  /// One run of the lifetime search along the order from `starts`, its incumbents forwarded to the
  /// observer as they are found; `seconds` limits it (none: its counted rounds only).
  remat_result run_lifetime_search(std::uint64_t seed, std::vector<execution_plan> starts, std::optional<double> seconds,
                                   std::size_t depth = lifetime_search_options{}.max_recompute_depth) {
    o_.solver.observer.on_phase(deadline_.elapsed(), "lifetime-search");
    lifetime_search_options l{
        .order = order_, .max_rounds = o_.lifetime_rounds, .seed = seed, .max_recompute_depth = depth, .start_plans = std::move(starts)};
    if (seconds) l.solver.time_limit = std::chrono::duration<double>(*seconds);
    remat_plan_forwarder fw{o_.solver.observer, deadline_.elapsed(), &reported_, "lifetime-search"};
    l.solver.observer = fw;
    const auto now = std::chrono::steady_clock::now();
    return detail::lifetime_search_until(g_, budget_, l, now, detail::call_deadline(now, l.solver.time_limit), native_bound());
  }

  /// The recompute depths the refinement's runs take in turn (the cheap ones first): how deep a
  /// split recomputes inputs shapes the search's neighbourhood, and a plan the search cannot
  /// improve at one depth it often can at another.
  static constexpr std::array<std::size_t, 3> refine_depths{0, 1, 2};

  /// Whether the refinement can run: a time limit, the lifetime search on, and a plan to start from.
  bool refinable() const {
    return deadline_.limited() && std::isfinite(deadline_.left()) && o_.lifetime_rounds > 0 && found_;
  }

  /// Before the MILP, the lifetime search refines for up to lifetime_fraction of the time left:
  /// on graphs where the MILP cannot improve in its time (large ones) that time would otherwise go
  /// to nobody, and the MILP starts from the refined plans.
  void refine_before_milp() {
    if (refinable()) (void)refine_for(std::max(0.0, deadline_.left()) * o_.lifetime_fraction);
  }

  /// Time the stages left (one skipped, or all done early) goes to the lifetime search, the stage
  /// that keeps improving with time. Only with a time limit: without one every stage has run to
  /// its counted end.
  void refine() {
    if (!refinable()) {
      end_ = deadline_.passed() || stopped_ ? run_end::time_limit() : run_end{remat_end_rule::finished, "every stage finished"};
      return;
    }
    end_ = refine_for(std::max(0.0, deadline_.left()));
  }

  /// The lifetime search again from the best plans along the order, with a new seed and the next
  /// of refine_depths each run, until a run at every depth in a row finds nothing cheaper, the
  /// best plan meets the native bound, or `seconds` or the limit pass; returns the rule that ended it.
  /// The count of stalled runs carries over from the refinement before the MILP (offer() resets it
  /// when any stage improves), so a MILP that found nothing does not start the cycle again.
  run_end refine_for(double seconds) {
    const double native = native_bound();
    const double until = deadline_.elapsed() + seconds;
    const auto left = [&] { return std::min(deadline_.left(), until - deadline_.elapsed()); };
    for (;;) {
      if (best_.total_cost <= native * (1 + 1e-9)) return {remat_end_rule::bound_met, "the best plan meets the cost bound"};
      if (refine_stalled_ >= refine_depths.size())
        return {remat_end_rule::stalled, "every stage stalled with " + seconds_left_text() + " left"};
      if (out_of_time() || left() < min_refine_seconds) return run_end::time_limit();
      const std::uint64_t seed = ++refine_runs_;
      const std::size_t depth = refine_depths[(seed - 1) % refine_depths.size()];
      const double before = best_.total_cost;
      const remat_result r = run_lifetime_search(seed, starts_with_best(), left(), depth);
      offer(r, "lifetime-search");
      if (best_.total_cost < before - 1e-9 * std::max(1.0, std::abs(before))) continue;
      if (r.status == solve_status::time_limit || left() < min_refine_seconds) return run_end::time_limit();
      ++refine_stalled_;
    }
  }

  /// The lifetime search's starts with the best plan first when it follows the order (offer() has
  /// usually kept it among the starts already).
  std::vector<execution_plan> starts_with_best() const {
    std::vector<execution_plan> starts = starts_;
    if (first_computation_order(best_.plan, g_.size()) == order_) {
      if (auto at = std::find(starts.begin(), starts.end(), best_.plan); at != starts.end())
        std::rotate(starts.begin(), at, at + 1);
      else
        starts.insert(starts.begin(), best_.plan);
    }
    return starts;
  }

  /// The native bound on the plans along the order (infinity when a step cannot fit).
  double native_bound() {
    if (!native_bound_) native_bound_ = cost_lower_bound_along(g_, budget_, order_);
    return *native_bound_;
  }

  std::string seconds_left_text() const {
    const double left = std::max(0.0, deadline_.left());
    char text[32];
    std::snprintf(text, sizeof text, "%.1f s", left);
    return text;
  }

  /// Below this much time left the refinement does not start a run (it would only set up).
  static constexpr double min_refine_seconds = 0.05;

  void hiremate() {
    if (!o_.hiremate || !g_.has_training_roles()) return;
    if (out_of_time()) return;
    hiremate_options h = o_.hiremate_stage_options;
    h.threads = o_.solver.threads;
    h.heuristic_start = false;  // the heuristics stage has run them on the whole graph already
    if (deadline_.limited()) h.time_limit = std::chrono::duration<double>(std::max(0.0, deadline_.left()) * (has_milp ? o_.hiremate_fraction : 1.0));
    o_.solver.observer.on_phase(deadline_.elapsed(), "hiremate");
    offer(hiremate_plan(g_, budget_, h), "hiremate");
  }

  void milp() {
    // Not a copy of Checkmate's own checks (solve_in_time_left, the backends' expired_before_start):
    // those come after its start plans, its model-size estimate and (unless the limit has passed)
    // its model build, for a solve that cannot run, and its answer would then report that model's
    // size. Skipping here builds nothing (tests/remat/remat_plan.cpp: variables == 0).
    if (deadline_.limited() && !deadline_.backend_time_left()) {
      stopped_ = true;
      milp_note_ = "checkmate-milp: no time left";
      return;
    }
    o_.solver.observer.on_phase(deadline_.elapsed(), "checkmate-milp");
    remat_plan_forwarder fw{o_.solver.observer, deadline_.elapsed(), &reported_, "checkmate-milp"};
    checkmate_options<Backend> co{.backend = o_.backend, .solver = o_.solver, .order = order_, .start_plans = std::move(starts_)};
    co.solver.time_limit = deadline_.remaining();
    co.solver.observer = fw;
    co.min_full_solve_time = o_.min_full_solve_time;
    co.max_bytes = o_.max_bytes;
    milp_ = checkmate_milp_plan(g_, budget_, co);
    offer(*milp_, "checkmate-milp");
    if (milp_->status == solve_status::time_limit) stopped_ = true;
    milp_note_ = "checkmate-milp: " + std::string(to_string(milp_->status));
    if (!milp_->message.empty()) milp_note_ += " (" + milp_->message + ")";
  }

  remat_result finish() {
    remat_result res;
    const double native = native_bound();
    if (found_) {
      res = std::move(best_);
      res.status = solve_status::feasible;
      res.cost_bound.reset();
      const double tol = 1e-9 * std::max(1.0, std::abs(res.total_cost));
      if (milp_) {
        // Checkmate's bound holds for the plans along the order; it is no bound on a cheaper plan
        // from elsewhere (a heuristic's plan need not follow the order).
        if (milp_->cost_bound && *milp_->cost_bound <= res.total_cost + tol) res.cost_bound = milp_->cost_bound;
        // Proven: no plan along the order costs less than Checkmate's optimum.
        if (milp_->status == solve_status::optimal && res.total_cost <= milp_->total_cost + tol) res.status = solve_status::optimal;
      }
      // The native bound along the order, under the same proviso.
      if (native <= res.total_cost + tol && (!res.cost_bound || native > *res.cost_bound)) res.cost_bound = native;
      if (res.total_cost <= native + tol) res.status = solve_status::optimal;
      // Every vertex runs at least once: a plan that recomputes nothing is optimal.
      if (res.total_cost <= g_.total_cost() * (1 + 1e-12)) res.status = solve_status::optimal;
      // A proven plan is its own bound: Checkmate's proven optimum already is (taken above); a plan
      // without recomputation, or one from off the order cheaper than that optimum, gets it here.
      if (res.status == solve_status::optimal) res.cost_bound = res.total_cost;
      res.stats.seconds_to_best = best_seconds_;
    } else {
      // The MILP's infeasibility is for the order's staged plans only: no proof for every plan.
      res.status = stopped_ ? solve_status::time_limit : solve_status::no_solution;
    }
    // The plans along the order cost at least the native bound, and the bound taken above where
    // higher (Checkmate's, or a proven plan's own cost).
    const double along = std::max(native, res.cost_bound.value_or(0.0));
    res.stats.cost_bound_per_order = {along < std::numeric_limits<double>::infinity() ? std::optional(along) : std::nullopt};
    if (milp_) res.stats.adopt_solver_stats(milp_->stats);  // the MILP's model and search, whichever plan won
    res.stats.method = found_ ? method_ : "";
    res.stats.order = std::move(order_);
    res.stats.seconds = deadline_.elapsed();
    std::string msg = found_ ? "remat_plan: " + method_ + " is the cheapest of " + std::to_string(valid_) + " valid plans (" +
                                   std::to_string(tried_) + " methods run)"
                             : "remat_plan: no plan within the budget " + std::to_string(budget_) + " from " + std::to_string(tried_) + " methods";
    if (rejected_ > 0) msg += "; " + std::to_string(rejected_) + " plan(s) rejected by the simulator";
    if (!milp_note_.empty()) msg += "; " + milp_note_;
    if (stopped_) msg += "; the time limit stopped the portfolio early";
    if (!end_.text.empty()) msg += "; ended by " + end_.text;
    res.stats.ended_by = end_.rule;
    res.message = std::move(msg);
    return res;
  }

  const memory_graph& g_;
  std::int64_t budget_;
  const remat_plan_options<Backend>& o_;
  const call_deadline& deadline_;
  std::vector<std::size_t> order_;
  remat_result best_;
  bool found_ = false;
  std::string method_;
  double best_seconds_ = 0;
  double& reported_;  // the best cost the observer has seen
  const remat_result* seed_;
  std::optional<double> native_bound_;  // cost_lower_bound_along, once computed
  std::uint64_t refine_runs_ = 0;       // the refinement's runs so far: the next one's seed
  std::size_t refine_stalled_ = 0;      // the refinement's runs in a row that found nothing cheaper
  std::vector<execution_plan> starts_;                         // valid plans that follow the order
  std::optional<remat_result> milp_;
  std::string milp_note_;
  std::size_t tried_ = 0, valid_ = 0, rejected_ = 0;
  bool stopped_ = false;  // the time limit skipped or cut a stage
  run_end end_;           // the rule that ended the run (refine())
};

/// remat_plan over its input orders: the portfolio along each (with an even share of the time
/// left, counting free_order_plan's share), the cheapest plan wins; proofs and bounds hold for the
/// union of the orders' plans only when every order has one. With one order this is the
/// portfolio's own result (plus cost_per_order). `seed` (or null) is offered to each portfolio.
template <class Backend>
remat_result remat_along_orders(const memory_graph& g, std::int64_t budget, const remat_plan_options<Backend>& o,
                                std::chrono::steady_clock::time_point t0, std::vector<std::vector<std::size_t>> orders, double& reported,
                                const remat_result* seed) {
  const call_deadline whole(t0, o.solver.time_limit);
  std::vector<remat_result> results;
  const std::size_t k_orders = orders.size();
  const std::size_t shares = k_orders + (o.free_order ? 1 : 0);
  for (std::size_t k = 0; k < k_orders; ++k) {
    std::optional<std::chrono::duration<double>> limit;
    if (whole.limited()) limit = std::chrono::duration<double>(whole.elapsed() + std::max(0.0, whole.left()) / static_cast<double>(shares - k));
    // (Deadlines counted from the call's start: the observer's seconds stay the call's.)
    const call_deadline share(t0, limit);
    results.push_back(remat_portfolio<Backend>(g, budget, o, share, std::move(orders[k]), reported, seed).run());
  }
  std::optional<std::size_t> winner;
  bool every_order_proven = true, stopped = false;
  double bound = std::numeric_limits<double>::infinity();  // over the plans along every order
  std::vector<std::optional<remat_stats::order_cost>> costs;
  std::vector<std::optional<double>> bounds;
  for (std::size_t k = 0; k < k_orders; ++k) {
    const remat_result& r = results[k];
    costs.push_back(has_solution(r.status) ? std::optional(remat_stats::order_cost{r.total_cost, r.overhead}) : std::nullopt);
    // The portfolio's bound on the plans along order k (finish() leaves exactly one; none: no
    // plan fits along it).
    const std::optional<double> along = r.stats.cost_bound_per_order.front();
    bounds.push_back(along);
    every_order_proven = every_order_proven && r.status == solve_status::optimal;
    bound = std::min(bound, along.value_or(std::numeric_limits<double>::infinity()));
    stopped = stopped || r.status == solve_status::time_limit;
    if (has_solution(r.status) &&
        (!winner || r.total_cost < results[*winner].total_cost - 1e-9 * std::max(1.0, std::abs(results[*winner].total_cost))))
      winner = k;
  }
  const remat_end_rule last_end = results.back().stats.ended_by;  // the last order's portfolio ended the run
  remat_result res = std::move(results[winner.value_or(0)]);
  res.stats.ended_by = last_end;
  res.stats.cost_per_order = std::move(costs);
  res.stats.cost_bound_per_order = std::move(bounds);
  res.stats.seconds = whole.elapsed();
  if (!winner) {
    if (k_orders == 1) return res;  // the portfolio's own verdict: infeasible, time_limit or no_solution
    res.status = stopped ? solve_status::time_limit : solve_status::no_solution;
    res.message = "remat_plan: no plan along any of the " + std::to_string(k_orders) + " input orders; the first: " + res.message;
    return res;
  }
  const bool recomputes_nothing = res.total_cost <= g.total_cost() * (1 + 1e-12);
  // The winner is proven cheapest among all the orders' plans only when every order's search
  // proved its own optimum; likewise a bound must hold along every order.
  res.status = recomputes_nothing || every_order_proven ? solve_status::optimal : solve_status::feasible;
  res.cost_bound.reset();
  if (res.status == solve_status::optimal)
    res.cost_bound = res.total_cost;
  else if (bound <= res.total_cost * (1 + 1e-9))
    res.cost_bound = bound;
  if (k_orders > 1)
    res.message = "remat_plan: the cheapest plan follows input order " + std::to_string(*winner + 1) + " of " + std::to_string(k_orders) + "; " +
                  res.message;
  return res;
}

/// remat_along_orders, then (options.free_order) free_order_plan for the time left, unless a
/// plan recomputes nothing (nothing is cheaper): its plan wins when cheaper (or when no order has
/// one). The bound and the proof then hold over every plan: cost_bound is free_order_plan's
/// (remat_cost_lower_bound over every plan), `optimal` needs the plan to meet it.
/// cost_per_order and cost_bound_per_order get a last entry for it. `seed`: a valid plan within
/// the budget offered first to every portfolio (no plan returned is dearer), or null; `reported`:
/// the best cost the observer has seen before this call.
template <class Backend>
remat_result remat_over_orders(const memory_graph& g, std::int64_t budget, const remat_plan_options<Backend>& o,
                               std::chrono::steady_clock::time_point t0, std::vector<std::vector<std::size_t>> orders,
                               const remat_result* seed, double reported) {
  remat_result res = remat_along_orders(g, budget, o, t0, std::move(orders), reported, seed);
  if (!o.free_order || res.status == solve_status::infeasible) return res;
  const call_deadline whole(t0, o.solver.time_limit);
  const auto tolerance = [](double cost) { return 1e-9 * std::max(1.0, std::abs(cost)); };
  if (has_solution(res.status) && res.total_cost <= g.total_cost() + tolerance(g.total_cost())) {
    // Every vertex runs at least once: no plan, whatever its order, is cheaper.
    res.stats.cost_per_order.push_back(remat_stats::order_cost{res.total_cost, res.overhead});
    res.stats.cost_bound_per_order.push_back(res.total_cost);
    res.message += "; free-order skipped: the plan recomputes nothing";
    return res;
  }
  o.solver.observer.on_phase(whole.elapsed(), "free-order");
  free_order_options fo;
  fo.solver.time_limit = o.solver.time_limit;  // counted from t0: what the orders left
  remat_result free = free_order_on(g, budget, fo, t0);
  const bool found = has_solution(free.status);
  res.stats.ended_by = whole.passed() || free.status == solve_status::time_limit ? remat_end_rule::time_limit
                       : free.status == solve_status::optimal                    ? remat_end_rule::bound_met
                                                                                 : remat_end_rule::finished;
  res.stats.cost_per_order.push_back(found ? std::optional(remat_stats::order_cost{free.total_cost, free.overhead}) : std::nullopt);
  res.stats.cost_bound_per_order.push_back(free.cost_bound);
  res.stats.seconds = whole.elapsed();
  const bool cheaper = found && (!has_solution(res.status) || free.total_cost < res.total_cost - tolerance(res.total_cost));
  if (cheaper) {
    if (free.total_cost < reported) o.solver.observer.on_incumbent(free.stats.seconds_to_best, free.total_cost, std::numeric_limits<double>::quiet_NaN());
    free.stats.cost_per_order = std::move(res.stats.cost_per_order);
    free.stats.cost_bound_per_order = std::move(res.stats.cost_bound_per_order);
    free.stats.method = "free-order";
    free.stats.ended_by = res.stats.ended_by;
    free.stats.seconds = whole.elapsed();
    free.message = "remat_plan: the cheapest plan is free_order_plan's (" + free.message + ")";
    res = std::move(free);
  } else if (!has_solution(res.status)) {
    if (free.status == solve_status::time_limit) res.status = solve_status::time_limit;
    return res;
  } else {
    res.cost_bound = free.cost_bound;
  }
  // A plan along an order may be proven cheapest along the orders, not over every plan.
  res.status = res.cost_bound && res.total_cost <= *res.cost_bound + tolerance(res.total_cost) ? solve_status::optimal : solve_status::feasible;
  return res;
}

/// The ladder's budgets below `budget`, lowest first: j/steps x peak for j = 1 .. steps - 1, in
/// the tool's arithmetic for "P%" budgets, without repeats and without those below what every
/// plan needs.
inline std::vector<std::int64_t> ladder_budgets(const memory_graph& g, std::int64_t budget, std::size_t steps, std::int64_t peak) {
  std::vector<std::int64_t> rungs;
  for (std::size_t j = 1; j < steps; ++j) {
    const auto b = static_cast<std::int64_t>(static_cast<double>(j) / static_cast<double>(steps) * static_cast<double>(peak));
    if (b >= budget) break;
    if ((rungs.empty() || b > rungs.back()) && !budget_below_lower_bound(g, b)) rungs.push_back(b);
  }
  return rungs;
}

/// remat_over_orders at each ladder budget below `budget`, lowest first, each run offered the
/// cheapest plan so far, then at `budget`. Every rung's plan fits the budgets above it, and a
/// portfolio returns its seed unless it finds something cheaper, so the plans along the ladder never
/// get dearer. With a time limit the rungs share half of it (the rest is the budget's own); the
/// observer hears of each cheaper plan (it fits `budget` too), not of bounds at other budgets.
template <class Backend>
remat_result remat_on_ladder(const memory_graph& g, std::int64_t budget, const remat_plan_options<Backend>& o,
                             std::chrono::steady_clock::time_point t0, const std::vector<std::vector<std::size_t>>& orders) {
  const std::int64_t peak = o.ladder_peak > 0 ? o.ladder_peak : simulate_order(g, orders.front()).peak_bytes;
  // At or above the peak the plan recomputes nothing: no rung could be cheaper.
  const std::vector<std::int64_t> rungs = budget < peak ? ladder_budgets(g, budget, o.ladder_steps, peak) : std::vector<std::int64_t>{};
  const call_deadline whole(t0, o.solver.time_limit);
  const double ladder_end = whole.limited() ? whole.elapsed() + std::max(0.0, whole.left()) / 2 : 0;
  remat_plan_options<Backend> rung_options = o;
  rung_options.solver.observer = observer_ref{};
  std::optional<remat_result> carried;
  std::optional<std::int64_t> carried_budget;
  double reported = std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < rungs.size(); ++k) {
    if (whole.limited()) {
      if (whole.passed() || whole.elapsed() >= ladder_end) break;
      rung_options.solver.time_limit =
          std::chrono::duration<double>(whole.elapsed() + (ladder_end - whole.elapsed()) / static_cast<double>(rungs.size() - k));
    }
    o.solver.observer.on_phase(whole.elapsed(), "ladder " + std::to_string(rungs[k]));
    remat_result r = remat_over_orders(g, rungs[k], rung_options, t0, orders, carried ? &*carried : nullptr, reported);
    if (!has_solution(r.status)) continue;
    if (r.total_cost < reported) {
      reported = r.total_cost;
      o.solver.observer.on_incumbent(whole.elapsed(), r.total_cost, std::numeric_limits<double>::quiet_NaN());
    }
    carried = std::move(r);
    carried_budget = rungs[k];
  }
  remat_result res = remat_over_orders(g, budget, o, t0, orders, carried ? &*carried : nullptr, reported);
  res.message += "; ladder: " + std::to_string(rungs.size()) + " budget(s) below";
  if (carried) res.message += ", the plan at " + std::to_string(*carried_budget) + " bytes offered";
  return res;
}

}  // namespace detail

/// The cheapest plan within `budget` the library finds for the graph: a portfolio along one input
/// order (options.order, else the lowest-peak order of Kahn, DFS and greedy), in this order:
/// (1) every heuristic (best_heuristic_plan's), (2) dtr_plan along the order with each score
/// (options.dtr_heuristics, each at most options.dtr_max_computations computations), (3)
/// Checkmate's eviction greedy along the order (options.eviction_greedy), (4)
/// lifetime_search_plan along the order (options.lifetime_rounds rounds), (5) on graphs with
/// training roles hiremate_plan, (6) with a milp_backend, checkmate_milp_plan along the order
/// started from every valid plan of (1)-(5) whose first computations follow the order, for the
/// time left. The cheapest plan the simulator accepts (peak <= budget) is returned (ties: the earlier
/// one); stats.method names it ("heuristic:<name>", "dtr:<name>", "eviction greedy <policy>",
/// "lifetime-search", "hiremate", "checkmate-milp").
/// Status: `optimal` when the plan recomputes nothing, or when Checkmate proved its plan optimal
/// and the returned plan is no dearer (no plan along the input order is cheaper); `feasible`
/// otherwise; `infeasible` when the budget is below what every plan needs (a vertex with its
/// inputs, the outputs); `time_limit` when the limit stopped the stages before any plan;
/// `no_solution` when every stage ran and none found a plan. cost_bound: a proven lower bound on
/// the cost of the plans along the order: the higher of remat_cost_lower_bound's and Checkmate's
/// (its optimum when proven, else its LP or search bound) when not above the returned plan's
/// cost; the plan's own cost when it recomputes nothing.
/// With options.more_orders the portfolio runs along each order in turn (the time left shared
/// evenly) and the cheapest plan wins; stats.order is its order; `optimal` and cost_bound then
/// need a proof (a bound) along every order. With options.free_order, free_order_plan runs last
/// (one more share of the time; skipped when a plan recomputes nothing) and its plan wins when
/// cheaper ("free-order"); cost_bound and `optimal` then hold over every plan, any order
/// (free_order_plan's bound). stats.cost_per_order lists each order's cheapest plan (cost and
/// overhead; one entry without more_orders), then free_order_plan's when options.free_order;
/// stats.cost_bound_per_order a proven bound along each order (remat_cost_lower_bound's, or
/// Checkmate's when higher), then over every plan.
/// stats.ended_by: the rule that ended the run (that of the last order's portfolio; with
/// options.free_order, free_order_plan's: time_limit, bound_met when it proved its plan, else
/// finished). Deterministic without a time limit (as its stages are). Each better plan goes to
/// options.solver.observer.on_incumbent.
/// Complexity: that of the stages, once per order: O(n (n + m)) per DTR eviction at most,
/// HiRemate's hierarchy, and Checkmate's MILP (exponential worst case: give a time limit on large
/// graphs).
/// Throws: std::invalid_argument on a negative budget; option_error naming the field of an option
/// out of range (lifetime_fraction, hiremate_fraction, min_full_solve_time, ladder_steps, ladder_peak, a NaN solver.relative_gap, and hiremate_stage_options
/// as check_hiremate_options names them); invalid_order naming the entry when
/// options.order or one of options.more_orders is not a topological order; graph_error when a forward node reads a backward
/// node; what make_memory_graph and hiremate_plan throw.
template <class G, class Backend, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] remat_result remat_plan(const G& graph, std::int64_t budget, const remat_plan_options<Backend>& options, const Maps&... maps) {
  const auto t0 = std::chrono::steady_clock::now();
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  if (budget < 0) throw std::invalid_argument("remat_plan: negative budget");
  detail::check_remat_plan_options(options);
  std::vector<std::size_t> order = options.order ? *options.order : detail::checkmate_best_basic_order(g);
  detail::check_checkmate_order(g, order, "remat_plan");
  if (auto why = detail::budget_below_lower_bound(g, budget)) {
    remat_result res;
    res.status = solve_status::infeasible;
    res.message = "remat_plan: " + *why;
    res.stats.order = std::move(order);
    res.stats.seconds = detail::seconds_since(t0);
    return res;
  }
  for (const auto& more : options.more_orders) detail::check_checkmate_order(g, more, "remat_plan (more_orders)");
  std::vector<std::vector<std::size_t>> orders{std::move(order)};
  orders.insert(orders.end(), options.more_orders.begin(), options.more_orders.end());
  if (options.ladder_steps > 0) return detail::remat_on_ladder(g, budget, options, t0, orders);
  return detail::remat_over_orders(g, budget, options, t0, std::move(orders), nullptr, std::numeric_limits<double>::infinity());
}

#ifdef MEMSCHED_SEPARATE_COMPILATION
namespace detail {
// The portfolio without a MILP backend (what `remat_plan(graph, budget)` runs) is compiled once, in
// memsched::compiled (src/memsched.cpp); a TU calling it compiles only the conversion of its graph.
// Portfolios with a backend depend on the backend's type and stay templates in the caller's TU.
extern template remat_result remat_over_orders<no_solver>(const memory_graph&, std::int64_t, const remat_plan_options<no_solver>&,
                                                          std::chrono::steady_clock::time_point,
                                                          std::vector<std::vector<std::size_t>>, const remat_result*, double);
extern template remat_result remat_on_ladder<no_solver>(const memory_graph&, std::int64_t, const remat_plan_options<no_solver>&,
                                                        std::chrono::steady_clock::time_point, const std::vector<std::vector<std::size_t>>&);
}  // namespace detail
#endif

/// remat_plan with default options for the backend given as template argument (default: no MILP
/// stage): `remat_plan(graph, budget)`, `remat_plan<cbc_backend>(graph, budget)` (no time limit:
/// use the MILP with small graphs).
template <remat_plan_backend Backend = no_solver, class G>
  requires memory_graph_source<G>
[[nodiscard]] remat_result remat_plan(const G& graph, std::int64_t budget) {
  return remat_plan(graph, budget, remat_plan_options<Backend>{});
}

}  // namespace memsched
