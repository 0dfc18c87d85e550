// The input order of the solver-based strategies and the first computations of a plan.

#include <memsched/order/dfs.hpp>
#include <memsched/order/greedy.hpp>
#include <memsched/order/kahn.hpp>
#include <memsched/order/serenity.hpp>
#include <memsched/remat/best_heuristic.hpp>
#include <memsched/remat/input_order.hpp>
#include <memsched/sim/simulate_order.hpp>

#include "support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

using namespace memsched;
using namespace memsched::testing;

TEST_CASE("first_computation_order: first computes only, in plan order") {
  // compute 1, compute 0, free 0, compute 2, compute 0 (a recomputation), compute 3.
  const execution_plan p{{{plan_op::compute, 1}, {plan_op::compute, 0}, {plan_op::free, 0}, {plan_op::compute, 2},
                          {plan_op::compute, 0}, {plan_op::compute, 3}}};
  CHECK(first_computation_order(p, 4) == std::vector<std::size_t>{1, 0, 2, 3});
  CHECK(first_computation_order(p, 5).size() == 4);  // vertex 4 never computed: the caller sees it
  CHECK_THROWS_AS((void)first_computation_order(p, 3), graph_error);  // step 5 names vertex 3
  CHECK(first_computation_order(execution_plan{}, 2).empty());
}

TEST_CASE("input_order_source names round-trip") {
  for (auto s : {input_order_source::graph, input_order_source::kahn, input_order_source::best, input_order_source::heuristic})
    CHECK(parse_input_order_source(to_string(s)) == s);
  CHECK_FALSE(parse_input_order_source("serenity").has_value());
}

TEST_CASE("remat_input_order: every source, on random training graphs") {
  for (std::uint64_t seed = 0; seed < 12; ++seed) {
    CAPTURE(seed);
    dataflow_graph t = random_training_graph(10, 0.3, seed);
    const memory_graph g = make_memory_graph(t);
    // graph: without an order in the graph, checkpoint-all's first computations.
    const auto all = checkpoint_all_plan(t, unlimited_budget);
    const input_order_result from_graph = remat_input_order(t, {.source = input_order_source::graph});
    CHECK(from_graph.order == first_computation_order(all.plan, g.size()));
    CHECK(from_graph.source == "checkpoint-all (the graph has no order)");
    CHECK(from_graph.peak_bytes == order_peak(g, from_graph.order));
    // The same through a memory_graph (roles carried) and with the order given explicitly.
    CHECK(remat_input_order(g, {.source = input_order_source::graph}).order == from_graph.order);
    const std::vector<std::size_t> kahn = kahn_order(g).order;
    CHECK(remat_input_order(g, {.source = input_order_source::graph, .graph_order = kahn}).order == kahn);
    // With an order in the file, that order.
    t[boost::graph_bundle].order = kahn;
    const input_order_result own = remat_input_order(t, {.source = input_order_source::graph});
    CHECK(own.order == kahn);
    CHECK(own.source == "graph");
    // kahn.
    CHECK(remat_input_order(g, {.source = input_order_source::kahn}).order == kahn);
    // best (no Serenity): the lowest peak of the basic orders and the graph's own.
    const input_order_result best = remat_input_order(t, {.source = input_order_source::best});
    const std::int64_t expected = std::min({order_peak(g, greedy_order(g).order), order_peak(g, dfs_order(g).order), order_peak(g, kahn)});
    CHECK(best.peak_bytes == expected);
    CHECK(best.peak_bytes == order_peak(g, best.order));
    // heuristic: the first computations of the given plan; a plan missing vertices falls back to Kahn.
    const remat_result h = best_heuristic_plan(t, all.peak_bytes);
    REQUIRE(h.status == solve_status::feasible);
    const input_order_result from_plan = remat_input_order(t, {.source = input_order_source::heuristic, .plan = h.plan});
    CHECK(from_plan.order == first_computation_order(h.plan, g.size()));
    CHECK(from_plan.source == "heuristic");
    const input_order_result none = remat_input_order(t, {.source = input_order_source::heuristic, .plan = execution_plan{}});
    CHECK(none.order == kahn);
    CHECK(none.source == "kahn (the plan does not compute every vertex)");
  }
}

TEST_CASE("remat_input_order: best with Serenity is never worse than without") {
  const dataflow_graph t = random_training_graph(12, 0.3, 7);
  const auto basic = remat_input_order(t, {.source = input_order_source::best});
  const auto with = remat_input_order(t, {.source = input_order_source::best, .serenity_time_limit = std::chrono::seconds(5)});
  CHECK(with.peak_bytes <= basic.peak_bytes);
  CHECK(with.order.size() == basic.order.size());
}

TEST_CASE("input_order_within: Serenity gets half the limit, at most 30 s, and the counted cap") {
  const input_order_options short_call = input_order_within(std::chrono::seconds(9));
  CHECK(short_call.source == input_order_source::best);
  CHECK(short_call.serenity_time_limit.count() == doctest::Approx(4.5));
  CHECK(short_call.serenity_max_states == 100'000);
  CHECK(input_order_within(std::chrono::minutes(10)).serenity_time_limit.count() == doctest::Approx(30.0));
  CHECK(input_order_within(std::chrono::seconds(0)).serenity_time_limit.count() == 0.0);
  // Within the state cap the order does not depend on the limit: Serenity proves these graphs
  // before either limit stops it, so a long and a short call pick the same order.
  for (unsigned seed = 1; seed <= 5; ++seed) {
    const dataflow_graph t = random_training_graph(14, 0.3, seed);
    const auto a = remat_input_order(t, input_order_within(std::chrono::seconds(20)));
    const auto b = remat_input_order(t, input_order_within(std::chrono::minutes(30)));
    CHECK(a.order == b.order);
    CHECK(a.peak_bytes <= remat_input_order(t, {.source = input_order_source::best}).peak_bytes);
    CHECK(a.peak_bytes == simulate_order(t, a.order).peak_bytes);
  }
  // Where the counted cap stops Serenity before it proves the order (a cap of 40 states here, as
  // input_order_serenity_max_states does on large graphs), the order still does not depend on
  // the time limit: the cap, not the clock, ends the search. Its peak is the lower of the capped
  // search's and the baselines', and on some graphs the uncapped search finds a lower one (so a
  // call that let the clock end the search would fail here).
  int capped = 0, cap_decided = 0;
  for (unsigned seed = 1; seed <= 40 && capped < 3; ++seed) {
    const dataflow_graph t = random_training_graph(40, 0.25, seed);
    constexpr std::uint64_t cap = 40;
    const auto capped_search = serenity_order(t, serenity_options{.max_states = cap});
    if (capped_search.status == solve_status::optimal) continue;
    ++capped;
    auto within = [&](std::chrono::duration<double> limit) {
      input_order_options o = input_order_within(limit);
      o.serenity_max_states = cap;
      return remat_input_order(t, o);
    };
    const auto a = within(std::chrono::seconds(20));
    CHECK(a.order == within(std::chrono::minutes(30)).order);
    CHECK(a.peak_bytes == simulate_order(t, a.order).peak_bytes);
    const std::int64_t expected = std::min(capped_search.peak_bytes, remat_input_order(t, {.source = input_order_source::best}).peak_bytes);
    CHECK(a.peak_bytes == expected);
    cap_decided += serenity_order(t).peak_bytes < expected;
  }
  CHECK(capped == 3);  // graphs where the cap stopped the search, or the loop above showed nothing
  CHECK(cap_decided >= 1);
}

TEST_CASE("remat_input_order: a bad own order throws") {
  dataflow_graph t = chain_training_graph(4);
  std::vector<std::size_t> reversed = kahn_order(make_memory_graph(t)).order;
  std::reverse(reversed.begin(), reversed.end());
  t[boost::graph_bundle].order = reversed;
  CHECK_THROWS_AS((void)remat_input_order(t, {.source = input_order_source::graph}), invalid_order);
}
