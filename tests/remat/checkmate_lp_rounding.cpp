#include <memsched/remat/checkmate_lp_rounding.hpp>
#include <memsched/remat/detail/checkmate_greedy.hpp>
#include <memsched/sim/simulate_order.hpp>
#include <memsched/sim/simulate_plan.hpp>

#ifdef MEMSCHED_HAVE_CBC
#include <memsched/solver/backends/cbc.hpp>
#endif
#ifdef MEMSCHED_HAVE_GLPK
#include <memsched/solver/backends/glpk.hpp>
#endif

#include "../support/brute_force_plans.hpp"
#include "../support/random_dag.hpp"
#include "../support/random_cases.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <limits>

using namespace memsched;
using namespace memsched::testing;

namespace {

std::vector<std::int64_t> some_budgets(const memory_graph& g, const std::vector<std::size_t>& order) {
  std::int64_t lb = 0;
  for (std::size_t v = 0; v < g.size(); ++v) {
    std::int64_t need = g.bytes(v) + g.workspace(v);
    for (auto p : g.predecessors(v)) need += g.bytes(p);
    lb = std::max(lb, need);
  }
  const std::int64_t peak = simulate_order(g, order).peak_bytes;
  return {lb - 1, lb, lb + (peak - lb) / 2, peak, g.total_bytes()};
}

std::vector<std::size_t> topo(const memory_graph& g) {
  const auto& t = g.topological_order();
  return {t.begin(), t.end()};
}

}  // namespace

TEST_CASE("staged eviction greedy: valid staged plans within the budget that encode as Checkmate starts") {
  int found = 0;
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    const memory_graph g(random_dag(3 + seed % 8, 0.35, seed + 500, 100, seed % 3 == 0));
    const auto order = topo(g);
    for (std::int64_t b : some_budgets(g, order)) {
      for (auto policy : memsched::detail::all_eviction_policies) {
        const auto computes = memsched::detail::staged_eviction_computes(g, order, b, policy);
        if (!computes) continue;
        ++found;
        const auto plan = plan_from_computes(g, std::span<const std::size_t>(*computes));
        const auto sim = simulate_plan(g, plan);
        CHECK(sim.peak_bytes <= b);
        const auto cm = build_checkmate_model(g, b, order);
        const auto x = encode_checkmate_plan(g, cm, plan);
        REQUIRE(x);
        CHECK(!cm.model.first_violation(*x));
      }
    }
  }
  CHECK(found > 100);
}

#if defined(MEMSCHED_HAVE_CBC) || defined(MEMSCHED_HAVE_GLPK)

namespace {

template <class Backend>
void check_rounding(const Backend& backend) {
  int feasible = 0, infeasible = 0;
  for (std::uint64_t seed = 0; seed < random_cases(24); ++seed) {
    const std::size_t n = 3 + seed % 5;  // 3..7
    const memory_graph g(random_dag(n, 0.4, seed + 3000, 100, seed % 4 == 2));
    const auto order = topo(g);
    for (std::int64_t b : some_budgets(g, order)) {
      CAPTURE(seed);
      CAPTURE(b);
      const auto staged = brute_force_min_cost_staged_plan(g, order, b);
      const auto r = checkmate_lp_plan(g, b, checkmate_lp_options{.backend = backend, .order = order, .rounding = {.random_roundings = 4}});
      // Proven infeasible only when it is; otherwise no_solution (the rounding may miss).
      if (r.status == solve_status::infeasible) CHECK_FALSE(has_solution(staged.status));
      if (!has_solution(staged.status)) {
        CHECK((r.status == solve_status::infeasible || r.status == solve_status::no_solution));
        CHECK(r.plan.steps.empty());
        ++infeasible;
        continue;
      }
      if (r.status == solve_status::no_solution) {
        CHECK(!r.message.empty());
        continue;
      }
      REQUIRE(r.status == solve_status::feasible);
      ++feasible;
      const auto sim = simulate_plan(g, r.plan);
      CHECK(sim.peak_bytes <= b);
      CHECK(r.peak_bytes == sim.peak_bytes);
      CHECK(r.total_cost == doctest::Approx(sim.total_cost));
      CHECK(r.total_cost >= staged.cost - 1e-9);  // no rounding beats the MILP optimum
      REQUIRE(r.cost_bound);
      CHECK(*r.cost_bound <= staged.cost + 1e-6);  // the LP bound
      if (b >= g.total_bytes()) CHECK(r.total_cost == doctest::Approx(g.total_cost()));  // nothing to recompute
    }
  }
  CHECK(feasible > static_cast<int>(random_cases(30)));
  CHECK(infeasible > static_cast<int>(random_cases(3)));
}

}  // namespace

#ifdef MEMSCHED_HAVE_CBC
TEST_CASE("checkmate_lp_plan with Clp: plans valid, within budget, between the LP bound and above the MILP optimum") {
  check_rounding(cbc_backend{});
}

TEST_CASE_TEMPLATE("checkmate_lp_plan over Boost graph types", G, vecs_graph, lists_graph, csr_graph) {
  const auto d = random_dag(7, 0.35, 91);
  const typed_graph<G> tg(d);
  const memory_graph g(d);
  const auto order = topo(g);
  const std::int64_t b = simulate_order(g, order).peak_bytes;
  const auto r = checkmate_lp_plan(tg.graph, b, checkmate_lp_options{.backend = cbc_backend{}, .order = order}, tg.maps());
  REQUIRE(r.status == solve_status::feasible);
  CHECK(simulate_plan(g, r.plan).peak_bytes <= b);
  CHECK(r.stats.order == order);
  CHECK(r.stats.backend == "cbc");
  CHECK(r.stats.lps_solved >= 1);
  CHECK(r.stats.roundings_fit >= 1);
}
#endif

#ifdef MEMSCHED_HAVE_GLPK
TEST_CASE("checkmate_lp_plan with GLPK") { check_rounding(glpk_backend{}); }
#endif

#endif

TEST_CASE("checkmate_lp_plan rejects bad input") {
  const memory_graph g(memory_graph_data{.num_nodes = 2, .edges = {{0, 1}}, .bytes = {1, 1}});
#ifdef MEMSCHED_HAVE_CBC
  CHECK_THROWS_AS((void)checkmate_lp_plan<cbc_backend>(g, -1), std::invalid_argument);
  CHECK_THROWS_AS((void)checkmate_lp_plan(g, 10, checkmate_lp_options{.backend = cbc_backend{}, .order = std::vector<std::size_t>{1, 0}}),
                  invalid_order);
  // A NaN gap is an option_error naming solver.relative_gap, thrown before the budget's check.
  try {
    (void)checkmate_lp_plan(g, -1, checkmate_lp_options{.backend = cbc_backend{}, .solver = {.relative_gap = std::nan("")}});
    FAIL("nothing thrown");
  } catch (const option_error& e) {
    CHECK(e.option() == "solver.relative_gap");
    CHECK(std::string(e.what()) == "checkmate_lp_plan: solver.relative_gap must be a number (not NaN)");
  }
  CHECK_NOTHROW(check_checkmate_lp_options(checkmate_lp_options{.backend = cbc_backend{}, .solver = {.relative_gap = -1}}));
#endif
  CHECK(g.size() == 2);
}

namespace {

/// Time limits of checkmate_lp_plan with `backend`: an expired limit (0, negative, NaN) solves no
/// LP and returns time_limit without a plan; huge limits mean none (the same plan as without).
template <class Backend>
void check_lp_limits(const Backend& backend) {
  for (std::uint64_t seed = 0; seed < 3; ++seed) {
    const memory_graph g(random_dag(9, 0.3, 60 + seed));
    const auto order = topo(g);
    const std::int64_t b = simulate_order(g, order).peak_bytes;
    CAPTURE(seed);
    for (double limit : {0.0, -1.0, std::nan("")}) {
      const auto r =
          checkmate_lp_plan(g, b, checkmate_lp_options{.backend = backend, .solver = {.time_limit = std::chrono::duration<double>(limit)}, .order = order});
      CHECK(r.status == solve_status::time_limit);
      CHECK(r.plan.steps.empty());
      CHECK(r.stats.lps_solved == 0);
      CHECK(r.stats.roundings == 0);
    }
    const auto free_run = checkmate_lp_plan(g, b, checkmate_lp_options{.backend = backend, .order = order});
    REQUIRE(free_run.status == solve_status::feasible);
    for (double limit : {1e12, std::numeric_limits<double>::infinity()}) {
      const auto r =
          checkmate_lp_plan(g, b, checkmate_lp_options{.backend = backend, .solver = {.time_limit = std::chrono::duration<double>(limit)}, .order = order});
      CHECK(r.status == solve_status::feasible);
      CHECK(r.total_cost == free_run.total_cost);
      CHECK(r.plan.steps.size() == free_run.plan.steps.size());
      CHECK(r.stats.lps_solved == free_run.stats.lps_solved);
      CHECK(r.stats.roundings == free_run.stats.roundings);
    }
  }
}

}  // namespace

#ifdef MEMSCHED_HAVE_CBC
TEST_CASE("checkmate_lp_plan with Clp: expired limits solve no LP; huge limits are none") {
  check_lp_limits(cbc_backend{});
  check_lp_limits(cbc_backend{.isolate_process = false});
}
#endif
#ifdef MEMSCHED_HAVE_GLPK
TEST_CASE("checkmate_lp_plan with GLPK: expired limits solve no LP; huge limits are none") {
  check_lp_limits(glpk_backend{});
  check_lp_limits(glpk_backend{.isolate_process = false});
}
#endif
