#include <memsched/remat/revolve.hpp>

#include "support.hpp"
#include "../support/small_stack.hpp"

#include <doctest/doctest.h>

#include <map>

using namespace memsched;
using namespace memsched::testing;

namespace {

/// Brute-force dynamic program: T(l, s) = min over 1 <= m < l of m + T(l - m, s - 1) + T(m, s),
/// T(1, s) = 0, T(l, 1) = (l - 1) + T(l - 1, 1).
std::uint64_t dp_steps(std::size_t l, std::size_t s, std::map<std::pair<std::size_t, std::size_t>, std::uint64_t>& memo) {
  if (l <= 1) return 0;
  if (s == 1) return (l - 1) + dp_steps(l - 1, 1, memo);
  const auto key = std::make_pair(l, s);
  if (auto it = memo.find(key); it != memo.end()) return it->second;
  std::uint64_t best = std::numeric_limits<std::uint64_t>::max();
  for (std::size_t m = 1; m < l; ++m) best = std::min(best, m + dp_steps(l - m, s - 1, memo) + dp_steps(m, s, memo));
  memo[key] = best;
  return best;
}

/// Replays a schedule on abstract states and checks its rules; returns the forward steps.
std::uint64_t replay(const revolve_schedule& sched, std::size_t l, std::size_t s) {
  std::vector<std::optional<std::size_t>> slots(s);
  std::optional<std::size_t> current = 0;
  std::size_t next_turn = l;  // the next step to reverse is next_turn (turn from state next_turn - 1)
  std::uint64_t steps = 0;
  bool first = true;
  for (const auto& a : sched.actions) {
    switch (a.op) {
      case revolve_op::advance:
        REQUIRE(current.has_value());
        REQUIRE(a.steps >= 1);
        REQUIRE(*current + a.steps == a.state);
        REQUIRE(a.state < next_turn);  // never past the part still to be reversed
        current = a.state;
        steps += a.steps;
        break;
      case revolve_op::takeshot:
        REQUIRE(a.snapshot < s);
        REQUIRE(current == a.state);
        slots[a.snapshot] = a.state;
        break;
      case revolve_op::restore:
        REQUIRE(a.snapshot < s);
        REQUIRE(slots[a.snapshot] == a.state);
        current = a.state;
        break;
      case revolve_op::firsturn:
      case revolve_op::youturn:
        REQUIRE((a.op == revolve_op::firsturn) == first);
        first = false;
        REQUIRE(current == a.state);
        REQUIRE(a.state + 1 == next_turn);
        --next_turn;
        current.reset();  // after a turn the current state must be restored
        break;
    }
  }
  CHECK(next_turn == 0);
  return steps;
}

}  // namespace

TEST_CASE("revolve: published forward-step counts") {
  CHECK(revolve_forward_steps(10, 1) == 45);
  CHECK(revolve_forward_steps(10, 2) == 20);
  CHECK(revolve_forward_steps(10, 3) == 15);
  CHECK(revolve_forward_steps(20, 3) == 45);
  CHECK(revolve_forward_steps(100, 5) == 316);
  CHECK(revolve_forward_steps(100, 10) == 222);
  CHECK(revolve_forward_steps(1000, 10) == 3636);
  CHECK(revolve_forward_steps(0, 3) == 0);
  CHECK(revolve_forward_steps(1, 1) == 0);
  CHECK_THROWS_AS((void)revolve_forward_steps(5, 0), std::invalid_argument);
  CHECK_THROWS_AS((void)revolve_actions(5, 0), std::invalid_argument);
}

TEST_CASE("revolve: closed form = brute-force DP = the schedule's count, and schedules replay") {
  std::map<std::pair<std::size_t, std::size_t>, std::uint64_t> memo;
  for (std::size_t l = 1; l <= 45; ++l)
    for (std::size_t s = 1; s <= 7; ++s) {
      CAPTURE(l);
      CAPTURE(s);
      const std::uint64_t closed = revolve_forward_steps(l, s);
      CHECK(closed == dp_steps(l, s, memo));
      const revolve_schedule sched = revolve_actions(l, s);
      CHECK(sched.forward_steps == closed);
      CHECK(replay(sched, l, s) == closed);
    }
  for (auto [l, s] : {std::pair<std::size_t, std::size_t>{100, 5}, {100, 10}, {1000, 10}}) {
    const revolve_schedule sched = revolve_actions(l, s);
    CHECK(sched.forward_steps == revolve_forward_steps(l, s));
    CHECK(replay(sched, l, s) == sched.forward_steps);
  }
}

TEST_CASE("revolve: a small schedule, by hand") {
  // l = 3, s = 2: r = 1 (C(3, 2) = 3 >= 3), t = 3 - 1 = 2.
  const revolve_schedule sched = revolve_actions(3, 2);
  const std::vector<revolve_action> expected{
      {revolve_op::takeshot, 0, 0, 0}, {revolve_op::advance, 1, 1, 0}, {revolve_op::takeshot, 1, 0, 1},
      {revolve_op::advance, 2, 1, 0},  {revolve_op::firsturn, 2, 0, 0}, {revolve_op::restore, 1, 0, 1},
      {revolve_op::youturn, 1, 0, 0},  {revolve_op::restore, 0, 0, 0},  {revolve_op::youturn, 0, 0, 0}};
  CHECK(sched.actions == expected);
  CHECK(sched.forward_steps == 2);
}

TEST_CASE("revolve plans on chain training graphs") {
  int tight_feasible = 0;
  for (std::size_t n : {3u, 6u, 11u, 30u}) {
    const dataflow_graph t = chain_training_graph(n, 7, true);
    const memory_graph g = make_memory_graph(t);
    const std::size_t l = n - 1;  // states x, f1, ..., f(n-1)
    const remat_result all = checkpoint_all_plan(t, unlimited_budget);
    std::int64_t last_peak = 0;
    for (std::size_t s = 1; s <= l + 1; ++s) {
      CAPTURE(n);
      CAPTURE(s);
      const remat_result r = revolve_plan(t, unlimited_budget, {.snapshots = s});
      REQUIRE(r.status == solve_status::feasible);
      const plan_simulation sim = simulate_plan(t, r.plan);
      CHECK(sim.peak_bytes == r.peak_bytes);
      // Unit forward costs (x costs 0): recomputed forward steps = t(l, s) - l + 1, minus the
      // recomputations of x (cost 0).
      const double recomputed = r.total_cost - g.total_cost();
      CHECK(recomputed <= static_cast<double>(revolve_forward_steps(l, s) - l + 1));
      CHECK(recomputed >= static_cast<double>(revolve_forward_steps(l, s) - l + 1) - static_cast<double>(s + l));
      if (s == l + 1) {
        CHECK(r.overhead == 0.0);
        CHECK(r.peak_bytes == all.peak_bytes);
      }
      if (s > 1) CHECK(r.peak_bytes >= last_peak - 100);
      last_peak = r.peak_bytes;
    }
    // With the snapshot search: within budget, cheapest at the full budget.
    const remat_result full = revolve_plan(t, all.peak_bytes, {});
    REQUIRE(full.status == solve_status::feasible);
    CHECK(full.overhead == 0.0);
    // A tighter budget: the search picks the most snapshots that fit, so the plan fits and one
    // more snapshot would not (or s is already l + 1).
    const std::int64_t tight_budget = all.peak_bytes * 3 / 4;
    const remat_result tight = revolve_plan(t, tight_budget, {});
    REQUIRE(tight.stats.snapshots);
    const std::size_t s_used = *tight.stats.snapshots;
    if (tight.status == solve_status::feasible) {
      ++tight_feasible;
      CHECK(simulate_plan(t, tight.plan).peak_bytes <= tight_budget);
      CHECK(tight.total_cost > g.total_cost());  // a quarter less memory costs recomputation
      if (s_used <= l) CHECK(revolve_plan(t, unlimited_budget, {.snapshots = s_used + 1, .use_spare_memory = false}).peak_bytes > tight_budget);
    } else {
      CHECK((tight.status == solve_status::no_solution || tight.status == solve_status::infeasible));
      CHECK(revolve_plan(t, unlimited_budget, {.snapshots = s_used}).peak_bytes > tight_budget);
    }
  }
  CHECK(tight_feasible >= 2);  // the tight-budget checks ran on plans, not only on refusals
}

TEST_CASE("revolve on non-chain and shared training graphs: valid plans") {
  std::vector<dataflow_graph> graphs;
  for (std::uint64_t seed = 0; seed < 10; ++seed) graphs.push_back(random_training_graph(12, 0.2, seed));
  for (const auto& p : shared_training_graphs()) graphs.push_back(read_json_graph(p));
  std::size_t checked = 0;
  for (const auto& t : graphs) {
    CAPTURE(t[boost::graph_bundle].name);
    const remat_result all = checkpoint_all_plan(t, unlimited_budget);
    for (double frac : {1.0, 0.8}) {
      const auto budget = static_cast<std::int64_t>(frac * static_cast<double>(all.peak_bytes));
      const remat_result r = revolve_plan(t, budget, {});
      if (r.status != solve_status::feasible) {
        CHECK((r.status == solve_status::no_solution || r.status == solve_status::infeasible));
        CHECK(r.plan.steps.empty());
        continue;
      }
      ++checked;
      const plan_simulation sim = simulate_plan(t, r.plan);
      CHECK(sim.peak_bytes == r.peak_bytes);
      CHECK(sim.peak_bytes <= budget);
    }
    for (std::size_t s : {1u, 2u, 4u}) {
      const remat_result r = revolve_plan(t, unlimited_budget, {.snapshots = s});
      REQUIRE(r.status == solve_status::feasible);
      CHECK(simulate_plan(t, r.plan).total_cost == doctest::Approx(r.total_cost));
    }
  }
  CHECK(checked >= graphs.size());  // at least the full-budget plan of every graph was checked
}

TEST_CASE("revolve: binomials are exact, then saturate") {
  CHECK(detail::binomial(5, 2) == 10);
  CHECK(detail::binomial(5, 7) == 0);
  CHECK(detail::binomial(60, 30) == 118264581564861424ULL);
  CHECK(detail::binomial(200, 100) == detail::binomial_cap);
  // Huge l: r grows slowly and t(l, s) stays exact.
  CHECK(revolve_forward_steps(1'000'000, 20) > 1'000'000);
}

TEST_CASE("revolve_plan: snapshots 0 is an option_error naming it, thrown before any work") {
  const dataflow_graph t = chain_training_graph(4, 7, true);
  try {
    (void)revolve_plan(t, -1, {.snapshots = 0});
    FAIL("nothing thrown");
  } catch (const option_error& e) {
    CHECK(e.option() == "snapshots");
    CHECK(std::string(e.what()) == "revolve_plan: snapshots must be at least 1");
  }
  CHECK_NOTHROW(check_revolve_options({.snapshots = 1}));
  CHECK_NOTHROW(check_revolve_options({.snapshots = std::nullopt, .max_revolve_factor = 0}));
  CHECK(revolve_plan(t, unlimited_budget, {.snapshots = 1}).status == solve_status::feasible);
  CHECK(revolve_plan(t, unlimited_budget, {.max_revolve_factor = 0}).status == solve_status::feasible);
}

TEST_CASE("revolve: long chains on a small stack (no recursion over snapshots)") {
  // The schedule's generator once recursed once per snapshot: with s = l + 1 its depth was l.
  for (const auto [l, s] : {std::pair<std::size_t, std::size_t>{100000, 100001}, {100000, 300}}) {
    CAPTURE(l);
    CAPTURE(s);
    revolve_schedule sched;
    run_on_small_stack([&] { sched = revolve_actions(l, s); });
    CHECK(sched.forward_steps == revolve_forward_steps(l, s));
    CHECK(replay(sched, l, s) == sched.forward_steps);
  }
  // The plan on a training chain runs the same generator (snapshot search and a given s).
  const std::size_t n = 20000;
  const dataflow_graph t = chain_training_graph(n, 3, true);
  remat_result all, searched;
  run_on_small_stack([&] {
    all = revolve_plan(t, unlimited_budget, {.snapshots = n});
    searched = revolve_plan(t, all.peak_bytes, {});
  });
  REQUIRE(all.status == solve_status::feasible);
  CHECK(all.overhead == 0.0);
  CHECK(simulate_plan(t, all.plan).peak_bytes == all.peak_bytes);
  REQUIRE(searched.status == solve_status::feasible);
  CHECK(searched.peak_bytes <= all.peak_bytes);
  CHECK(simulate_plan(t, searched.plan).peak_bytes == searched.peak_bytes);
}
