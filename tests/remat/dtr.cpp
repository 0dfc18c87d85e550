// DTR (remat/dtr.hpp): plans re-checked by the simulator, a training chain computed by hand,
// brute force over all plans of tiny random DAGs, graph types, bad input.

#include <memsched/remat/dtr.hpp>
#include <memsched/sim/simulate_order.hpp>
#include <memsched/sim/simulate_plan.hpp>

#include "../support/brute_force_plans.hpp"
#include "../support/random_dag.hpp"

#include "../support/training_chain.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>

#include <cstdint>
#include <vector>

using namespace memsched;
using namespace memsched::testing;

namespace {

/// The computations of a plan, in order.
std::vector<std::size_t> computes_of(const execution_plan& plan) {
  std::vector<std::size_t> out;
  for (const auto& s : plan.steps)
    if (s.op == plan_op::compute) out.push_back(s.node);
  return out;
}

/// The chain of support/training_chain.hpp, without roles.
memory_graph training_chain() { return memory_graph(training_chain_data()); }

/// Re-simulates r's plan: valid (check_plan: inputs resident, outputs resident at the end),
/// peak and cost as reported, within budget.
void check_result(const memory_graph& g, const remat_result& r, std::int64_t budget) {
  REQUIRE(r.status == solve_status::feasible);
  const auto check = check_plan(g, r.plan);
  INFO(check.error);
  REQUIRE(check.valid);
  const auto sim = simulate_plan(g, r.plan);
  CHECK(sim.peak_bytes == r.peak_bytes);
  CHECK(sim.total_cost == doctest::Approx(r.total_cost));
  CHECK(sim.peak_bytes <= budget);
}

}  // namespace

TEST_CASE("dtr_plan: a training chain by hand") {
  const memory_graph g = training_chain();
  const std::vector<std::size_t> order{0, 1, 2, 3, 4, 5, 6};
  REQUIRE(order_peak(g, order) == 50);
  for (auto h : all_dtr_heuristics) {
    INFO(to_string(h));
    const dtr_options o{.order = order, .heuristic = h, .use_spare_memory = false};
    // At the no-remat peak nothing is evicted.
    const auto r50 = dtr_plan(g, 50, o);
    check_result(g, r50, 50);
    CHECK(computes_of(r50.plan) == order);
    CHECK(r50.overhead == 0);
  }
  // Budget 40: before g2 one of x0, x1 must go; x0 is staler and (same cost, size) is evicted,
  // then recomputed for g0: one recomputation (cost 8 of 7).
  for (auto h : {dtr_heuristic::dtr, dtr_heuristic::dtr_eq, dtr_heuristic::local, dtr_heuristic::lru}) {
    INFO(to_string(h));
    const auto r40 = dtr_plan(g, 40, dtr_options{.order = order, .heuristic = h, .use_spare_memory = false});
    check_result(g, r40, 40);
    CHECK(computes_of(r40.plan) == std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 0, 6});
    CHECK(r40.total_cost == 8);
    // Budget 30: x0 goes before x3, x1 before g2; g1 recomputes x1 (and x0 for it), g0 x0 again.
    const auto r30 = dtr_plan(g, 30, dtr_options{.order = order, .heuristic = h, .use_spare_memory = false});
    check_result(g, r30, 30);
    CHECK(computes_of(r30.plan) == std::vector<std::size_t>{0, 1, 2, 3, 4, 0, 1, 5, 0, 6});
    CHECK(r30.total_cost == 10);
  }
  // Both are optimal over all plans.
  CHECK(brute_force_min_cost_plan(g, 40).cost == 8);
  CHECK(brute_force_min_cost_plan(g, 30).cost == 10);
  // h_size evicts the largest; all are equal, so the smallest index: x0 first as well.
  const auto s30 = dtr_plan(g, 30, dtr_options{.order = order, .heuristic = dtr_heuristic::size, .use_spare_memory = false});
  check_result(g, s30, 30);
  // Below g2's own need: infeasible (proven), with a message naming the vertex's need.
  const auto r29 = dtr_plan(g, 29, dtr_options{.order = order});
  CHECK(r29.status == solve_status::infeasible);
  CHECK(r29.plan.steps.empty());
  CHECK(r29.message.find("30") != std::string::npos);
}

TEST_CASE("dtr_plan: tiny random DAGs against brute force over all plans") {
  std::size_t cases = 0, feasible_opt = 0, dtr_found = 0, zero_remat = 0;
  for (std::uint64_t seed = 0; seed < 60; ++seed) {
    const std::size_t n = 3 + seed % 6;  // up to 8 vertices
    auto d = random_dag(n, 0.4, seed + 11, 60, seed % 3 == 1);
    if (seed % 4 == 2) d = with_random_outputs(d, seed);
    // brute_force_min_cost_plan ignores in-place reuse: on those graphs only the simulator judges.
    const bool inplace = seed % 5 == 3;
    if (inplace) d = with_random_inplace(d, seed);
    const memory_graph g(d);
    std::vector<std::size_t> order(g.topological_order().begin(), g.topological_order().end());
    const std::int64_t peak = order_peak(g, order);
    std::int64_t lower = 0;
    for (std::size_t v = 0; v < g.size(); ++v) lower = std::max(lower, memory_model::min_running_bytes(g, v));
    for (std::int64_t budget : {peak, peak + 7, lower, (lower + peak) / 2, lower + (peak - lower) / 4, lower - 1}) {
      const auto opt = inplace ? brute_force_plan{} : brute_force_min_cost_plan(g, budget);
      for (auto h : all_dtr_heuristics)
        for (bool spare : {false, true}) {
          INFO("seed " << seed << " budget " << budget << " " << to_string(h) << " spare " << spare);
          const auto r = dtr_plan(g, budget, dtr_options{.order = order, .heuristic = h, .use_spare_memory = spare});
          ++cases;
          if (inplace) {
            if (budget >= peak) CHECK(computes_of(r.plan) == order);
            if (r.status == solve_status::feasible) check_result(g, r, budget);
            continue;
          }
          if (opt.status == solve_status::infeasible) {
            CHECK(r.status != solve_status::feasible);
            continue;
          }
          ++feasible_opt;
          if (r.status == solve_status::infeasible) FAIL("infeasible although a plan exists");
          if (budget >= peak) {
            check_result(g, r, budget);
            CHECK(r.total_cost == doctest::Approx(opt.cost));  // no recomputation at all
            CHECK(computes_of(r.plan) == order);
            ++zero_remat;
          }
          if (r.status != solve_status::feasible) continue;
          ++dtr_found;
          check_result(g, r, budget);
          CHECK(r.total_cost >= opt.cost - 1e-9);
          CHECK(r.stats.order == order);
        }
    }
  }
  CHECK(zero_remat > 0);
  // DTR is a heuristic, but on these graphs it should find most of the feasible plans.
  CHECK(dtr_found * 10 >= feasible_opt * 8);
  MESSAGE("dtr found " << dtr_found << " of " << feasible_opt << " feasible cases (" << cases << " runs)");
}

TEST_CASE("dtr_plan: the same plan from every graph type") {
  for (std::uint64_t seed = 0; seed < 6; ++seed) {
    const auto d = random_dag(12, 0.3, seed + 300, 50, seed % 2 == 0);
    const memory_graph g(d);
    const std::int64_t peak = order_peak(g, std::vector<std::size_t>(g.topological_order().begin(), g.topological_order().end()));
    const std::int64_t budget = peak * 3 / 4;
    const auto ref = dtr_plan(g, budget);
    const typed_graph<vecs_graph> a(d);
    const typed_graph<lists_graph> b(d);
    const typed_graph<csr_graph> c(d);
    const auto ra = dtr_plan(a.graph, budget, {}, a.maps());
    const auto rb = dtr_plan(b.graph, budget, {}, b.maps());
    const auto rc = dtr_plan(c.graph, budget, {}, c.maps());
    CHECK(ra.status == ref.status);
    CHECK(ra.plan == ref.plan);
    CHECK(rb.plan == ref.plan);
    CHECK(rc.plan == ref.plan);
    CHECK(rc.total_cost == ref.total_cost);
    // Deterministic: the same call twice gives the same plan.
    CHECK(dtr_plan(g, budget).plan == ref.plan);
  }
}

TEST_CASE("dtr_plan: bad input and limits") {
  const memory_graph g = training_chain();
  // Not a topological order: x1 before x0.
  CHECK_THROWS_AS((void)dtr_plan(g, 40, dtr_options{.order = {1, 0, 2, 3, 4, 5, 6}}), invalid_order);
  CHECK_THROWS_AS((void)dtr_plan(g, 40, dtr_options{.order = {0, 1, 2}}), invalid_order);
  // A counted limit below the 10 computations needed at budget 30: no_solution, no plan.
  const auto r = dtr_plan(g, 30, dtr_options{.max_computations = 8});
  CHECK(r.status == solve_status::no_solution);
  CHECK(r.plan.steps.empty());
  CHECK(r.message.find("max_computations") != std::string::npos);
  // A time limit already spent: status time_limit, no plan; a huge one is no limit (same plan as
  // none).
  for (auto h : all_dtr_heuristics) {
    CAPTURE(to_string(h));
    const auto spent = dtr_plan(g, 30, dtr_options{.heuristic = h, .time_limit = std::chrono::duration<double>(0)});
    CHECK(spent.status == solve_status::time_limit);
    CHECK(spent.plan.steps.empty());
    CHECK(spent.message.find("time limit") != std::string::npos);
    const auto huge = dtr_plan(g, 30, dtr_options{.heuristic = h, .time_limit = std::chrono::duration<double>(1e300)});
    const auto none = dtr_plan(g, 30, dtr_options{.heuristic = h});
    REQUIRE(none.status == solve_status::feasible);
    CHECK(huge.status == none.status);
    CHECK(huge.plan == none.plan);
  }
  CHECK(parse_dtr_heuristic("dtr-eq") == dtr_heuristic::dtr_eq);
  CHECK(!parse_dtr_heuristic("dtr_eq"));
  // A heuristic out of the enum is an option_error naming heuristic, thrown before the order's check.
  try {
    (void)dtr_plan(g, 40, dtr_options{.order = {0, 1, 2}, .heuristic = static_cast<dtr_heuristic>(all_dtr_heuristics.size())});
    FAIL("nothing thrown");
  } catch (const option_error& e) {
    CHECK(e.option() == "heuristic");
    CHECK(std::string(e.what()) == "dtr_plan: " + e.option() + " " + e.requirement());
  }
  for (auto h : all_dtr_heuristics) CHECK_NOTHROW(check_dtr_options({.heuristic = h, .max_computations = 0}));
}

TEST_CASE("dtr portfolio: default scores and one run per score") {
  // The exact score only up to the threshold, and last (a deadline cuts the dearest).
  const auto small = memsched::detail::dtr_portfolio_scores(100, 100);
  REQUIRE(small.size() == all_dtr_heuristics.size());
  CHECK(small.back() == dtr_heuristic::dtr);
  for (auto h : all_dtr_heuristics) CHECK(std::count(small.begin(), small.end(), h) == 1);
  const auto large = memsched::detail::dtr_portfolio_scores(101, 100);
  CHECK(large.size() == all_dtr_heuristics.size() - 1);
  CHECK(std::count(large.begin(), large.end(), dtr_heuristic::dtr) == 0);
  CHECK(memsched::detail::dtr_portfolio_computations(10) == 144);

  // Every score's answer is dtr_plan's with the same options, in the order given; a deadline
  // already passed runs none.
  const memory_graph g = training_chain();
  const std::vector<dtr_heuristic> scores{dtr_heuristic::lru, dtr_heuristic::dtr, dtr_heuristic::size};
  const dtr_options base{.use_spare_memory = false, .max_computations = 40};
  for (const std::int64_t budget : {30, 40, 50}) {
    CAPTURE(budget);
    std::vector<dtr_heuristic> seen;
    memsched::detail::dtr_each_score(g, budget, scores, base, memsched::detail::call_deadline(std::chrono::steady_clock::now(), std::nullopt),
                           [&](const remat_result& r, dtr_heuristic h) {
                             dtr_options alone = base;
                             alone.heuristic = h;
                             const remat_result expected = dtr_plan(g, budget, alone);
                             CHECK(r.status == expected.status);
                             CHECK(r.plan == expected.plan);
                             if (has_solution(r.status)) check_result(g, r, budget);
                             seen.push_back(h);
                           });
    CHECK(seen == scores);
    std::size_t runs = 0;
    memsched::detail::dtr_each_score(g, budget, scores, base,
                           memsched::detail::call_deadline(std::chrono::steady_clock::now(), std::chrono::duration<double>(0)),
                           [&](const remat_result&, dtr_heuristic) { ++runs; });
    CHECK(runs == 0);
  }
}
