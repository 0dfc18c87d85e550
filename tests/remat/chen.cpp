#include <memsched/remat/checkpoint_generalizations.hpp>
#include <memsched/remat/chen.hpp>

#include "support.hpp"

#include <doctest/doctest.h>

#include <cmath>

using namespace memsched;
using namespace memsched::testing;

TEST_CASE("sqrtn_checkpoints and greedy_checkpoints, by hand") {
  const std::vector<std::size_t> c{10, 11, 12, 13, 14, 15, 16, 17, 18, 19};  // k = 3
  CHECK(sqrtn_checkpoints(c) == std::vector<std::size_t>{12, 15, 18});
  CHECK(sqrtn_checkpoints(std::vector<std::size_t>{7}) == std::vector<std::size_t>{7});
  CHECK(sqrtn_checkpoints(std::vector<std::size_t>{}).empty());
  // Chain 0..4 with bytes 10, 20, 30, 40, 50: b = 45 checkpoints 2 (60 > 45) and 4 (90 > 45).
  const memory_graph g(memory_graph_data{.num_nodes = 5, .edges = {{0, 1}, {1, 2}, {2, 3}, {3, 4}}, .bytes = {10, 20, 30, 40, 50}});
  const std::vector<std::uint32_t> order{0, 1, 2, 3, 4};
  const std::vector<char> all(5, 1);
  CHECK(greedy_checkpoints(g, order, all, 45) == std::vector<std::size_t>{2, 4});
  CHECK(greedy_checkpoints(g, order, all, 0) == std::vector<std::size_t>{0, 1, 2, 3, 4});
  CHECK(greedy_checkpoints(g, order, all, 1000).empty());
  const std::vector<char> only3{0, 0, 0, 1, 0};
  CHECK(greedy_checkpoints(g, order, only3, 45) == std::vector<std::size_t>{3});
}

TEST_CASE("Chen's strategies on chains: valid plans, less memory than checkpoint-all") {
  for (std::size_t n : {5u, 12u, 40u, 101u}) {
    CAPTURE(n);
    const dataflow_graph t = chain_training_graph(n, n, true);
    const remat_result all = checkpoint_all_plan(t, unlimited_budget);
    const remat_result sq = chen_sqrtn_plan(t, unlimited_budget, {});
    REQUIRE(sq.status == solve_status::feasible);
    const plan_simulation sim = simulate_plan(t, sq.plan);
    CHECK(sim.peak_bytes == sq.peak_bytes);
    CHECK(sim.total_cost == sq.total_cost);
    if (n >= 12) {
      CHECK(sq.peak_bytes < all.peak_bytes);
      CHECK(sq.overhead > 0);
      // At most about one extra forward pass (the forward part is a third of the cost).
      CHECK(sq.overhead < 0.5);
    }
    // The greedy search never does worse than checkpoint-all within its budget, and meets budgets.
    for (double frac : {1.0, 0.8, 0.6, 0.5}) {
      const auto budget = static_cast<std::int64_t>(frac * static_cast<double>(all.peak_bytes));
      const remat_result gr = chen_greedy_plan(t, budget);
      if (frac == 1.0) {
        REQUIRE(gr.status == solve_status::feasible);
        CHECK(gr.overhead == 0.0);
      }
      if (gr.status == solve_status::feasible) {
        CHECK(gr.peak_bytes <= budget);
        CHECK(simulate_plan(t, gr.plan).peak_bytes == gr.peak_bytes);
      }
    }
  }
}

TEST_CASE("Chen's sqrt(n) on a uniform chain keeps O(sqrt n) values") {
  const std::size_t n = 400;
  const dataflow_graph t = chain_training_graph(n, 0, true);
  const remat_result sq = chen_sqrtn_plan(t, unlimited_budget, {});
  REQUIRE(sq.status == solve_status::feasible);
  // Uniform 100-byte values: about sqrt(n) checkpoints plus one segment (and its gradients).
  CHECK(sq.peak_bytes <= 100 * static_cast<std::int64_t>(5 * std::sqrt(static_cast<double>(n))));
  const remat_result all = checkpoint_all_plan(t, unlimited_budget);
  CHECK(all.peak_bytes >= 100 * static_cast<std::int64_t>(n));
}

TEST_CASE("chen_greedy_plan with a fixed b, and unsupported off chains") {
  const dataflow_graph t = chain_training_graph(30, 1);
  const remat_result r = chen_greedy_plan(t, unlimited_budget, {.segment_bytes = 300});
  REQUIRE(r.status == solve_status::feasible);
  CHECK(simulate_plan(t, r.plan).total_cost == r.total_cost);
  const dataflow_graph d = random_training_graph(8, 0.5, 2);
  CHECK(chen_sqrtn_plan(d, unlimited_budget, {}).status == solve_status::unsupported);
  CHECK(chen_greedy_plan(d, unlimited_budget).status == solve_status::unsupported);
}

TEST_CASE("use_spare_memory: cheaper plans that stay within the budget") {
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    const dataflow_graph t = seed % 2 ? chain_training_graph(20 + seed, seed) : random_training_graph(12, 0.25, seed);
    const std::int64_t peak = checkpoint_all_plan(t, unlimited_budget).peak_bytes;
    for (double frac : {0.95, 0.8, 0.6}) {
      const auto budget = static_cast<std::int64_t>(frac * static_cast<double>(peak));
      const sqrtn_options own{.use_spare_memory = false};
      const remat_result a = ap_sqrtn_plan(t, budget, own);
      const remat_result b = ap_sqrtn_plan(t, budget, {});
      CAPTURE(seed);
      CAPTURE(frac);
      // Spare memory never turns a fitting plan into one that does not fit, nor makes it dearer.
      CHECK(a.peak_bytes == ap_sqrtn_plan(t, unlimited_budget, {}).peak_bytes);
      if (a.status == solve_status::feasible) {
        REQUIRE(b.status == solve_status::feasible);
        CHECK(b.total_cost <= a.total_cost);
        const plan_simulation sim = simulate_plan(t, b.plan);
        CHECK(sim.peak_bytes <= budget);
        CHECK(sim.peak_bytes == b.peak_bytes);
      } else {
        CHECK(b.status == (detail::budget_below_lower_bound(make_memory_graph(t), budget) ? solve_status::infeasible
                                                                                           : solve_status::no_solution));
      }
    }
    // With the whole no-remat peak to spend, the chain's sqrt(n) plan keeps everything.
    if (seed % 2) CHECK(ap_sqrtn_plan(t, peak, {}).overhead == 0.0);
  }
  // Direct: on the sqrt(n) sequence of a chain, spare memory removes recomputations only.
  const dataflow_graph t = chain_training_graph(40, 1);
  const memory_graph g = make_memory_graph(t);
  const auto in = detail::prepare_strategy(g, detail::forward_mask(g), "test");
  const auto keep = detail::keep_with_tail(g, in.split, sqrtn_checkpoints(detail::as_indices(in.split.forward_order)));
  const auto seq = detail::checkpoint_sequence(g, in.split, keep);
  const auto [peak, cost] = detail::sequence_peak_cost(g, seq);
  const auto relaxed = detail::use_spare_memory(g, seq, peak);  // no spare memory at all
  CHECK(detail::sequence_peak_cost(g, relaxed).first <= peak);
  CHECK(detail::sequence_peak_cost(g, relaxed).second <= cost);
  const auto all = detail::use_spare_memory(g, seq, unlimited_budget - 1);
  CHECK(detail::sequence_peak_cost(g, all).second == doctest::Approx(g.total_cost()));
  CHECK(simulate_plan(g, plan_from_computes(g, all)).peak_bytes == checkpoint_all_plan(t, unlimited_budget).peak_bytes);
}
