// remat_plan (remat/remat_plan.hpp): the portfolio's plan re-simulated within the budget and no
// dearer than any of its stages run on their own, the same plan through three graph types, a
// training chain by hand, brute force (any plan and the staged plans of the order), the status
// rules, the time limit and the observer. With CBC: remat_plan_solver.cpp.

#include <memsched/graph/json_io.hpp>
#include <memsched/graph/random_layered.hpp>
#include <memsched/order/kahn.hpp>
#include <memsched/order/serenity.hpp>
#include <memsched/remat/best_heuristic.hpp>
#include <memsched/remat/checkmate.hpp>
#include <memsched/remat/dtr.hpp>
#include <memsched/remat/hiremate.hpp>
#include <memsched/remat/lifetime_search.hpp>
#include <memsched/remat/remat_plan.hpp>
#include <memsched/remat/training_graph.hpp>
#include <memsched/sim/simulate_plan.hpp>

#include "../support/brute_force_plans.hpp"
#include "../support/eviction_greedy_plans.hpp"
#include "../support/observer_recorder.hpp"
#include "../support/random_cases.hpp"
#include "../support/random_dag.hpp"
#include "../support/remat_plan_checks.hpp"

#include "../support/training_chain.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

using namespace memsched;
using namespace memsched::testing;

namespace {

/// The chain of support/training_chain.hpp with its roles. The no-remat peak is 50; at 40 one
/// recomputation (of x0) is needed and enough (cost 8), at 30 three (cost 10: x0 and x1 for g1, x0
/// again for g0).
memory_graph training_chain() { return training_chain_with_roles(); }

/// The cheapest cost of each stage run on its own (infinity when it finds nothing).
struct stage_costs {
  double heuristic = std::numeric_limits<double>::infinity();
  double dtr = std::numeric_limits<double>::infinity();
  double eviction = std::numeric_limits<double>::infinity();  // Checkmate's eviction greedy, every policy
  double lifetime = std::numeric_limits<double>::infinity();
  double hiremate = std::numeric_limits<double>::infinity();
};

stage_costs stages_alone(const memory_graph& g, std::int64_t budget, const std::vector<std::size_t>& order) {
  stage_costs c;
  // The lifetime search starts from the plans of the stages before it that follow the order.
  std::vector<execution_plan> starts;
  auto keep = [&](const remat_result& r) {
    if (has_solution(r.status) && r.peak_bytes <= budget && first_computation_order(r.plan, g.size()) == order) starts.push_back(r.plan);
  };
  const remat_result h = best_heuristic_plan(g, budget, best_heuristic_options{});
  if (has_solution(h.status)) c.heuristic = h.total_cost;
  for (auto each : all_remat_heuristics) keep(best_heuristic_plan(g, budget, best_heuristic_options{.heuristics = {each}}));
  for (auto d : all_dtr_heuristics) {
    const remat_result r = dtr_plan(g, budget, dtr_options{.order = order, .heuristic = d, .max_computations = 8 * g.size() + 64});
    if (has_solution(r.status)) c.dtr = std::min(c.dtr, r.total_cost);
    keep(r);
  }
  for (const remat_result& r : eviction_greedy_plans(g, order, budget)) {
    REQUIRE(r.peak_bytes <= budget);  // within the budget by construction
    c.eviction = std::min(c.eviction, r.total_cost);
    keep(r);
  }
  if (const remat_result l = lifetime_search_plan(g, budget, lifetime_search_options{.order = order, .start_plans = starts}); has_solution(l.status))
    c.lifetime = l.total_cost;
  if (g.has_training_roles()) {
    const remat_result r = hiremate_plan(g, budget, hiremate_options{.heuristic_start = false});
    if (has_solution(r.status)) c.hiremate = r.total_cost;
  }
  return c;
}

/// The stage a method name of remat_plan's stats names: "heuristic:chen" -> "heuristic",
/// "dtr:lru" -> "dtr", "eviction greedy 2" -> "eviction greedy", other names unchanged.
std::string stage_of(const std::string& method) {
  for (std::string_view stage : {"heuristic:", "dtr:", "eviction greedy "})
    if (method.starts_with(stage)) return std::string(stage.substr(0, stage.size() - 1));
  return method;
}

}  // namespace

TEST_CASE("remat_plan: a training chain by hand") {
  const memory_graph g = training_chain();
  // At the no-remat peak nothing is recomputed: optimal, whatever the stages.
  const remat_result r50 = remat_plan(g, 50);
  check_plan_of(g, r50, 50);
  CHECK(r50.status == solve_status::optimal);
  CHECK(r50.total_cost == 7);
  REQUIRE(r50.cost_bound);
  CHECK(*r50.cost_bound == 7);
  // At 40: one recomputation is the least (cost 8); without a solver the native bound proves it
  // (x0 or x1 must go while g2 runs with x0..x3 resident: remat_cost_lower_bound).
  const remat_result r40 = remat_plan(g, 40);
  check_plan_of(g, r40, 40);
  CHECK(r40.total_cost == 8);
  CHECK(r40.status == solve_status::optimal);
  REQUIRE(r40.cost_bound);
  CHECK(*r40.cost_bound == 8);
  const remat_result r30 = remat_plan(g, 30);
  check_plan_of(g, r30, 30);
  CHECK(r30.total_cost == brute_force_min_cost_plan(g, 30).cost);
  // g2 needs 30 bytes with its inputs: 29 is proven infeasible, before any stage runs.
  const remat_result r29 = remat_plan(g, 29);
  CHECK(r29.status == solve_status::infeasible);
  CHECK(r29.plan.steps.empty());
  CHECK(r29.message.find("needs 30 bytes") != std::string::npos);
  CHECK(r29.stats.method.empty());
}

TEST_CASE("remat_plan: random DAGs and training graphs, three budgets, no dearer than any stage, same plan through the graph types") {
  std::size_t graphs = 0, plans = 0, recomputing = 0, beats_heuristics = 0, proven_by_bound = 0;
  std::map<std::string, std::size_t> winners;  // by stage_of(method)
  for (std::uint64_t seed = 1; seed <= 24; ++seed) {
    const bool training = seed % 2 == 0;
    const memory_graph_data d = training ? random_training_dag(5 + seed % 5, 0.35, seed) : random_dag(9 + seed % 6, 0.3, seed);
    const memory_graph g(d);
    const dataflow_graph df = to_dataflow_graph(d);
    const typed_graph<lists_graph> lists(d);
    ++graphs;
    CAPTURE(seed);
    CAPTURE(g.size());
    const std::int64_t peak = checkpoint_all_plan(g, unlimited_budget).peak_bytes;
    const std::int64_t lb = lower_bound_of(g);
    REQUIRE(lb <= peak);
    for (double frac : {0.1, 0.5, 0.9}) {
      const std::int64_t budget = lb + static_cast<std::int64_t>(frac * static_cast<double>(peak - lb));
      CAPTURE(budget);
      const remat_result r = remat_plan(g, budget);
      const std::vector<std::size_t> order = r.stats.order;
      REQUIRE(order.size() == g.size());
      const stage_costs alone = stages_alone(g, budget, order);
      const double best_alone = std::min({alone.heuristic, alone.dtr, alone.eviction, alone.lifetime, alone.hiremate});
      if (!has_solution(r.status)) {
        // Nothing is proven below the no-remat peak without a solver: no_solution, and no stage
        // alone found a plan either.
        CHECK(r.status == solve_status::no_solution);
        CHECK(best_alone == std::numeric_limits<double>::infinity());
        continue;
      }
      ++plans;
      check_plan_of(g, r, budget);
      CHECK(r.total_cost <= best_alone + 1e-9);
      CHECK(r.total_cost == doctest::Approx(best_alone));  // the portfolio runs exactly those stages
      CHECK(r.total_cost >= g.total_cost() - 1e-9);
      if (r.overhead > 0) ++recomputing;
      if (r.total_cost < alone.heuristic - 1e-9) ++beats_heuristics;
      const std::string stage = stage_of(r.stats.method);
      ++winners[stage];
      // HiRemate's statistics come with its plan, and only with its plan.
      CHECK(r.stats.hiremate.has_value() == (stage == "hiremate"));
      // The status (no solver here): optimal exactly when nothing is recomputed or the native
      // bound along the order meets the plan; the bound is that one whenever it is not above the
      // plan's cost (a plan off the order may be cheaper).
      const double native = remat_cost_lower_bound(g, budget, cost_lower_bound_options{.order = order}).total_cost;
      const bool met = r.overhead <= 1e-12 || r.total_cost <= native + 1e-9;
      CHECK(r.status == (met ? solve_status::optimal : solve_status::feasible));
      if (native <= r.total_cost + 1e-9) {
        REQUIRE(r.cost_bound);
        CHECK(*r.cost_bound == doctest::Approx(met ? r.total_cost : native));
      }
      if (met && r.overhead > 1e-12) ++proven_by_bound;
      if (stage == "eviction greedy") {
        // eviction_greedy = false skips the stage: its plan is not returned.
        const remat_result without = remat_plan(g, budget, remat_plan_options{.eviction_greedy = false});
        check_plan_of(g, without, budget);
        CHECK(stage_of(without.stats.method) != "eviction greedy");
      }
      // The unrestricted optimum is a floor for every plan.
      if (g.size() <= 10) CHECK(brute_force_min_cost_plan(g, budget).cost <= r.total_cost + 1e-9);
      // The same plan from a dataflow_graph and from an adjacency_list<listS> with maps.
      const remat_result rd = remat_plan(df, budget);
      CHECK(rd.plan == r.plan);
      CHECK(rd.stats.method == r.stats.method);
      const remat_result rl = remat_plan(lists.graph, budget, remat_plan_options{}, lists.maps());
      CHECK(rl.plan == r.plan);
      // Deterministic.
      CHECK(remat_plan(g, budget).plan == r.plan);
    }
  }
  CHECK(graphs >= 20);
  CHECK(plans >= 40);
  CHECK(recomputing >= 15);
  CHECK(beats_heuristics >= 3);  // DTR or HiRemate must matter somewhere, or the cross-check is empty
  const std::set<std::string> stages{"heuristic", "dtr", "eviction greedy", "lifetime-search", "hiremate"};
  std::string tally;
  for (const auto& [stage, count] : winners) {
    tally += stage + " " + std::to_string(count) + "; ";
    CHECK_MESSAGE(stages.contains(stage), stage);
  }
  MESSAGE("winners: " << tally << "plans that recompute proven optimal by the native bound: " << proven_by_bound);
  CHECK(winners["eviction greedy"] >= 1);  // the eviction greedy's plan is the cheapest somewhere: its stage is cross-checked
}

TEST_CASE("remat_plan: options (an order, chosen stages), bad input") {
  const memory_graph g = training_chain();
  const std::vector<std::size_t> order{0, 1, 2, 3, 4, 5, 6};
  const remat_result r = remat_plan(g, 40, remat_plan_options{.order = order, .dtr_heuristics = {dtr_heuristic::lru}, .hiremate = false});
  check_plan_of(g, r, 40);
  CHECK(r.stats.order == order);
  // Only the heuristics that were asked for run.
  const remat_result only_all = remat_plan(
      g, 40, remat_plan_options{.heuristics = {.heuristics = {remat_heuristic::checkpoint_all}}, .dtr_heuristics = {dtr_heuristic::lru}, .hiremate = false});
  check_plan_of(g, only_all, 40);
  CHECK(only_all.stats.method == "dtr:lru");  // checkpoint-all keeps every forward value: 50 bytes
  CHECK_THROWS_AS((void)remat_plan(g, -1), std::invalid_argument);
  CHECK_THROWS_AS((void)remat_plan(g, 40, remat_plan_options{.order = std::vector<std::size_t>{1, 0, 2, 3, 4, 5, 6}}), invalid_order);
  CHECK_THROWS_AS((void)remat_plan(g, 40, remat_plan_options{.order = std::vector<std::size_t>{0, 1, 2}}), invalid_order);
  // Shares of the time left and the full solve's minimum time, each named when out of range.
  remat_plan_options<> bad;
  bad.lifetime_fraction = 1.5;
  CHECK_THROWS_WITH_AS((void)remat_plan(g, 40, bad), doctest::Contains("lifetime_fraction"), option_error);
  bad = {};
  bad.hiremate_fraction = std::nan("");
  CHECK_THROWS_WITH_AS((void)remat_plan(g, 40, bad), doctest::Contains("hiremate_fraction"), option_error);
  bad = {};
  bad.hiremate_fraction = -0.1;
  CHECK_THROWS_WITH_AS((void)remat_plan(g, 40, bad), doctest::Contains("hiremate_fraction"), option_error);
  bad = {};
  bad.min_full_solve_time = std::chrono::duration<double>(-1);
  CHECK_THROWS_WITH_AS((void)remat_plan(g, 40, bad), doctest::Contains("min_full_solve_time"), option_error);
  bad = {};
  bad.hiremate_stage_options.levels = 7;  // HiRemate's own check, before any stage runs
  CHECK_THROWS_WITH_AS((void)remat_plan(g, 40, bad), doctest::Contains("levels"), option_error);
  bad.hiremate = false;  // a stage that does not run is not checked
  check_plan_of(g, remat_plan(g, 40, bad), 40);
  bad = {};
  bad.ladder_steps = memsched::detail::max_ladder_steps + 1;
  CHECK_THROWS_WITH_AS((void)remat_plan(g, 40, bad), doctest::Contains("ladder_steps"), option_error);
  bad = {};
  bad.ladder_peak = -1;
  CHECK_THROWS_WITH_AS((void)remat_plan(g, 40, bad), doctest::Contains("ladder_peak"), option_error);
  bad = {};
  bad.solver.relative_gap = std::numeric_limits<double>::quiet_NaN();  // at the start, not inside the MILP stage
  CHECK_THROWS_WITH_AS((void)remat_plan(g, 40, bad), doctest::Contains("remat_plan: solver.relative_gap"), option_error);
  bad = {};
  bad.lifetime_fraction = 0;  // the ends of the range are shares too
  bad.hiremate_fraction = 1;
  check_plan_of(g, remat_plan(g, 40, bad), 40);
}

TEST_CASE("remat_plan: more input orders: the cheapest of the orders' portfolios, each order's cost, TDI 0 where an order fits") {
  std::size_t cases = 0, plans = 0, second_wins = 0, fits_only_free = 0;
  for (std::uint64_t seed = 1; seed <= 16; ++seed) {
    const memory_graph_data d = seed % 2 != 0 ? random_dag(10 + seed % 5, 0.3, seed) : random_training_dag(5 + seed % 4, 0.35, seed);
    const memory_graph g(d);
    CAPTURE(seed);
    const order_result kahn = kahn_order(g);
    const order_result best = serenity_order(g);
    REQUIRE(best.status == solve_status::optimal);
    const std::int64_t lb = lower_bound_of(g);
    // Below the best order's peak (recomputation needed along both orders) and at it (the best
    // order alone fits: no recomputation).
    for (std::int64_t budget : {lb + (best.peak_bytes - lb) / 3, lb + 2 * (best.peak_bytes - lb) / 3, best.peak_bytes}) {
      CAPTURE(budget);
      ++cases;
      const remat_result along_kahn = remat_plan(g, budget, remat_plan_options{.order = kahn.order});
      const remat_result along_best = remat_plan(g, budget, remat_plan_options{.order = best.order});
      const remat_result r = remat_plan(g, budget, remat_plan_options{.order = kahn.order, .more_orders = {best.order}});
      REQUIRE(r.stats.cost_per_order.size() == 2);
      const auto cost_of = [](const remat_result& one) -> std::optional<remat_stats::order_cost> {
        if (!has_solution(one.status)) return std::nullopt;
        return remat_stats::order_cost{one.total_cost, one.overhead};
      };
      CHECK(r.stats.cost_per_order[0] == cost_of(along_kahn));
      CHECK(r.stats.cost_per_order[1] == cost_of(along_best));
      // One order alone: the portfolio's own result, with its one entry.
      REQUIRE(along_kahn.stats.cost_per_order.size() == 1);
      CHECK(along_kahn.stats.cost_per_order[0] == cost_of(along_kahn));
      if (!has_solution(along_kahn.status) && !has_solution(along_best.status)) {
        CHECK(r.status == solve_status::no_solution);
        CHECK(r.plan.steps.empty());
        continue;
      }
      ++plans;
      check_plan_of(g, r, budget);
      // The winner's plan, order and method; ties go to the first order.
      const bool second = !has_solution(along_kahn.status) || (has_solution(along_best.status) && along_best.total_cost < along_kahn.total_cost - 1e-9);
      const remat_result& winner = second ? along_best : along_kahn;
      CHECK(r.plan == winner.plan);
      CHECK(r.total_cost == doctest::Approx(winner.total_cost));
      CHECK(r.stats.order == winner.stats.order);
      CHECK(r.stats.method == winner.stats.method);
      if (second) ++second_wins;
      // No solver: proven only when nothing is recomputed.
      CHECK(r.status == (r.overhead <= 1e-12 ? solve_status::optimal : solve_status::feasible));
      if (budget == best.peak_bytes) {
        // The order as a decision: where some order fits the budget, nothing is recomputed.
        CHECK(r.status == solve_status::optimal);
        CHECK(r.overhead == doctest::Approx(0));
        if (kahn.peak_bytes > budget && (!has_solution(along_kahn.status) || along_kahn.overhead > 1e-12)) ++fits_only_free;
      }
      CHECK(remat_plan(g, budget, remat_plan_options{.order = kahn.order, .more_orders = {best.order}}).plan == r.plan);  // deterministic
    }
  }
  CHECK(plans >= 30);
  CHECK(second_wins >= 3);     // the second order must matter somewhere, or the test checks one order
  CHECK(fits_only_free >= 2);  // budgets where Kahn's order alone must recompute
  MESSAGE(cases << " cases, " << plans << " with a plan, the second order wins " << second_wins << ", fits only along the best order "
                << fits_only_free);
  const memory_graph g = training_chain();
  CHECK_THROWS_AS((void)remat_plan(g, 40, remat_plan_options{.more_orders = {{1, 0, 2, 3, 4, 5, 6}}}), invalid_order);
}

TEST_CASE("remat_plan: free_order_plan after the orders reaches a budget below every order's peak") {
  // A 30-vertex graph of Moccasin's recipe two fifths of the way from the per-vertex bound to the
  // optimal order's peak: no plan along the graph's order or Serenity's (as n100 at 26,000,
  // docs/remat_auto.md).
  const memory_graph g = make_memory_graph(make_random_layered({.nodes = 30, .seed = 1}));
  const order_result best = serenity_order(g, serenity_options{.max_states = 100'000});
  REQUIRE(best.status == solve_status::optimal);
  const std::vector<std::size_t> file(g.topological_order().begin(), g.topological_order().end());
  const std::int64_t lb = lower_bound_of(g);
  const std::int64_t budget = lb + (best.peak_bytes - lb) * 3 / 5;
  const remat_result orders_only = remat_plan(g, budget, remat_plan_options{.order = file, .more_orders = {best.order}});
  CHECK(orders_only.status == solve_status::no_solution);
  CHECK(orders_only.stats.cost_per_order.size() == 2);
  const remat_result r = remat_plan(g, budget, remat_plan_options{.order = file, .more_orders = {best.order}, .free_order = true});
  check_plan_of(g, r, budget);
  CHECK(r.status == solve_status::feasible);
  CHECK(r.stats.method == "free-order");
  REQUIRE(r.stats.cost_per_order.size() == 3);
  CHECK(!r.stats.cost_per_order[0]);
  CHECK(!r.stats.cost_per_order[1]);
  REQUIRE(r.stats.cost_per_order[2]);
  CHECK(r.stats.cost_per_order[2]->total_cost == doctest::Approx(r.total_cost));
  // The bounds: along each order remat_cost_lower_bound's (no MILP), over every plan the one
  // from Serenity's proven optimal peak, which is the result's and below its cost.
  REQUIRE(r.stats.cost_bound_per_order.size() == 3);
  CHECK(r.stats.cost_bound_per_order[0] == remat_cost_lower_bound(g, budget, cost_lower_bound_options{.order = file}).total_cost);
  CHECK(r.stats.cost_bound_per_order[1] == remat_cost_lower_bound(g, budget, cost_lower_bound_options{.order = best.order}).total_cost);
  // (Weak here: the zero-cost values alone hold more than best.peak_bytes - budget bytes.)
  const double any = remat_cost_lower_bound(g, budget, cost_lower_bound_options{.peak_bound = best.peak_bytes}).total_cost;
  CHECK(any >= g.total_cost());
  CHECK(r.stats.cost_bound_per_order[2] == any);
  REQUIRE(r.cost_bound);
  CHECK(*r.cost_bound == any);
  CHECK(any < r.total_cost);
  // The same plan as free_order_plan's own.
  CHECK(r.plan == free_order_plan(g, budget).plan);
}

TEST_CASE("remat_plan: a time limit of zero returns at once without a plan; the observer sees each better plan") {
  const memory_graph_data d = random_training_dag(12, 0.3, 7);
  const memory_graph g(d);
  const std::int64_t peak = checkpoint_all_plan(g, unlimited_budget).peak_bytes;
  const std::int64_t budget = (lower_bound_of(g) + peak) / 2;
  const remat_result none = remat_plan(g, budget, remat_plan_options{.solver = {.time_limit = std::chrono::duration<double>(0)}});
  CHECK(none.status == solve_status::time_limit);
  CHECK(none.plan.steps.empty());
  CHECK(none.message.find("time limit") != std::string::npos);
  CHECK(none.stats.ended_by == remat_end_rule::time_limit);
  // Below the lower bound the answer needs no time at all (and no stage runs).
  const remat_result below = remat_plan(g, lower_bound_of(g) - 1, remat_plan_options{.solver = {.time_limit = std::chrono::duration<double>(0)}});
  CHECK(below.status == solve_status::infeasible);
  CHECK(below.stats.ended_by == remat_end_rule::none);
  observer_recorder rec;
  const remat_result r = remat_plan(g, budget, remat_plan_options{.solver = {.observer = rec}});
  check_plan_of(g, r, budget);
  REQUIRE(!rec.values.empty());
  for (std::size_t k = 1; k < rec.values.size(); ++k) CHECK(rec.values[k] < rec.values[k - 1]);
  CHECK(rec.values.back() == doctest::Approx(r.total_cost));
  CHECK(rec.phases == std::vector<std::string>{"heuristics", "dtr", "eviction-greedy", "lifetime-search", "hiremate"});
  observer_recorder without_greedy;
  (void)remat_plan(g, budget, remat_plan_options{.solver = {.observer = without_greedy}, .eviction_greedy = false});
  CHECK(without_greedy.phases == std::vector<std::string>{"heuristics", "dtr", "lifetime-search", "hiremate"});
  // A generous limit: the stages' counted ends, then the lifetime search again with the time left
  // until a run stalls: never dearer than without a limit, and the rule that ended it is said.
  const remat_result limited = remat_plan(g, budget, remat_plan_options{.solver = {.time_limit = std::chrono::duration<double>(600)}});
  check_plan_of(g, limited, budget);
  CHECK(limited.total_cost <= r.total_cost * (1 + 1e-12));
  CHECK(limited.stats.seconds < 60);  // it stalls long before the limit on 24 vertices
  const bool said = (limited.stats.ended_by == remat_end_rule::stalled &&
                     limited.message.find("ended by every stage stalled") != std::string::npos) ||
                    (limited.stats.ended_by == remat_end_rule::bound_met &&
                     limited.message.find("ended by the best plan meets the cost bound") != std::string::npos);
  CHECK_MESSAGE(said, limited.message);
  CHECK(r.stats.ended_by == remat_end_rule::finished);
  CHECK(r.message.find("ended by every stage finished") != std::string::npos);
}

TEST_CASE("remat_plan: the lifetime search's better plans reach the observer as it finds them, not only when it ends") {
  // The reports in the order they came: each better plan and each phase.
  struct timeline {
    std::vector<std::pair<std::string, double>> events;  // ("", cost) for a plan, (phase, 0) for a phase
    void on_incumbent(double, double value, double) { events.emplace_back("", value); }
    void on_phase(double, std::string_view p) { events.emplace_back(std::string(p), 0.0); }
  };
  std::size_t several = 0, runs = 0;  // runs whose lifetime stage reported two plans or more, of all with a plan
  for (std::uint64_t seed = 1; seed <= 24; ++seed)
  for (const int eighths : {4, 6}) {
    CAPTURE(seed);
    CAPTURE(eighths);
    const memory_graph g = make_memory_graph(make_random_layered({.nodes = 150, .seed = seed}));
    const std::int64_t lower = lower_bound_of(g), peak = checkpoint_all_plan(g, unlimited_budget).peak_bytes;
    const std::int64_t budget = lower + (peak - lower) * eighths / 8;
    timeline seen;
    const remat_result r = remat_plan(g, budget, remat_plan_options{.solver = {.observer = seen}});
    if (!has_solution(r.status)) continue;
    check_plan_of(g, r, budget);
    ++runs;
    // Plans reported while the lifetime search ran: between its phase and the next one.
    std::size_t in_stage = 0;
    bool inside = false;
    double last = std::numeric_limits<double>::infinity();
    for (const auto& [phase, cost] : seen.events) {
      if (!phase.empty()) {
        inside = phase == "lifetime-search";
        continue;
      }
      CHECK(cost < last);  // only better plans
      last = cost;
      in_stage += inside;
    }
    CHECK(last == doctest::Approx(r.total_cost));
    several += in_stage >= 2;
  }
  // The stage's own improvements, one by one: more than the one plan its end would give.
  MESSAGE(several << " of " << runs << " runs with two plans or more from the lifetime stage");
  CHECK(several >= 4);
}

TEST_CASE("remat_plan: with a time limit, the time the stages leave goes to the lifetime search; never dearer") {
  int cheaper = 0, stalled = 0;
  for (std::uint64_t seed = 0; seed < memsched::testing::random_cases(8); ++seed) {
    const memory_graph g = make_memory_graph(make_training_graph(make_random_layered({.nodes = 30, .edge_density = 0.3, .seed = 100 + seed})));
    CAPTURE(seed);
    const std::int64_t peak = checkpoint_all_plan(g, unlimited_budget).peak_bytes;
    const std::int64_t budget = lower_bound_of(g) + (peak - lower_bound_of(g)) / 3;
    const remat_plan_options<> plain{.dtr_heuristics = {dtr_heuristic::lru}, .lifetime_rounds = 40, .hiremate = false};
    remat_plan_options<> timed = plain;
    timed.solver.time_limit = std::chrono::duration<double>(30);
    observer_recorder seen;
    timed.solver.observer = seen;
    const remat_result a = remat_plan(g, budget, plain), b = remat_plan(g, budget, timed);
    if (!has_solution(a.status)) continue;
    check_plan_of(g, b, budget);
    CHECK(b.total_cost <= a.total_cost * (1 + 1e-12));
    CHECK(b.message.find("ended by") != std::string::npos);
    CHECK(b.stats.ended_by != remat_end_rule::none);
    CHECK(a.stats.ended_by == remat_end_rule::finished);  // no limit: every stage to its counted end
    cheaper += b.total_cost < a.total_cost * (1 - 1e-9);
    CHECK((b.stats.ended_by == remat_end_rule::stalled) == (b.message.find("ended by every stage stalled") != std::string::npos));
    if (b.stats.ended_by == remat_end_rule::stalled) {
      // The stage's run, then at least one refinement run at each of the three depths.
      ++stalled;
      CHECK(std::count(seen.phases.begin(), seen.phases.end(), "lifetime-search") >= 4);
    }
  }
  MESSAGE(cheaper << " graphs got a cheaper plan from the time left; " << stalled << " ended with every stage stalled");
  CHECK(stalled > 0);
}

namespace {

/// Graphs of four families for the ladder: random DAGs, random training DAGs, training graphs of
/// random layered graphs, random layered graphs.
memory_graph ladder_family_graph(std::uint64_t seed) {
  switch (seed % 4) {
    case 0: return memory_graph(random_dag(14, 0.3, seed));
    case 1: return memory_graph(random_training_dag(7, 0.35, seed));
    case 2: return make_memory_graph(make_training_graph(make_random_layered({.nodes = 16, .edge_density = 0.3, .seed = seed})));
    default: return make_memory_graph(make_random_layered({.nodes = 40, .edge_density = 0.3, .seed = seed}));
  }
}

}  // namespace

TEST_CASE("remat_plan: with a budget ladder the cost never rises as the budget loosens (95% .. 60% of the peak, four families)") {
  constexpr std::size_t steps = 20;
  std::size_t rises_without = 0, pairs = 0;
  // A light portfolio (heuristics, DTR with one score, the eviction greedy), cheap enough for every
  // seed under the sanitizers too: without the ladder it gets dearer at a looser budget on some of
  // these graphs, so a ladder that did nothing would be caught.
  for (std::uint64_t seed = 0; seed < 24; ++seed) {
    const memory_graph g = ladder_family_graph(seed);
    CAPTURE(seed);
    const std::int64_t peak = checkpoint_all_plan(g, unlimited_budget).peak_bytes;
    remat_plan_options<> plain{.dtr_heuristics = {dtr_heuristic::lru}, .lifetime_rounds = 0, .hiremate = false};
    remat_plan_options<> ladder = plain;
    ladder.ladder_steps = steps;
    ladder.ladder_peak = peak;
    std::optional<double> looser_cost, looser_plain;  // at the budget one step up
    for (std::size_t j = 19; j >= 12; --j) {
      // The budgets of the ladder itself: j/20 of its peak, as remat_plan computes them.
      const auto budget = static_cast<std::int64_t>(static_cast<double>(j) / static_cast<double>(steps) * static_cast<double>(peak));
      CAPTURE(budget);
      const remat_result r = remat_plan(g, budget, ladder);
      const remat_result p = remat_plan(g, budget, plain);
      if (has_solution(r.status)) {
        check_plan_of(g, r, budget);
        // The last run of the ladder is the plain portfolio, offered the plan below first.
        if (has_solution(p.status)) CHECK(r.total_cost <= p.total_cost * (1 + 1e-12));
        CHECK(r.message.find("ladder: ") != std::string::npos);
      } else {
        CHECK(!has_solution(p.status));
      }
      if (j < 19) {
        // This budget is on the ladder of the one a step looser: that one has a plan when this
        // one has, and it is no dearer.
        if (has_solution(r.status)) CHECK(looser_cost.has_value());
        if (has_solution(r.status) && looser_cost) {
          ++pairs;
          CHECK(*looser_cost <= r.total_cost * (1 + 1e-12));
        }
        if (looser_plain && has_solution(p.status)) rises_without += *looser_plain > p.total_cost * (1 + 1e-9);
      }
      looser_cost = has_solution(r.status) ? std::optional(r.total_cost) : std::nullopt;
      looser_plain = has_solution(p.status) ? std::optional(p.total_cost) : std::nullopt;
    }
  }
  CHECK(pairs > 0);
  MESSAGE(rises_without << " budget steps where the portfolio without the ladder got dearer as the budget loosened");
}

TEST_CASE("remat_plan: a budget between ladder budgets is never dearer than the ladder budget below it; deterministic") {
  const memory_graph g = make_memory_graph(make_training_graph(make_random_layered({.nodes = 16, .edge_density = 0.3, .seed = 7})));
  const std::int64_t peak = checkpoint_all_plan(g, unlimited_budget).peak_bytes;
  remat_plan_options<> o{.dtr_heuristics = {dtr_heuristic::lru}, .lifetime_rounds = 40, .ladder_steps = 10, .ladder_peak = peak};
  const auto rung = static_cast<std::int64_t>(0.7 * static_cast<double>(peak));
  const remat_result at_rung = remat_plan(g, rung, o);
  REQUIRE(has_solution(at_rung.status));
  const remat_result above = remat_plan(g, rung + (peak - rung) / 4, o);
  check_plan_of(g, above, rung + (peak - rung) / 4);
  CHECK(above.total_cost <= at_rung.total_cost * (1 + 1e-12));
  const remat_result again = remat_plan(g, rung + (peak - rung) / 4, o);
  CHECK(again.plan == above.plan);
  CHECK(again.total_cost == above.total_cost);
}
