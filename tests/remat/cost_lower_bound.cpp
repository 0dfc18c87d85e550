// remat_cost_lower_bound (remat/cost_lower_bound.hpp): a hand-computed chain, brute force over
// every plan along an order and over every plan of tiny random DAGs (the bound never exceeds the
// optimum), plans of the library against the bound on in-place graphs, graph types, bad input.

#include <memsched/order/kahn.hpp>
#include <memsched/order/serenity.hpp>
#include <memsched/remat/cost_lower_bound.hpp>
#include <memsched/remat/lifetime_search.hpp>
#include <memsched/sim/simulate_order.hpp>

#include "../support/brute_force_plans.hpp"
#include "../support/random_dag.hpp"
#include "../support/training_chain.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

using namespace memsched;
using namespace memsched::testing;

// The bound along an order, step by step as its definition reads: at each step above the budget,
// the fractional cover (cheapest cost per byte first) by the live values v does not read. An
// independent walk over every ranked value per step, against the library's indexed one.
static double extra_along_by_walk(const memory_graph& g, std::int64_t budget, const std::vector<std::size_t>& order) {
  const auto ranked = memsched::detail::droppable_by_cost_per_byte(g);
  memory_model model(g);
  std::vector<char> live(g.size(), 0), reads(g.size(), 0);
  double extra = 0;
  for (std::size_t v : order) {
    for (auto p : g.predecessors(v)) reads[p] = 1;
    const std::int64_t running = memsched::detail::least_running_bytes(g, v, model.live());
    if (running > budget)
      extra = std::max(extra, memsched::detail::fractional_cover(g, ranked, running - budget, [&](std::size_t u) { return live[u] && !reads[u]; }));
    for (auto p : g.predecessors(v)) reads[p] = 0;
    model.step(v, [&](std::size_t u) { live[u] = 0; });
    if (!memory_model::dies_unread(g, v)) live[v] = 1;
  }
  return extra;
}

TEST_CASE("remat_cost_lower_bound: the training chain by hand") {
  // x0 -> x1 -> x2 -> x3 -> g2 -> g1 -> g0 with x2 -> g2, x1 -> g1, x0 -> g0; 10 bytes and cost 1
  // each, one order. Without recomputation g2 runs with x0..x3 resident: 50 bytes.
  const memory_graph g = training_chain_with_roles();
  const std::vector<std::size_t> order{0, 1, 2, 3, 4, 5, 6};
  const auto along = [&](std::int64_t budget) { return remat_cost_lower_bound(g, budget, cost_lower_bound_options{.order = order}); };
  const auto free = [&](std::int64_t budget) { return remat_cost_lower_bound(g, budget, cost_lower_bound_options{.peak_bound = 50}); };
  // 50: nothing to drop.
  CHECK(along(50).total_cost == 7);
  CHECK(along(50).steps_over == 0);
  CHECK(free(50).total_cost == 7);
  // 40: at g2 (50 bytes) 10 bytes of x0 or x1 go: one recomputation, the optimum.
  const auto a40 = along(40);
  CHECK(a40.status == solve_status::feasible);
  CHECK(a40.total_cost == 8);
  CHECK(a40.overhead == doctest::Approx(1.0 / 7));
  CHECK(a40.steps_over == 1);
  CHECK(free(40).total_cost == 8);
  CHECK(brute_force_min_cost_plan(g, 40).cost == 8);
  // 30: x3 (40 bytes), g2 (50: x0 and x1 both go) and g1 (40: x0) are over; the largest cover
  // is 2. Over every plan: 50 - 30 = 20 bytes at 0.1 per byte.
  const auto a30 = along(30);
  CHECK(a30.total_cost == 9);
  CHECK(a30.steps_over == 3);
  CHECK(free(30).total_cost == 9);
  CHECK(brute_force_min_cost_plan(g, 30).cost >= 9);
  // 29: below what g2 needs with its inputs (x3, x2: 30 bytes).
  CHECK(along(29).status == solve_status::infeasible);
  CHECK(free(29).status == solve_status::infeasible);
  CHECK(!free(29).message.empty());
  // Without a peak bound the search over orders (one order here) finds the same 2; without it
  // either, nothing beyond the sum of costs.
  const auto searched = remat_cost_lower_bound(g, 30, cost_lower_bound_options{});
  CHECK(searched.total_cost == 9);
  CHECK(searched.search_complete);
  CHECK(searched.states == 8);  // the empty set and the seven prefixes of the one order
  CHECK(remat_cost_lower_bound(g, 30, cost_lower_bound_options{.max_states = 0}).total_cost == 7);
}

TEST_CASE("remat_cost_lower_bound: never above the optimum, along an order and over every plan (brute force)") {
  std::size_t along_cases = 0, along_above_sum = 0, along_recompute = 0, along_tight = 0, free_cases = 0, free_above_sum = 0, infeasible = 0,
              search_above_peak = 0;
  for (std::uint64_t seed = 0; seed < 60; ++seed) {
    const std::size_t n = 4 + seed % 5;  // up to 8 vertices
    auto d = random_dag(n, 0.45, seed + 7, 60);
    if (seed % 3 == 1) d = with_random_outputs(d, seed);
    const memory_graph g(d);
    const order_result best = serenity_order(g);
    REQUIRE(best.status == solve_status::optimal);
    const std::vector<std::size_t> serenity(best.order.begin(), best.order.end());
    const std::vector<std::size_t> kahn = kahn_order(g).order;
    const std::int64_t lower = [&] {
      std::int64_t lb = 0;
      for (std::size_t v = 0; v < g.size(); ++v) lb = std::max(lb, memory_model::min_running_bytes(g, v));
      return lb;
    }();
    for (std::int64_t budget : {best.peak_bytes, lower, (lower + best.peak_bytes) / 2, best.peak_bytes - 1, lower - 1}) {
      INFO("seed " << seed << " budget " << budget);
      const auto any = brute_force_min_cost_plan(g, budget);
      const auto free = remat_cost_lower_bound(g, budget, cost_lower_bound_options{.peak_bound = best.peak_bytes});
      const auto peak_only = remat_cost_lower_bound(g, budget, cost_lower_bound_options{.peak_bound = best.peak_bytes, .max_states = 0});
      // The search over orders finishes on these sizes with the least, over every topological
      // order, of the bound along it; never below the bound from the peak alone.
      if (free.status == solve_status::feasible) {
        CHECK(free.search_complete);
        // The search's step covers are the walk's; the bound along each order (the covering LP
        // over the same steps) is at least that.
        double least = std::numeric_limits<double>::infinity(), least_along = least;
        for_each_topological_order(g, [&](const std::vector<std::size_t>& o) {
          least = std::min(least, g.total_cost() + extra_along_by_walk(g, budget, o));
          least_along = std::min(least_along, remat_cost_lower_bound(g, budget, cost_lower_bound_options{.order = o}).total_cost);
        });
        CHECK(free.total_cost == doctest::Approx(std::max(least, peak_only.total_cost)));
        CHECK(least_along >= least - 1e-9 * least);
        CHECK(free.total_cost >= peak_only.total_cost);
        if (free.total_cost > peak_only.total_cost + 1e-9) ++search_above_peak;
      }
      if (any.status == solve_status::infeasible) {
        ++infeasible;
        continue;  // the bound may not prove it (a plan may not exist for reasons it ignores)
      }
      REQUIRE(free.status == solve_status::feasible);
      ++free_cases;
      CHECK(free.total_cost <= any.cost + 1e-9);
      CHECK(free.total_cost >= g.total_cost() - 1e-9);
      if (free.total_cost > g.total_cost() + 1e-9) ++free_above_sum;
      for (const auto* order : {&serenity, &kahn}) {
        const auto staged = brute_force_min_cost_staged_plan(g, *order, budget);
        const auto along = remat_cost_lower_bound(g, budget, cost_lower_bound_options{.order = *order});
        if (staged.status == solve_status::infeasible) continue;
        REQUIRE(along.status == solve_status::feasible);
        ++along_cases;
        CHECK(along.total_cost <= staged.cost + 1e-9);
        // Along an order the bound is at least the free one (the peak step is over by P - budget).
        CHECK(along.total_cost >= free.total_cost - 1e-9);
        if (along.total_cost > g.total_cost() + 1e-9) ++along_above_sum;
        if (staged.cost <= g.total_cost() + 1e-9) continue;
        ++along_recompute;
        if (std::abs(along.total_cost - staged.cost) <= 1e-9) ++along_tight;
      }
    }
  }
  MESSAGE("along an order: " << along_cases << " cases, " << along_above_sum << " above the sum of costs; of the "
                             << along_recompute << " that need recomputation " << along_tight << " equal to the optimum; free: " << free_cases << " cases, " << free_above_sum << " above the sum; "
                             << infeasible << " infeasible; the search over orders above the peak's bound " << search_above_peak);
  // The bound says something: most cases that need recomputation get more than the sum of costs.
  CHECK(along_above_sum * 3 >= along_cases);
  CHECK(free_above_sum * 4 >= free_cases);
  CHECK(along_tight > 0);
  CHECK(search_above_peak > 0);
}

TEST_CASE("remat_cost_lower_bound: in-place graphs, against the lifetime search's plans") {
  // The brute force has no in-place rule; the lifetime search's plans are re-checked by the
  // simulator (which has it), so none may cost less than the bound along its order.
  std::size_t plans = 0;
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    memory_graph_data d = random_dag(12, 0.3, seed + 90, 40);
    d.inplace.assign(d.num_nodes, 0);
    for (std::size_t v = 0; v < d.num_nodes; v += 2) d.inplace[v] = 1;
    for (auto [p, v] : d.edges)
      if (d.inplace[v]) d.bytes[v] = d.bytes[p];  // equal sizes let v take over p's buffer
    const memory_graph g(d);
    const order_result best = serenity_order(g);
    const std::vector<std::size_t> order(best.order.begin(), best.order.end());
    for (std::int64_t cut : {0, 10, 20, 30}) {
      const std::int64_t budget = best.peak_bytes - cut;
      const auto bound = remat_cost_lower_bound(g, budget, cost_lower_bound_options{.order = order});
      const auto plan = lifetime_search_plan(g, budget, lifetime_search_options{.order = order, .max_rounds = 50});
      INFO("seed " << seed << " budget " << budget);
      if (bound.status == solve_status::infeasible) {
        CHECK(!has_solution(plan.status));
        continue;
      }
      // Over every plan: the peak's bound is not used on in-place graphs (nothing beyond the sum
      // of costs); the search over orders is no higher than along this order.
      CHECK(remat_cost_lower_bound(g, budget, cost_lower_bound_options{.peak_bound = best.peak_bytes, .max_states = 0}).total_cost ==
            g.total_cost());
      const auto free = remat_cost_lower_bound(g, budget, cost_lower_bound_options{.peak_bound = best.peak_bytes});
      CHECK(free.total_cost <= bound.total_cost + 1e-9);
      if (!has_solution(plan.status)) continue;
      ++plans;
      CHECK(bound.total_cost <= plan.total_cost + 1e-9);
      CHECK(free.total_cost <= plan.total_cost + 1e-9);
    }
  }
  CHECK(plans >= 30);
}

TEST_CASE("remat_cost_lower_bound: the search over orders stopped by its state or work cap is still a bound") {
  std::size_t capped_cases = 0;
  for (std::uint64_t seed = 0; seed < 6; ++seed) {
    const memory_graph g(random_dag(14, 0.25, seed + 40, 50));
    const order_result best = serenity_order(g);
    const std::int64_t budget = best.peak_bytes * 3 / 4;
    INFO("seed " << seed << " budget " << budget);
    const auto full = remat_cost_lower_bound(g, budget, cost_lower_bound_options{.max_states = 10'000'000});
    if (full.status == solve_status::infeasible) continue;
    REQUIRE(full.search_complete);
    const auto capped = remat_cost_lower_bound(g, budget, cost_lower_bound_options{.max_states = 40});
    CHECK(!capped.search_complete);
    CHECK(capped.states >= 40);
    CHECK(capped.total_cost <= full.total_cost + 1e-9);
    CHECK(capped.total_cost >= g.total_cost());
    // Deterministic.
    CHECK(remat_cost_lower_bound(g, budget, cost_lower_bound_options{.max_states = 40}).total_cost == capped.total_cost);
    // The work cap (visits) stops it the same way, and counts what it did: a tenth of the full
    // search's work leaves it unfinished, with fewer sets.
    REQUIRE(full.work > 0);
    const std::size_t cap = full.work / 10;
    const auto worked = remat_cost_lower_bound(g, budget, cost_lower_bound_options{.max_states = 10'000'000, .max_work = cap});
    CHECK(!worked.search_complete);
    CHECK(worked.work >= cap);
    CHECK(worked.work < full.work);
    CHECK(worked.states < full.states);
    CHECK(worked.total_cost <= full.total_cost + 1e-9);
    CHECK(worked.total_cost >= g.total_cost());
    CHECK(remat_cost_lower_bound(g, budget, cost_lower_bound_options{.max_states = 10'000'000, .max_work = cap}).total_cost ==
          worked.total_cost);
    ++capped_cases;
  }
  CHECK(capped_cases >= 3);
}

TEST_CASE("remat_cost_lower_bound: the same bound from every graph type; bad input") {
  const auto d = random_dag(9, 0.4, 5, 50);
  const memory_graph g(d);
  const std::vector<std::size_t> order = kahn_order(g).order;
  const std::int64_t budget = serenity_order(g).peak_bytes * 4 / 5;
  const cost_lower_bound_options o{.order = order};
  const double ref = remat_cost_lower_bound(g, budget, o).total_cost;
  const dataflow_graph df = to_dataflow_graph(d);
  const typed_graph<vecs_graph> a(d);
  const typed_graph<lists_graph> b(d);
  CHECK(remat_cost_lower_bound(df, budget, o).total_cost == ref);
  CHECK(remat_cost_lower_bound(a.graph, budget, o, a.maps()).total_cost == ref);
  CHECK(remat_cost_lower_bound(b.graph, budget, o, b.maps()).total_cost == ref);

  CHECK_THROWS_AS((void)remat_cost_lower_bound(g, -1, o), std::invalid_argument);
  std::vector<std::size_t> reversed(order.rbegin(), order.rend());
  CHECK_THROWS_AS((void)remat_cost_lower_bound(g, budget, cost_lower_bound_options{.order = reversed}), invalid_order);
  CHECK_THROWS_AS((void)remat_cost_lower_bound(g, budget, cost_lower_bound_options{.order = std::vector<std::size_t>{0}}), invalid_order);
}


TEST_CASE("remat_cost_lower_bound: one value dropped before two readers is paid twice (the covering LP)") {
  // a (10 bytes) is read by c and f; b and d (50 bytes each, read by nobody) run with a live.
  // Budget 50: at b and at d a must go, before different readers, so every plan computes a three
  // times: 2 more than the sum of costs. One step alone proves 1.
  memory_graph_data d{.num_nodes = 5};
  d.edges = {{0, 2}, {0, 4}};
  d.bytes = {10, 50, 1, 50, 1};
  d.cost = {1, 1, 1, 1, 1};
  d.outputs = std::vector<std::size_t>{4};
  const memory_graph g(d);
  const std::vector<std::size_t> order{0, 1, 2, 3, 4};
  std::size_t steps_over = 0;
  CHECK(extra_along_by_walk(g, 50, order) == doctest::Approx(1.0));
  const auto r = remat_cost_lower_bound(g, 50, cost_lower_bound_options{.order = order});
  CHECK(r.total_cost == doctest::Approx(7.0));
  CHECK(r.steps_over == 2);
  CHECK(brute_force_min_cost_staged_plan(g, order, 50).cost == doctest::Approx(7.0));
  CHECK(memsched::detail::cost_extra_along_order(g, 50, order, steps_over) == doctest::Approx(2.0));
}

TEST_CASE("remat_cost_lower_bound: the covering LP's dual against brute force over its 0/1 solutions") {
  // Rows of random walks along Kahn's order: the ascent's value never exceeds the least cost of a
  // 0/1 cover (the program the LP relaxes), and is at least the largest single row's cover.
  std::size_t compared = 0, above_rows = 0;
  for (std::uint64_t seed = 0; seed < 80; ++seed) {
    const memory_graph g(random_dag(6 + seed % 7, 0.4, seed + 300, 60));
    const std::vector<std::size_t> order = kahn_order(g).order;
    const std::int64_t peak = simulate_order(g, order).peak_bytes;
    for (double fraction : {0.9, 0.75, 0.6}) {
      const auto budget = static_cast<std::int64_t>(fraction * static_cast<double>(peak));
      const memsched::detail::drop_cover_rows rows = memsched::detail::walk_steps_over_budget(g, budget, order).rows;
      if (rows.rows() == 0 || rows.gaps() > 16) continue;
      double best01 = std::numeric_limits<double>::infinity();
      for (std::uint32_t mask = 0; mask < (1u << rows.gaps()); ++mask) {
        bool covers = true;
        for (std::size_t r = 0; r < rows.rows() && covers; ++r) {
          std::int64_t dropped = 0;
          for (std::size_t e = rows.first[r]; e < rows.first[r + 1]; ++e)
            if (mask >> rows.gap[e] & 1) dropped += rows.bytes[rows.gap[e]];
          covers = dropped >= rows.need[r];
        }
        if (!covers) continue;
        double cost = 0;
        for (std::size_t k = 0; k < rows.gaps(); ++k)
          if (mask >> k & 1) cost += rows.cost[k];
        best01 = std::min(best01, cost);
      }
      const double bound = memsched::detail::drop_cover_bound(rows, memsched::detail::max_cover_work);
      INFO("seed " << seed << " budget " << budget);
      if (best01 == std::numeric_limits<double>::infinity()) {
        CHECK(bound == std::numeric_limits<double>::infinity());
        continue;
      }
      ++compared;
      CHECK(bound <= best01 + 1e-9 * (1 + best01));
      const double single = extra_along_by_walk(g, budget, order);
      CHECK(bound >= single - 1e-9 * (1 + single));
      if (bound > single + 1e-9 * (1 + single)) ++above_rows;
    }
  }
  MESSAGE(compared << " programs compared, " << above_rows << " above the largest single cover");
  CHECK(compared >= 40);
  CHECK(above_rows > 0);
}

TEST_CASE("remat_cost_lower_bound: along an order, at least the step-by-step walk on random training graphs") {
  std::size_t compared = 0, above_sum = 0, above_walk = 0;
  for (std::uint64_t seed = 100; seed < 130; ++seed) {
    const memory_graph g(random_training_dag(20 + seed % 40, 0.15, seed, 1000));
    const std::vector<std::size_t> order = kahn_order(g).order;
    const std::int64_t peak = simulate_order(g, order).peak_bytes;
    for (double fraction : {0.9, 0.7, 0.5, 0.35}) {
      const auto budget = static_cast<std::int64_t>(fraction * static_cast<double>(peak));
      const auto r = remat_cost_lower_bound(g, budget, cost_lower_bound_options{.order = order});
      if (r.status != solve_status::feasible) continue;
      INFO("seed " << seed << " budget " << budget);
      const double walk = g.total_cost() + extra_along_by_walk(g, budget, order);
      CHECK(r.total_cost >= walk - 1e-9 * walk);
      ++compared;
      if (walk > g.total_cost() + 1e-9) ++above_sum;
      if (r.total_cost > walk + 1e-9 * walk) ++above_walk;
    }
  }
  MESSAGE(compared << " bounds compared, " << above_sum << " of the walks above the sum of costs, " << above_walk
                   << " bounds above the walk");
  CHECK(compared >= 60);
  CHECK(above_sum * 2 >= compared);
  CHECK(above_walk > 0);
}
