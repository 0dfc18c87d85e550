#include <memsched/remat/sweep.hpp>

#include "support.hpp"

#include <doctest/doctest.h>

using namespace memsched;
using namespace memsched::testing;

TEST_CASE("remat_sweep: budgets from the lower bound to the no-remat peak, entries match single runs") {
  const dataflow_graph t = chain_training_graph(25, 3);
  const sweep_result s = remat_sweep(t, {.num_budgets = 5});
  REQUIRE(s.rows.size() == 5);
  CHECK(s.no_remat_peak == checkpoint_all_plan(t, unlimited_budget).peak_bytes);
  CHECK(s.lower_bound == peak_lower_bound(t));
  CHECK(s.rows.front().budget == s.lower_bound);
  CHECK(s.rows.back().budget == s.no_remat_peak);
  for (const auto& row : s.rows) {
    CHECK(row.entries.size() == all_remat_heuristics.size());  // a chain: every heuristic applies
    for (const auto& e : row.entries) {
      const remat_result r = run_remat_heuristic(t, e.heuristic, row.budget, {});
      CHECK(r.status == e.status);
      CHECK(r.peak_bytes == e.peak_bytes);
      CHECK(r.total_cost == e.total_cost);
      if (e.status == solve_status::feasible) CHECK(e.peak_bytes <= row.budget);
      if (e.heuristic == remat_heuristic::checkpoint_all) {
        CHECK(e.overhead == 0.0);
        CHECK((e.status == solve_status::feasible) == (row.budget >= s.no_remat_peak));
      }
    }
  }
}

TEST_CASE("remat_sweep: explicit budgets and heuristics, non-chain graphs leave chen-* out") {
  const dataflow_graph t = random_training_graph(10, 0.4, 1);
  const auto all = checkpoint_all_plan(t, unlimited_budget).peak_bytes;
  const sweep_result s = remat_sweep(t, {.budgets = {all, all / 2}});
  REQUIRE(s.rows.size() == 2);
  for (const auto& e : s.rows[0].entries) {
    CHECK(e.heuristic != remat_heuristic::chen_sqrtn);
    CHECK(e.heuristic != remat_heuristic::chen_greedy);
  }
  const sweep_result only = remat_sweep(t, {.budgets = {all}, .heuristics = {remat_heuristic::revolve}});
  REQUIRE(only.rows.size() == 1);
  REQUIRE(only.rows[0].entries.size() == 1);
  CHECK(only.rows[0].entries[0].heuristic == remat_heuristic::revolve);
  CHECK_THROWS_AS((void)remat_sweep(t, {.budgets = {-1}}), graph_error);
  // A heuristic out of the enum is an option_error naming heuristics; 0 budgets count as 1.
  try {
    (void)remat_sweep(t, {.heuristics = {static_cast<remat_heuristic>(all_remat_heuristics.size())}});
    FAIL("nothing thrown");
  } catch (const option_error& e) {
    CHECK(e.option() == "heuristics");
    CHECK(std::string(e.what()) == "remat_sweep: " + e.option() + " " + e.requirement());
  }
  CHECK_NOTHROW(check_sweep_options({.num_budgets = 0, .heuristics = {remat_heuristic::checkpoint_all}}));
  CHECK(remat_sweep(t, {.num_budgets = 0, .heuristics = {remat_heuristic::checkpoint_all}}).rows.size() == 1);
}
