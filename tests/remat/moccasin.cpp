// Moccasin's CP model: the CP optimum equals the brute-force optimum over the staged plan space of
// the input order on random DAGs; every decoded plan is valid and within the budget.

#include <memsched/remat/detail/checkmate_greedy.hpp>
#include <memsched/remat/moccasin.hpp>
#include <memsched/sim/plan_from_computes.hpp>
#include <memsched/sim/simulate_order.hpp>
#include <memsched/sim/simulate_plan.hpp>

#include "../support/brute_force_plans.hpp"
#include "../support/option_error_of.hpp"
#include "../support/random_dag.hpp"

#ifdef MEMSCHED_HAVE_GECODE
#include <memsched/solver/backends/gecode.hpp>
#endif

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <vector>

using namespace memsched;
using namespace memsched::testing;

TEST_CASE("moccasin model: slots, intervals and the no-recomputation start") {
  // Chain 0 -> 1 -> 2 with an extra edge 0 -> 2; order 0 1 2.
  const memory_graph g(memory_graph_data{.num_nodes = 3, .edges = {{0, 1}, {1, 2}, {0, 2}}, .bytes = {4, 8, 12}, .cost = {1, 2, 3}});
  const moccasin_model m = make_moccasin_model(g, 20, moccasin_phase::min_cost, {.order = std::vector<std::size_t>{0, 1, 2}, .max_intervals = 2});
  CHECK(m.slots == 6);
  CHECK(m.byte_unit == 4);
  CHECK(m.budget_units == 5);
  CHECK(m.intervals[0].size() == 2);  // stages 1, 2 can recompute vertex 0
  CHECK(m.intervals[1].size() == 2);
  CHECK(m.intervals[2].size() == 1);  // the last vertex has no later stage
  CHECK(moccasin_model::slot(2, 0) == 3);
  // The plan without recomputation has peak 4 + 8 + 12 = 24 > 20: it is not a solution of phase 2
  // but is one of phase 1 (capacity 6 units).
  memsched::detail::moccasin_schedule s{{0, 0}, {2, 1}, {5, 2}};
  const moccasin_model m1 = make_moccasin_model(g, 20, moccasin_phase::min_peak, {.order = std::vector<std::size_t>{0, 1, 2}});
  auto e1 = memsched::detail::encode_moccasin(g, m1, s);
  REQUIRE(e1);
  CHECK(e1->second == 6);
  CHECK(e1->first[m1.capacity] == 6);
  auto e2 = memsched::detail::encode_moccasin(g, m, s);
  REQUIRE(e2);
  CHECK(e2->second > m.budget_units);  // over the phase-2 capacity
  // Tight ends: vertex 0 is last used by vertex 2 (slot 5), vertex 1 too; vertex 2 is an output.
  CHECK(e1->first[m1.intervals[0][0].end] == 6);
  CHECK(e1->first[m1.intervals[1][0].end] == 6);
  CHECK(e1->first[m1.intervals[2][0].end] == 6);
  CHECK(e1->first[m1.intervals[0][1].presence] == 0);
  // Decoding gives back the schedule, and the plan of the order.
  const std::vector<double> vals(e1->first.begin(), e1->first.end());
  CHECK(memsched::detail::decode_moccasin(m1, vals) == s);
  const std::vector<std::size_t> order{0, 1, 2};
  CHECK(decode_moccasin_solution(g, m1, vals) == plan_from_computes(g, std::span<const std::size_t>(order)));
  // A bad order throws.
  CHECK_THROWS_AS((void)make_moccasin_model(g, 20, moccasin_phase::min_cost, {.order = std::vector<std::size_t>{1, 0, 2}}), invalid_order);
  CHECK_THROWS_AS((void)make_moccasin_model(g, -1, moccasin_phase::min_cost, {}), std::invalid_argument);
  CHECK_THROWS_AS((void)make_moccasin_model(g, 20, moccasin_phase::min_cost, {.max_intervals = 0}), std::invalid_argument);
  try {
    (void)make_moccasin_model(g, 20, moccasin_phase::min_cost, {.max_intervals = 0});
  } catch (const option_error& e) {
    CHECK(e.option() == "max_intervals");
    CHECK(std::string(e.what()) == "make_moccasin_model: max_intervals must be >= 1");
  }
}

TEST_CASE("moccasin: plans are mapped into the staged domain of the order") {
  const memory_graph g(memory_graph_data{.num_nodes = 3, .edges = {{0, 1}, {1, 2}, {0, 2}}, .bytes = {4, 8, 12}});
  const std::vector<std::size_t> order{0, 1, 2};
  // compute 0, 1, free 0, recompute 0, compute 2.
  const execution_plan p{{{plan_op::compute, 0}, {plan_op::compute, 1}, {plan_op::free, 0}, {plan_op::compute, 0}, {plan_op::compute, 2}}};
  auto s = memsched::detail::moccasin_schedule_of_plan(g, order, p);
  REQUIRE(s);
  CHECK(*s == memsched::detail::moccasin_schedule{{0, 0}, {2, 1}, {3, 0}, {5, 2}});
  // First computations out of the input order do not map.
  const memory_graph h(memory_graph_data{.num_nodes = 3, .edges = {{0, 2}, {1, 2}}, .bytes = {1, 1, 1}});
  const execution_plan q{{{plan_op::compute, 1}, {plan_op::compute, 0}, {plan_op::compute, 2}}};
  CHECK_FALSE(memsched::detail::moccasin_schedule_of_plan(h, order, q));
}

#ifdef MEMSCHED_HAVE_GECODE

namespace {

// The budgets worth testing: from what every plan needs to the peak without recomputation.
std::vector<std::int64_t> budgets_of(const memory_graph& g, const std::vector<std::size_t>& order) {
  std::int64_t need = 0;
  for (std::size_t v = 0; v < g.size(); ++v) {
    std::int64_t b = g.bytes(v) + g.workspace(v);
    for (auto u : g.predecessors(v)) b += g.bytes(u);
    need = std::max(need, b);
  }
  const std::int64_t peak = order_peak(g, order);
  return {need - 1, need, (need + peak) / 2, peak - 1, peak};
}

}  // namespace

TEST_CASE("moccasin with Gecode: CP optimum == brute force over the staged plans (random DAGs up to 7 vertices)") {
  const gecode_backend exact{{.search = gecode_search::branch_and_bound}};
  constexpr std::uint64_t node_limit = 20000;  // search nodes per phase
  int compared = 0, infeasible = 0, proven_infeasible = 0, recomputing = 0;
  for (std::uint64_t seed = 0; seed < 24; ++seed) {
    const std::size_t n = 4 + seed % 4;
    const memory_graph g(random_dag(n, 0.4, seed, 60, seed % 3 == 0));
    const std::vector<std::size_t> order(g.topological_order().begin(), g.topological_order().end());
    for (std::int64_t budget : budgets_of(g, order)) {
      CAPTURE(seed);
      CAPTURE(budget);
      const brute_force_plan bf = brute_force_min_cost_staged_plan(g, order, budget);
      // Enough intervals to span the whole staged space. A counted search-node limit keeps the test
      // fast and deterministic: a few infeasibility proofs take Gecode (no clause learning) longer.
      const moccasin_options opt{.backend = exact, .solver = {.node_limit = node_limit}, .order = order,
                                 .max_intervals = static_cast<unsigned>(n)};
      const remat_result r = moccasin_plan(g, budget, opt);
      INFO(r.message);
      if (r.status == solve_status::infeasible) CHECK(bf.status == solve_status::infeasible);  // proofs are sound
      if (bf.status == solve_status::infeasible) {
        CHECK_FALSE(has_solution(r.status));
        CHECK(r.plan.steps.empty());
        ++infeasible;
        proven_infeasible += r.status == solve_status::infeasible;
        continue;
      }
      REQUIRE(has_solution(r.status));
      const plan_simulation sim = simulate_plan(g, r.plan);
      CHECK(sim.peak_bytes <= budget);
      CHECK(sim.total_cost == doctest::Approx(r.total_cost));
      CHECK(r.total_cost >= bf.cost - 1e-9);
      if (r.status == solve_status::optimal) {
        CHECK(r.total_cost == doctest::Approx(bf.cost));
        REQUIRE(r.cost_bound);
        CHECK(*r.cost_bound == doctest::Approx(bf.cost));
        ++compared;
        if (bf.cost > g.total_cost()) ++recomputing;
      }
      // The default two intervals per vertex: a restriction, so never cheaper, still valid.
      const remat_result r2 = moccasin_plan(g, budget, moccasin_options{.backend = exact, .solver = {.node_limit = node_limit}, .order = order});
      if (has_solution(r2.status)) {
        CHECK(simulate_plan(g, r2.plan).peak_bytes <= budget);
        CHECK(r2.total_cost >= bf.cost - 1e-9);
      }
    }
  }
  // Counted limits make these counts the same on every machine.
  MESSAGE("compared ", compared, ", infeasible ", infeasible, ", proven ", proven_infeasible, ", recomputing ", recomputing);
  CHECK(compared >= 55);
  CHECK(infeasible >= 20);
  CHECK(proven_infeasible * 4 >= infeasible * 3);  // the rest hit the node limit
  CHECK(recomputing >= 10);  // the comparison covers plans that recompute
}

TEST_CASE_TEMPLATE("moccasin over every graph type, with LNS and a start plan", G, vecs_graph, lists_graph, csr_graph) {
  for (std::uint64_t seed = 100; seed < 104; ++seed) {
    const auto d = random_dag(7, 0.35, seed);
    const typed_graph<G> tg(d);
    const memory_graph g(d);
    const std::vector<std::size_t> order(g.topological_order().begin(), g.topological_order().end());
    // The smallest budget with a plan.
    std::int64_t budget = 0;
    brute_force_plan bf;
    for (std::int64_t b : budgets_of(g, order)) {
      budget = b;
      bf = brute_force_min_cost_staged_plan(g, order, budget);
      if (bf.status == solve_status::optimal) break;
    }
    REQUIRE(bf.status == solve_status::optimal);
    // LNS from the brute-force plan itself: it maps into the staged domain and is already optimal.
    const moccasin_options opt{.backend = gecode_backend{{.search = gecode_search::lns, .lns_iterations = 300}},
                               .order = order,
                               .max_intervals = 7,
                               .start_plans = {bf.plan}};
    const remat_result r = moccasin_plan(tg.graph, budget, opt, tg.maps());
    CHECK_FALSE(r.stats.start_source.empty());
    REQUIRE(has_solution(r.status));
    CHECK(simulate_plan(g, r.plan).peak_bytes <= budget);
    CHECK(r.total_cost == doctest::Approx(bf.cost));
  }
}

TEST_CASE("moccasin: the encoded plan without recomputation is a solution of phase 1") {
  const memory_graph g(memory_graph_data{.num_nodes = 3, .edges = {{0, 1}, {1, 2}, {0, 2}}, .bytes = {4, 8, 12}, .cost = {1, 2, 3}});
  moccasin_model m1 = make_moccasin_model(g, 20, moccasin_phase::min_peak, {.order = std::vector<std::size_t>{0, 1, 2}});
  m1.model.start = memsched::detail::encode_moccasin(g, m1, {{0, 0}, {2, 1}, {5, 2}})->first;
  const solver_result r = gecode_backend{{.search = gecode_search::lns, .lns_iterations = 0}}.solve(m1.model, {});
  REQUIRE(has_solution(r.status));  // optimal: running vertex 2 needs 4 + 8 + 12 = 6 units at the root
  CHECK(r.objective == 6);
  const std::vector<std::int64_t> vals(r.values.begin(), r.values.end());
  CHECK_FALSE(m1.model.first_violation(vals).has_value());
}

TEST_CASE("moccasin on a hand-made chain: recompute the first value") {
  // 0 -> 1 -> 2 -> 3 and 0 -> 3; sizes 10 each; cost 5, 1, 1, 1. Budget 30: keeping 0 until 3 runs
  // needs 10 (0) + 10 (2) + 10 (3) = 30 at vertex 3 but 40 nowhere else... with 0 kept, running 2
  // holds 0, 1, 2 = 30; running 3 holds 0, 2, 3 = 30: no recomputation. Budget 29... vertex 3 needs
  // its inputs 0 and 2 and itself = 30: infeasible. Make the check with sizes 10, 20, 10, 10:
  // running 2 with 0 kept holds 10 + 20 + 10 = 40; budget 30 forces freeing 0 and recomputing it
  // in stage 3 (cost 5): running 3 holds 0, 2, 3 = 30.
  const memory_graph g(memory_graph_data{.num_nodes = 4, .edges = {{0, 1}, {1, 2}, {2, 3}, {0, 3}}, .bytes = {10, 20, 10, 10}, .cost = {5, 1, 1, 1}});
  const gecode_backend exact{{.search = gecode_search::branch_and_bound}};
  const remat_result r = moccasin_plan(g, 30, moccasin_options{.backend = exact});
  REQUIRE(r.status == solve_status::optimal);
  CHECK(r.total_cost == 13);
  CHECK(r.peak_bytes == 30);
  CHECK(std::count(r.plan.steps.begin(), r.plan.steps.end(), plan_step{plan_op::compute, 0}) == 2);
  CHECK(moccasin_plan(g, 29, moccasin_options{.backend = exact}).status == solve_status::infeasible);
  const remat_result all = moccasin_plan(g, 40, moccasin_options{.backend = exact});
  CHECK(all.total_cost == 8);
  CHECK(all.status == solve_status::optimal);
}

#endif

#ifdef MEMSCHED_HAVE_GECODE
TEST_CASE("moccasin with sizes beyond Gecode's integers (~1e12 bytes): rounded up, valid, and the small graph's optimum") {
  // Sizes b_v K + r_v with K = 1e10 and small r_v (so the gcd is 1 and the sizes in bytes pass
  // 2^31), budget B K + K / 2. A plan fits that budget exactly when it fits B in the small graph
  // (sizes b_v): the rounding (a unit of a few thousand bytes) loses less than K / 2, so the
  // rounded model has the small graph's plans and its optimum, which brute force gives.
  const gecode_backend exact{{.search = gecode_search::branch_and_bound}};
  constexpr std::int64_t K = 10'000'000'000;
  int compared = 0, recomputing = 0, refused = 0;
  for (std::uint64_t seed = 0; seed < 12; ++seed) {
    const std::size_t n = 4 + seed % 3;
    const memory_graph_data small_data = random_dag(n, 0.4, seed, 60);
    memory_graph_data big_data = small_data;
    for (std::size_t v = 0; v < n; ++v) big_data.bytes[v] = small_data.bytes[v] * K + static_cast<std::int64_t>((v * 7919 + seed) % 1000);
    const memory_graph small(small_data), big(big_data);
    const std::vector<std::size_t> order(small.topological_order().begin(), small.topological_order().end());
    for (std::int64_t budget : budgets_of(small, order)) {
      CAPTURE(seed);
      CAPTURE(budget);
      const brute_force_plan bf = brute_force_min_cost_staged_plan(small, order, budget);
      const moccasin_options opt{.backend = exact, .solver = {.node_limit = 20000}, .order = order,
                                 .max_intervals = static_cast<unsigned>(n)};
      const std::int64_t big_budget = budget * K + K / 2;
      const remat_result r = moccasin_plan(big, big_budget, opt);
      INFO(r.message);
      CHECK(r.status != solve_status::error);
      // Infeasible only from the bound in bytes (a vertex and its inputs over the budget), never
      // from the rounded model's search: that ends in no_solution.
      if (r.status == solve_status::infeasible) {
        CHECK(bf.status == solve_status::infeasible);
        CHECK(r.message.find(" bytes") != std::string::npos);  // the bound, in bytes
      }
      if (!has_solution(r.status)) {
        refused += bf.status == solve_status::infeasible;
        continue;
      }
      CHECK(r.message.find("rounded up to units of") != std::string::npos);
      REQUIRE(has_solution(bf.status));
      const plan_simulation sim = simulate_plan(big, r.plan);
      CHECK(sim.peak_bytes <= big_budget);
      CHECK(simulate_plan(small, r.plan).peak_bytes <= budget);
      CHECK(r.status == solve_status::feasible);  // optimal only for the rounded sizes
      CHECK(r.total_cost == doctest::Approx(bf.cost));
      ++compared;
      if (bf.cost > small.total_cost()) ++recomputing;
    }
  }
  MESSAGE("compared ", compared, ", recomputing ", recomputing, ", no plan (infeasible by brute force) ", refused);
  CHECK(compared >= 20);
  CHECK(recomputing >= 4);
  CHECK(refused >= 5);
  // The model itself: a coarser unit, sizes rounded up, every memory value within Gecode's range.
  memory_graph_data d = random_dag(6, 0.4, 1, 60);
  for (auto& b : d.bytes) b = b * K + 1;
  const memory_graph g(d);
  const std::vector<std::size_t> order(g.topological_order().begin(), g.topological_order().end());
  const moccasin_model m = memsched::detail::build_moccasin_model(g, order, g.total_bytes(), moccasin_phase::min_peak,
                                                        std::vector<unsigned>(6, 2), g.total_bytes());
  CHECK(m.rounded);
  CHECK(m.byte_unit > 1);
  for (std::size_t v = 0; v < 6; ++v) {
    CHECK(m.units(g.bytes(v)) * m.byte_unit >= g.bytes(v));
    CHECK(m.units(g.bytes(v)) <= memsched::detail::moccasin_value_limit);
  }
  CHECK(m.budget_units <= memsched::detail::moccasin_value_limit);
  CHECK(m.model.variables()[m.capacity].upper <= memsched::detail::moccasin_capacity_limit(g, order, std::vector<unsigned>(6, 2)));
}

TEST_CASE("moccasin: a start plan at the budget that rounding pushes over it is returned") {
  // Chain 0 -> 1 -> 2, sizes 3e9 + 1, 3e9 + 3, 3e9 + 5 (gcd 1, sum 9e9 beyond Gecode's integers:
  // unit ceil(9e9 / ~2.1e9) = 5 bytes). Budget b1 + b2 = 6,000,000,008 bytes: the plan without
  // recomputation fits it exactly (running 2 holds 1 and 2; running 1 holds 0 and 1, 4 bytes
  // less). Rounded up, 1 and 2 need 600,000,001 units each, one more than the 1,200,000,001 the
  // budget gives: no schedule fits the model, every schedule fits in bytes.
  const memory_graph g(memory_graph_data{.num_nodes = 3, .edges = {{0, 1}, {1, 2}}, .bytes = {3'000'000'001, 3'000'000'003, 3'000'000'005},
                                         .cost = {1, 1, 1}});
  const std::int64_t budget = 6'000'000'008;
  const std::vector<std::size_t> order{0, 1, 2};
  const moccasin_model m = memsched::detail::build_moccasin_model(g, order, budget, moccasin_phase::min_cost, {2, 2, 2}, g.total_bytes());
  REQUIRE(m.byte_unit == 5);
  REQUIRE(m.units(g.bytes(1)) + m.units(g.bytes(2)) == m.budget_units + 1);
  const gecode_backend exact{{.search = gecode_search::branch_and_bound}};
  // The eviction greedy along the order is a start (and here the answer) without any plan given.
  const remat_result r = moccasin_plan(g, budget, moccasin_options{.backend = exact, .order = order});
  INFO(r.message);
  REQUIRE(r.status == solve_status::feasible);  // nothing is proven about plans outside the model
  CHECK(r.stats.start_source == "eviction greedy 0");
  CHECK(r.message.find("the cheapest start plan within the budget is returned") != std::string::npos);
  CHECK(r.total_cost == 3);
  CHECK_FALSE(r.cost_bound.has_value());
  const plan_simulation sim = simulate_plan(g, r.plan);
  CHECK(sim.peak_bytes == budget);
  CHECK(r.peak_bytes == budget);
  // A caller's plan comes first (the greedy's equal plans do not replace it).
  const remat_result given = moccasin_plan(g, budget, moccasin_options{.backend = exact, .order = order, .start_plans = {r.plan}});
  CHECK(given.status == solve_status::feasible);
  CHECK(given.stats.start_source == "plan 0");
  CHECK(given.plan == r.plan);
}

TEST_CASE("moccasin is never dearer than the eviction greedy along its order, sizes rounded or not") {
  // Random DAGs at budgets equal to a greedy plan's own peak (the hardest case for rounded sizes:
  // the plan fits exactly), with sizes in bytes (the model is exact) and x 1e10 + small odd parts
  // (rounded): a plan within the budget, never dearer than the cheapest greedy start, never
  // cheaper than the staged brute-force optimum along the order.
  const gecode_backend lns{{.search = gecode_search::lns, .lns_iterations = 50}};
  int checked = 0, returned_start = 0;
  for (std::uint64_t seed = 0; seed < 16; ++seed)
    for (const bool huge : {false, true}) {
      memory_graph_data d = random_dag(9, 0.3, seed, 60);
      if (huge)
        for (std::size_t v = 0; v < d.bytes.size(); ++v) d.bytes[v] = d.bytes[v] * 10'000'000'000 + static_cast<std::int64_t>(2 * v + 1);
      const memory_graph g(d);
      const std::vector<std::size_t> order(g.topological_order().begin(), g.topological_order().end());
      const memsched::detail::call_deadline no_limit(std::chrono::steady_clock::now(), std::nullopt);
      const std::int64_t no_remat = simulate_order(g, order).peak_bytes;
      for (const std::int64_t target : {no_remat / 2, no_remat * 3 / 4, no_remat * 9 / 10}) {
        const auto greedy = memsched::detail::eviction_start_plans(g, order, target, no_limit);
        for (const auto& [plan, name] : greedy) {
          const plan_simulation own = simulate_plan(g, plan);
          const std::int64_t budget = own.peak_bytes;
          double cheapest = std::numeric_limits<double>::infinity();
          for (const auto& [p, n] : memsched::detail::eviction_start_plans(g, order, budget, no_limit))
            if (const plan_simulation s = simulate_plan(g, p); s.peak_bytes <= budget) cheapest = std::min(cheapest, s.total_cost);
          CAPTURE(seed);
          CAPTURE(huge);
          CAPTURE(budget);
          const remat_result r = moccasin_plan(g, budget, moccasin_options{.backend = lns, .solver = {.node_limit = 2000}, .order = order});
          INFO(r.message);
          REQUIRE(has_solution(r.status));
          const plan_simulation sim = simulate_plan(g, r.plan);
          CHECK(sim.peak_bytes <= budget);
          CHECK(sim.total_cost == doctest::Approx(r.total_cost));
          CHECK(r.total_cost <= cheapest * (1 + 1e-12));
          // And never below the optimum of its plan space (independent of the greedy): the staged
          // brute force along the same order.
          CHECK(r.total_cost >= testing::brute_force_min_cost_staged_plan(g, order, budget).cost * (1 - 1e-12));
          returned_start += r.message.find("is returned") != std::string::npos;
          ++checked;
        }
      }
    }
  MESSAGE("checked ", checked, ", a start plan returned ", returned_start);
  CHECK(checked >= 25);
  CHECK(returned_start >= 10);
}

TEST_CASE("moccasin where Gecode's cumulative limits the capacity (sizes within 32 bits, long horizon): a valid plan, not an error") {
  // 150 vertices: capacity x (sum of start widths) x tasks must stay below 2^53, which leaves
  // about 1e7 capacity units; sizes up to 1e6 bytes with gcd 1 sum to more, so the unit grows.
  memory_graph_data d = random_dag(150, 0.03, 5, 1'000'000);
  for (std::size_t v = 0; v < d.bytes.size(); ++v) d.bytes[v] += static_cast<std::int64_t>(v % 2);  // gcd 1
  const memory_graph g(d);
  const std::vector<std::size_t> order(g.topological_order().begin(), g.topological_order().end());
  const std::int64_t limit = memsched::detail::moccasin_capacity_limit(g, order, std::vector<unsigned>(150, 2));
  double all = 0;
  for (std::size_t v = 0; v < g.size(); ++v) all += static_cast<double>(g.bytes(v));
  REQUIRE(all > static_cast<double>(limit));  // the case is the one meant
  const std::int64_t budget = simulate_order(g, order).peak_bytes * 101 / 100;
  const remat_result r = moccasin_plan(g, budget, moccasin_options{.backend = gecode_backend{}, .solver = {.node_limit = 200}, .order = order});
  INFO(r.message);
  REQUIRE(has_solution(r.status));
  CHECK(r.message.find("rounded up to units of") != std::string::npos);
  CHECK(simulate_plan(g, r.plan).peak_bytes <= budget);
}

TEST_CASE("moccasin refuses a model over max_bytes, naming both sizes") {
  const memory_graph g(random_dag(40, 0.2, 3));
  const std::vector<std::size_t> order(g.topological_order().begin(), g.topological_order().end());
  const std::int64_t budget = simulate_order(g, order).peak_bytes * 3 / 4;
  const remat_result r = moccasin_plan(g, budget, moccasin_options{.backend = gecode_backend{}, .order = order, .max_bytes = 50000});
  CHECK(r.status == solve_status::no_solution);
  CHECK(r.plan.steps.empty());
  CHECK(r.message.find("moccasin_plan: the model would need about") != std::string::npos);
  CHECK(r.message.find("over the memory cap of 50 kB (max_bytes)") != std::string::npos);
  CHECK(r.stats.variables > 0);
  // The estimate grows with the graph: a graph twice as large needs more.
  const memory_graph g2(random_dag(80, 0.2, 3));
  const std::vector<std::size_t> o2(g2.topological_order().begin(), g2.topological_order().end());
  const auto e1 = memsched::detail::moccasin_model_size(g, order, std::vector<unsigned>(40, 2), "gecode");
  const auto e2 = memsched::detail::moccasin_model_size(g2, o2, std::vector<unsigned>(80, 2), "gecode");
  CHECK(e2.bytes() > e1.bytes());
  CHECK(e2.domain_values > 2 * e1.domain_values);
}
#endif

#ifdef MEMSCHED_HAVE_GECODE
TEST_CASE("moccasin: expired limits return at once, time_limit and no plan below the no-remat peak; huge limits are none") {
  std::size_t seeds_checked = 0;
  for (std::uint64_t seed = 0; seed < 4; ++seed) {
    const memory_graph g(random_dag(9, 0.3, 80 + seed));
    const std::vector<std::size_t> order(g.topological_order().begin(), g.topological_order().end());
    const std::int64_t peak = order_peak(g, order);
    const std::int64_t tight = budgets_of(g, order)[2];
    CAPTURE(seed);
    // Only a budget below the no-remat peak needs phase 1, whose answer is then fixed.
    const bool below_peak = tight < peak;
    seeds_checked += below_peak;
    for (double limit : {0.0, -1.0, std::nan("")}) {
      const moccasin_options opt{.backend = gecode_backend{}, .solver = {.time_limit = std::chrono::duration<double>(limit)}, .order = order};
      // The plan without recomputation fits: it is the answer (phase 2 had no time).
      const remat_result fits = moccasin_plan(g, peak, opt);
      REQUIRE(has_solution(fits.status));
      CHECK(fits.total_cost == doctest::Approx(g.total_cost()));
      CHECK(simulate_plan(g, fits.plan).peak_bytes <= peak);
      // Below it phase 1 had no time and there is no start plan: time_limit (nothing proven), no plan.
      if (!below_peak) continue;
      const remat_result r = moccasin_plan(g, tight, opt);
      CHECK(r.status == solve_status::time_limit);
      CHECK(r.plan.steps.empty());
    }
    // Huge and infinite limits are no limits: the same answer as without one (the search bounded
    // by LNS iterations and search nodes: without a node limit, proving seed 1's budget infeasible
    // and seed 3's search took 3-6 s per run, 33 s of this case in Release).
    const gecode_backend lns{{.search = gecode_search::automatic, .lns_iterations = 50}};
    constexpr std::uint64_t node_limit = 20000;
    const remat_result free_run = moccasin_plan(g, tight, moccasin_options{.backend = lns, .solver = {.node_limit = node_limit}, .order = order});
    for (double limit : {1e12, std::numeric_limits<double>::infinity()}) {
      const remat_result r = moccasin_plan(
          g, tight, moccasin_options{.backend = lns, .solver = {.time_limit = std::chrono::duration<double>(limit), .node_limit = node_limit}, .order = order});
      CHECK(r.status == free_run.status);
      CHECK(r.total_cost == free_run.total_cost);
      CHECK(r.plan.steps.size() == free_run.plan.steps.size());
    }
  }
  CHECK(seeds_checked > 0);
}
#endif

#ifdef MEMSCHED_HAVE_GECODE
TEST_CASE("moccasin: each bad option is an option_error naming its field, thrown before any work") {
  const memory_graph g(random_dag(6, 0.3, 5));
  using options = moccasin_options<gecode_backend>;
  // The budget is negative too: the options are checked first.
  const auto option_of = [&](const options& o) { return testing::option_error_of("moccasin_plan", [&] { (void)moccasin_plan(g, -1, o); }); };
  const double nan = std::nan("");
  CHECK(option_of({.max_intervals = 0}) == "max_intervals");
  CHECK(option_of({.phase1_share = -0.1}) == "phase1_share");
  CHECK(option_of({.phase1_share = 1.5}) == "phase1_share");
  CHECK(option_of({.phase1_share = nan}) == "phase1_share");
  CHECK(option_of({.phase1_share_with_start = -0.1}) == "phase1_share_with_start");
  CHECK(option_of({.phase1_share_with_start = nan}) == "phase1_share_with_start");
  CHECK(option_of({.solver = {.relative_gap = nan}}) == "solver.relative_gap");
  // The boundary values are valid.
  CHECK_NOTHROW(check_moccasin_options(options{.max_intervals = 1, .phase1_share = 0, .phase1_share_with_start = 0}));
  CHECK_NOTHROW(check_moccasin_options(options{.phase1_share = 1, .phase1_share_with_start = 1}));
  CHECK_NOTHROW(check_moccasin_options(options{.solver = {.relative_gap = -1}}));  // counts as 0
  const std::int64_t peak = order_peak(g, std::vector<std::size_t>(g.topological_order().begin(), g.topological_order().end()));
  CHECK(has_solution(moccasin_plan(g, peak, options{.max_intervals = 1, .phase1_share = 0, .phase1_share_with_start = 1}).status));
}
#endif
