#include <memsched/remat/best_heuristic.hpp>

#include "support.hpp"

#include <doctest/doctest.h>

using namespace memsched;
using namespace memsched::testing;

TEST_CASE("best_heuristic_plan: the cheapest heuristic plan within the budget") {
  for (std::uint64_t seed = 0; seed < 8; ++seed) {
    const dataflow_graph t = seed % 2 ? chain_training_graph(15 + seed, seed) : random_training_graph(11, 0.3, seed);
    const std::int64_t peak = checkpoint_all_plan(t, unlimited_budget).peak_bytes;
    for (double frac : {1.0, 0.85, 0.7, 0.5, 0.3}) {
      const auto budget = static_cast<std::int64_t>(frac * static_cast<double>(peak));
      const remat_result best = best_heuristic_plan(t, budget);
      double cheapest = -1;
      for (auto h : all_remat_heuristics) {
        const remat_result r = run_remat_heuristic(t, h, budget, {});
        if (r.status == solve_status::feasible && (cheapest < 0 || r.total_cost < cheapest)) cheapest = r.total_cost;
      }
      CAPTURE(seed);
      CAPTURE(frac);
      if (cheapest < 0) {
        const bool proven = detail::budget_below_lower_bound(make_memory_graph(t), budget).has_value();
        CHECK(best.status == (proven ? solve_status::infeasible : solve_status::no_solution));
        CHECK(best.plan.steps.empty());
        continue;
      }
      REQUIRE(best.status == solve_status::feasible);
      CHECK(best.total_cost == cheapest);
      const plan_simulation sim = simulate_plan(t, best.plan);
      CHECK(sim.peak_bytes == best.peak_bytes);
      CHECK(sim.peak_bytes <= budget);
      if (frac == 1.0) CHECK(best.overhead == 0.0);
    }
  }
}

TEST_CASE_TEMPLATE("best_heuristic_plan through every graph type", G, vecs_graph, lists_graph, csr_graph) {
  const dataflow_graph t = chain_training_graph(14, 4);
  const memory_graph g = make_memory_graph(t);
  const typed_graph<G> tg(g.data());
  const std::int64_t peak = checkpoint_all_plan(t, unlimited_budget).peak_bytes;
  int recomputing = 0;
  for (double frac : {1.0, 0.95, 0.9, 0.85, 0.8}) {
    const auto budget = static_cast<std::int64_t>(frac * static_cast<double>(peak));
    const remat_result a = best_heuristic_plan(t, budget);
    const remat_result b = best_heuristic_plan(tg.graph, budget, {}, tg.maps());
    CAPTURE(frac);
    CHECK(a.status == b.status);
    CHECK(a.plan == b.plan);
    CHECK(a.total_cost == b.total_cost);
    recomputing += a.status == solve_status::feasible && a.overhead > 0.0;  // the roles came through the maps
  }
  CHECK(recomputing >= 1);
}

TEST_CASE("best_heuristic_plan: a heuristic out of the enum is an option_error naming heuristics, thrown before any work") {
  const dataflow_graph t = chain_training_graph(6, 1);
  const auto bad = static_cast<remat_heuristic>(all_remat_heuristics.size());
  try {
    (void)best_heuristic_plan(t, unlimited_budget, {.heuristics = {remat_heuristic::revolve, bad}});
    FAIL("nothing thrown");
  } catch (const option_error& e) {
    CHECK(e.option() == "heuristics");
    CHECK(std::string(e.what()) == "best_heuristic_plan: " + e.option() + " " + e.requirement());
  }
  // Every heuristic of the enum, and zero counts, are valid.
  CHECK_NOTHROW(check_best_heuristic_options({.heuristics = {all_remat_heuristics.begin(), all_remat_heuristics.end()}}));
  const best_heuristic_options zeros{.greedy_budgets = 0, .max_revolve_factor = 0};
  CHECK_NOTHROW(check_best_heuristic_options(zeros));
  CHECK(best_heuristic_plan(t, unlimited_budget, zeros).status == solve_status::feasible);
}
