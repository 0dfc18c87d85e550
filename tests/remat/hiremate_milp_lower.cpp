// hiremate_milp_lower_solver (Checkmate's MILP through CBC at HiRemate's lowest level): on tiny
// random training graphs its plan costs exactly the cheaper of the heuristics' plan and the
// staged brute-force optimum along that plan's order; limits and the size cap leave the
// heuristics' plan; inside hiremate_plan it is called, its plans are valid within the budget,
// `max_vertices = 0` gives the default hierarchy's plan, and a node limit gives the same plan twice.

#include <memsched/graph/gpt.hpp>
#include <memsched/remat/hiremate.hpp>
#include <memsched/experimental/hiremate_milp_lower.hpp>
#include <memsched/remat/input_order.hpp>
#include <memsched/remat/training_graph.hpp>
#include <memsched/sim/simulate_order.hpp>
#include <memsched/sim/simulate_plan.hpp>
#include <memsched/solver/backends/cbc.hpp>

#include "../support/brute_force_plans.hpp"
#include "../support/no_remat_peak.hpp"
#include "../support/random_dag.hpp"
#include "../support/random_cases.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

using namespace memsched;
using testing::no_remat_peak;

namespace {

// No time limit: CBC proves each tiny model optimal, so the answer is the same on every machine.
hiremate_milp_lower_options<cbc_backend> exact_options() { return {.solver = {}}; }

remat_result heuristics_only(const memory_graph& g, std::int64_t budget) {
  return detail::hiremate::heuristic_plan(g, budget, {}, true, detail::call_deadline(std::chrono::steady_clock::now(), std::nullopt));
}

}  // namespace

TEST_CASE("hiremate_milp_lower_solver: the cheaper of the heuristics and the staged optimum along their order (brute force)") {
  const hiremate_lower_solver solve = hiremate_milp_lower_solver(exact_options());
  int compared = 0, milp_cheaper = 0;
  for (std::uint64_t seed = 1; seed <= testing::random_cases(24); ++seed) {
    const memory_graph g(testing::random_training_dag(4 + seed % 3, 0.4, seed));
    REQUIRE(g.size() <= 13);
    const std::int64_t peak = no_remat_peak(g), floor = peak_lower_bound(g);
    for (const double fraction : {0.55, 0.7, 0.85}) {
      const auto budget = std::max<std::int64_t>(floor, static_cast<std::int64_t>(fraction * static_cast<double>(peak)));
      const remat_result h = heuristics_only(g, budget);
      const remat_result r = solve(g, budget, {});
      if (!has_solution(h.status)) {
        // Without a heuristic plan the MILP runs along its own order; whatever it finds fits.
        if (has_solution(r.status)) CHECK(simulate_plan(g, r.plan).peak_bytes <= budget);
        continue;
      }
      REQUIRE(has_solution(r.status));
      const plan_simulation sim = simulate_plan(g, r.plan);
      CHECK(sim.peak_bytes <= budget);
      CHECK(sim.total_cost == doctest::Approx(r.total_cost));
      const auto staged = testing::brute_force_min_cost_staged_plan(g, first_computation_order(h.plan, g.size()), budget);
      REQUIRE(staged.status == solve_status::optimal);  // the heuristics' plan is in that space
      CHECK(r.total_cost == doctest::Approx(std::min(h.total_cost, staged.cost)));
      CHECK(r.total_cost >= testing::brute_force_min_cost_plan(g, budget).cost - 1e-9);
      if (r.stats.method == "checkmate-milp") {
        CHECK(r.total_cost < h.total_cost);
        ++milp_cheaper;
      }
      ++compared;
    }
  }
  CHECK(compared >= static_cast<int>(testing::random_cases(30)));
  CHECK(milp_cheaper >= 1);  // the MILP matters on some of them, or this test shows nothing
  MESSAGE(compared << " budgets compared with brute force; the MILP's plan cheaper at " << milp_cheaper);
}

TEST_CASE("hiremate_milp_lower_solver: a zero time share, a tiny memory cap or the size cap leave the heuristics' plan") {
  const hiremate_lower_solver exact = hiremate_milp_lower_solver(exact_options());
  // The first tiny graph and budget where the MILP's plan is cheaper than the heuristics'.
  std::optional<memory_graph> found;
  std::int64_t budget = 0;
  for (std::uint64_t seed = 1; seed <= 24 && !found; ++seed) {
    memory_graph g(testing::random_training_dag(4 + seed % 3, 0.4, seed));
    for (const double fraction : {0.55, 0.7, 0.85}) {
      budget = std::max<std::int64_t>(peak_lower_bound(g), static_cast<std::int64_t>(fraction * static_cast<double>(no_remat_peak(g))));
      if (exact(g, budget, {}).stats.method == "checkmate-milp") {
        found = std::move(g);
        break;
      }
    }
  }
  REQUIRE(found);
  const memory_graph& g = *found;
  const hiremate_lower_solver capped = hiremate_milp_lower_solver(hiremate_milp_lower_options<cbc_backend>{.max_vertices = g.size() - 1, .solver = {}});
  for (const auto& [solver, limits] : {std::pair{exact, hiremate_lower_limits{.time_limit = std::chrono::duration<double>(0)}},
                                       std::pair{exact, hiremate_lower_limits{.max_bytes = 1}},
                                       std::pair{capped, hiremate_lower_limits{}}}) {
    const remat_result r = solver(g, budget, limits);
    // A zero share also stops the DTR runs at once: the heuristics' plan under the same deadline.
    const remat_result expected = detail::hiremate::heuristic_plan(g, budget, {}, true, detail::call_deadline(std::chrono::steady_clock::now(), limits.time_limit));
    CHECK(r.plan == expected.plan);
    CHECK(r.stats.method != "checkmate-milp");
  }
}

TEST_CASE("hiremate_milp_lower_solver inside hiremate_plan: called, valid plans, the default plan with max_vertices 0, deterministic") {
  const memory_graph g = make_memory_graph(make_training_graph(make_gpt({.layers = 2, .hidden = 16, .heads = 2, .sequence = 8, .vocab = 20})));
  const std::int64_t peak = no_remat_peak(g);
  int lower_calls = 0, plans = 0;
  for (const int pct : {50, 80}) {
    const std::int64_t budget = std::max(peak_lower_bound(g), peak * pct / 100);
    std::atomic<int> calls{0};
    std::atomic<std::size_t> proven{0};
    const hiremate_lower_solver exact = hiremate_milp_lower_solver(hiremate_milp_lower_options<cbc_backend>{.solver = {.node_limit = 50}});
    hiremate_options o{.lower_solver =
                                 [&](const memory_graph& sub, std::int64_t b, const hiremate_lower_limits& l) {
                                   ++calls;
                                   remat_result r = exact(sub, b, l);
                                   const bool proof = r.status == solve_status::optimal || r.status == solve_status::infeasible;
                                   proven += proof;
                                   return r;
                                 },
                             .heuristic_start = false,
                             // (with the finished rounds' partition too, one of its MILP solves,
                             // under a node limit only, ran past 120 s)
                             .tuning = {.partitions = 1, .also_full_rounds = false}};
    o.tuning.budgets = 2;  // the test's time (where the MILP's plan is cheaper: the cases above)
    o.tuning.resident_levels = 1;
    const remat_result detailed = hiremate_plan(g, budget, o);
    const remat_result& r = detailed;
    lower_calls += calls.load();
    // The lowest level's report counts the solver's own proofs (one partition: every call).
    REQUIRE(!detailed.stats.hiremate->level_reports.empty());
    CHECK(detailed.stats.hiremate->level_reports.front().solves == static_cast<std::size_t>(calls.load()));
    CHECK(detailed.stats.hiremate->level_reports.front().proven == proven.load());
    if (!has_solution(r.status)) continue;
    ++plans;
    const plan_simulation sim = simulate_plan(g, r.plan);
    CHECK(sim.peak_bytes <= budget);
    CHECK(sim.total_cost == doctest::Approx(r.total_cost));
    CHECK(hiremate_plan(g, budget, o).plan == r.plan);  // node limit, no time limit: the same answer
    // The size cap at 0 leaves every solve to the heuristics: hiremate_plan's default lowest level.
    hiremate_options heuristics_o = o, default_o = o;
    heuristics_o.lower_solver = hiremate_milp_lower_solver(hiremate_milp_lower_options<cbc_backend>{.max_vertices = 0});
    default_o.lower_solver = {};
    CHECK(hiremate_plan(g, budget, heuristics_o).plan == hiremate_plan(g, budget, default_o).plan);
  }
  CHECK(lower_calls >= 4);  // hiremate_plan's lowest level went through it
  CHECK(plans >= 1);
}
