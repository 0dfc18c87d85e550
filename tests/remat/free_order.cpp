// free_order_plan (remat/free_order.hpp): plans re-checked by the simulator, brute force over all
// plans of tiny random DAGs (any order), graph types, random layered graphs below every order's
// peak where the lifetime search along Serenity's order has no plan, bad input and limits.

#include <memsched/graph/random_layered.hpp>
#include <memsched/order/peak_lower_bound.hpp>
#include <memsched/order/serenity.hpp>
#include <memsched/remat/free_order.hpp>
#include <memsched/remat/lifetime_search.hpp>
#include <memsched/sim/simulate_order.hpp>
#include <memsched/sim/simulate_plan.hpp>

#include "../support/brute_force_plans.hpp"
#include "../support/option_error_of.hpp"
#include "../support/random_dag.hpp"
#include "support.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

using namespace memsched;
using namespace memsched::testing;

TEST_CASE("free_order_plan: tiny random DAGs against brute force over all plans") {
  std::size_t feasible = 0, found = 0, below_every_order = 0, found_below = 0, runs = 0;
  for (std::uint64_t seed = 0; seed < 60; ++seed) {
    const std::size_t n = 4 + seed % 6;  // up to 9 vertices
    auto d = random_dag(n, 0.4, seed + 31, 60);
    if (seed % 4 == 2) d = with_random_outputs(d, seed);
    const memory_graph g(d);
    const std::int64_t best_peak = serenity_order(g).peak_bytes;  // proven optimal on these sizes
    const std::int64_t lower = peak_lower_bound(g);
    for (std::int64_t budget : {best_peak, lower, (lower + best_peak) / 2, best_peak - 1, lower - 1}) {
      INFO("seed " << seed << " budget " << budget);
      const auto r = free_order_plan(g, budget);
      ++runs;
      if (budget < lower) CHECK(r.status == solve_status::infeasible);
      if (budget >= best_peak) {  // an order alone fits: nothing is recomputed
        CHECK(r.status == solve_status::optimal);
        CHECK(r.total_cost == doctest::Approx(g.total_cost()));
      }
      if (has_plan(r)) {
        check_result(g, r, budget);
        CHECK(r.stats.order.size() == g.size());
      }
      const auto opt = brute_force_min_cost_plan(g, budget);
      if (opt.status == solve_status::infeasible) {
        CHECK(!has_plan(r));
        continue;
      }
      ++feasible;
      if (budget < best_peak) ++below_every_order;
      if (!has_plan(r)) continue;
      ++found;
      if (budget < best_peak) ++found_below;
      CHECK(r.total_cost >= opt.cost - 1e-9);
    }
  }
  MESSAGE("free order: " << found << " of " << feasible << " feasible cases (" << found_below << " of " << below_every_order
                         << " below every order's peak, " << runs << " runs)");
  // Every budget at or above the best order's peak is found; below it, where a plan needs
  // recomputation, measured 37 of 47 (the lifetime search alone along Serenity's order: the
  // same budgets need its splits, and the copies are what lets it reach the tightest).
  CHECK(found - found_below == feasible - below_every_order);
  CHECK(found_below * 100 >= below_every_order * 70);
}

TEST_CASE("free_order_plan: the same plan from every graph type, deterministic") {
  for (std::uint64_t seed = 0; seed < 4; ++seed) {
    const auto d = random_dag(14, 0.3, seed + 300, 50);
    const memory_graph g(d);
    const std::int64_t lower = peak_lower_bound(g);
    const std::int64_t budget = lower + (serenity_order(g).peak_bytes - lower) / 2;
    const free_order_options o{.max_evaluations = 300, .seed = seed};
    const auto ref = free_order_plan(g, budget, o);
    INFO("seed " << seed);
    if (has_plan(ref)) check_result(g, ref, budget);
    const dataflow_graph df = to_dataflow_graph(d);
    const typed_graph<vecs_graph> a(d);
    const typed_graph<lists_graph> b(d);
    CHECK(free_order_plan(df, budget, o).plan == ref.plan);
    CHECK(free_order_plan(a.graph, budget, o, a.maps()).plan == ref.plan);
    CHECK(free_order_plan(b.graph, budget, o, b.maps()).plan == ref.plan);
    CHECK(free_order_plan(g, budget, o).plan == ref.plan);
  }
}

TEST_CASE("free_order_plan: random layered graphs below every order's peak, where the order alone has no plan") {
  // Moccasin's recipe at 30 and 40 vertices (n100 at 26,000 is the same case at scale: 42.32% in
  // about 6 s, docs/remat_auto.md; too slow for the sanitizer build).
  std::size_t cases = 0, free_plans = 0, along_plans = 0, only_free = 0;
  for (std::uint64_t seed = 0; seed < 12; ++seed) {
    for (std::size_t n : {30, 40}) {
      const memory_graph g = make_memory_graph(make_random_layered({.nodes = n, .seed = seed}));
      const auto so = serenity_order(g, serenity_options{.max_states = 100'000});
      REQUIRE(so.status == solve_status::optimal);
      const std::int64_t lower = peak_lower_bound(g);
      for (std::int64_t k = 1; k <= 4; ++k) {
        const std::int64_t budget = lower + (so.peak_bytes - lower) * k / 5;
        if (budget >= so.peak_bytes) continue;  // the bound is the optimal peak: nothing lies below it
        CAPTURE(seed);
        CAPTURE(n);
        CAPTURE(budget);
        ++cases;
        const auto along = lifetime_search_plan(g, budget, lifetime_search_options{.order = so.order});
        const auto r = free_order_plan(g, budget);
        if (has_solution(along.status)) ++along_plans;
        if (!has_plan(r)) continue;
        ++free_plans;
        check_result(g, r, budget);
        // Below every order's peak something is recomputed (maybe only the source, of cost 0).
        std::size_t computes = 0;
        for (const plan_step& step : r.plan.steps) computes += step.op == plan_op::compute ? 1 : 0;
        CHECK(computes > g.size());
        if (!has_solution(along.status)) ++only_free;
      }
    }
  }
  MESSAGE("random layered, below every order's peak: " << free_plans << " of " << cases << " with the order free, " << along_plans
                                                       << " along Serenity's order, " << only_free << " only with the order free");
  // Measured: 38 of 84 with the order free, 32 along Serenity's order, 6 only with the order free.
  CHECK(only_free >= 3);
  CHECK(free_plans >= along_plans);
}

TEST_CASE("free_order_plan: bad input and limits") {
  const auto d = random_dag(10, 0.35, 5, 60);
  const memory_graph g(d);
  const std::int64_t lower = peak_lower_bound(g);
  CHECK_THROWS_AS((void)free_order_plan(g, -1), std::invalid_argument);
  const auto r = free_order_plan(g, lower - 1);
  CHECK(r.status == solve_status::infeasible);
  CHECK(r.plan.steps.empty());
  CHECK(free_order_plan(g, unlimited_budget).status == solve_status::optimal);
  const auto empty = free_order_plan(memory_graph(memory_graph_data{}), 0);
  CHECK(empty.status == solve_status::optimal);
  CHECK(empty.plan.steps.empty());
  // A zero time limit stops the search before any plan when one needs recomputation.
  const std::int64_t best_peak = serenity_order(g).peak_bytes;
  REQUIRE(lower < best_peak);
  free_order_options o;
  o.solver.time_limit = std::chrono::duration<double>(0);
  const auto t = free_order_plan(g, lower, o);
  CHECK(t.status == solve_status::time_limit);
  CHECK(t.plan.steps.empty());
  // No copies and no lifetime search: no plan below the best order's peak, and the message says
  // how far the copies got.
  const auto none = free_order_plan(g, lower, free_order_options{.max_evaluations = 1, .recompute_depths = {}});
  CHECK(none.status == solve_status::no_solution);
  CHECK(none.message.find("copies after") != std::string::npos);
  // Each bad option is an option_error naming its field, thrown before the budget's check.
  const auto option_of = [&](const free_order_options& bad) {
    return testing::option_error_of("free_order_plan", [&] { (void)free_order_plan(g, -1, bad); });
  };
  CHECK(option_of({.serenity_max_states = 0}) == "serenity_max_states");
  CHECK(option_of({.copy_fraction = -0.1}) == "copy_fraction");
  CHECK(option_of({.copy_fraction = 1.5}) == "copy_fraction");
  CHECK(option_of({.copy_fraction = std::nan("")}) == "copy_fraction");
  CHECK_NOTHROW(check_free_order_options({.max_evaluations = 0, .max_copy_depth = 0, .serenity_max_states = 1, .copy_fraction = 0,
                                          .lifetime_rounds = 0, .recompute_depths = {}}));
  CHECK_NOTHROW(check_free_order_options({.copy_fraction = 1}));
  CHECK(has_solution(free_order_plan(g, best_peak, free_order_options{.serenity_max_states = 1, .copy_fraction = 1}).status));
}

TEST_CASE("free_order_plan: the deadline is checked before every Serenity run of the copy search (a counted deadline)") {
  // Each candidate copy costs a Serenity run on the copied graph (O(n log n) before its search
  // starts): the copy search must not run a step's candidates past the deadline.
  const memory_graph g = make_memory_graph(chain_training_graph(60, 5));
  const std::int64_t budget = serenity_order(g).peak_bytes * 2 / 3;
  const free_order_options o{};
  const memsched::detail::call_deadline none(std::chrono::steady_clock::now(), std::nullopt);
  const auto unlimited = memsched::detail::copy_search(g, budget, o, none);
  REQUIRE(unlimited.evaluations >= 10);
  // k0, the first over-budget step of the uncopied graph's order: the copy search checks the
  // deadline once before its first round and once per step up to k0, so these counts let it
  // reach k0's candidates and stop among them.
  const auto first = memsched::detail::schedule_copied(memsched::detail::copied_graph_of(g), budget, o, none);
  std::size_t k0 = 0;
  while (k0 < first.transient.size() && first.transient[k0] <= budget) ++k0;
  REQUIRE(k0 < first.transient.size());
  for (std::size_t checks : {k0 + 2, k0 + 3, k0 + 4, k0 + 10, std::size_t{2}}) {
    CAPTURE(checks);
    const auto cut = memsched::detail::copy_search(g, budget, o, memsched::detail::call_deadline::after_checks(checks));
    // The first run (the uncopied graph) comes before any check; then at most one run per check.
    CHECK(cut.evaluations <= checks);
    CHECK(cut.sched.order.size() == cut.sched.graph.size());
  }
  // The whole call: a plan (re-checked by the simulator) or time_limit.
  const remat_result r = memsched::detail::free_order_until(g, budget, o, std::chrono::steady_clock::now(), memsched::detail::call_deadline::after_checks(k0 + 4));
  CHECK((r.status == solve_status::time_limit || has_solution(r.status)));
  if (has_solution(r.status)) CHECK(simulate_plan(g, r.plan).peak_bytes <= budget);
}
