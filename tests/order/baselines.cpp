// The three baseline orders side by side: a graph where they all differ, and brute force over every
// topological order of small random DAGs.

#include <memsched/order/dfs.hpp>
#include <memsched/order/greedy.hpp>
#include <memsched/order/kahn.hpp>
#include <memsched/order/peak_lower_bound.hpp>
#include <memsched/sim/simulate_order.hpp>

#include "../support/random_dag.hpp"

#include <doctest/doctest.h>

#include <limits>

using namespace memsched;
using namespace memsched::testing;

TEST_CASE("kahn, dfs and greedy differ on a small graph, by hand") {
  //        0 (10)
  //       /      \                          kahn:   0 1 2 3 4 5  peak 60 (running 2 holds 0, 1, 2)
  //   1 (20)    2 (30)                      dfs:    0 2 4 1 3 5  peak 45 (running 4 holds 0, 2, 4)
  //     |         |                         greedy: 0 1 3 2 4 5  peak 41 (running 2 holds 0, 3, 2)
  //   3 (1)     4 (5)                       best of all orders: 41; lower bound 40 (running 2)
  //       \      /
  //        5 (1)
  const memory_graph g(memory_graph_data{.num_nodes = 6,
                                         .edges = {{0, 1}, {0, 2}, {1, 3}, {2, 4}, {3, 5}, {4, 5}},
                                         .bytes = {10, 20, 30, 1, 5, 1}});
  const order_result k = kahn_order(g), d = dfs_order(g), r = greedy_order(g);
  CHECK(k.order == std::vector<std::size_t>{0, 1, 2, 3, 4, 5});
  CHECK(d.order == std::vector<std::size_t>{0, 2, 4, 1, 3, 5});
  CHECK(r.order == std::vector<std::size_t>{0, 1, 3, 2, 4, 5});
  CHECK(k.peak_bytes == 60);
  CHECK(d.peak_bytes == 45);
  CHECK(r.peak_bytes == 41);
  CHECK(peak_lower_bound(g) == 40);
  std::int64_t best = std::numeric_limits<std::int64_t>::max();
  for_each_topological_order(g, [&](const std::vector<std::size_t>& o) { best = std::min(best, order_peak(g, o)); });
  CHECK(best == 41);
  const auto sim = simulate_order(g, k.order);
  CHECK(sim.peak_step == 2);
  CHECK(sim.resident_at_peak == std::vector<std::size_t>{0, 1, 2});
}

TEST_CASE("baselines against brute force over all topological orders (random DAGs up to 8 vertices)") {
  int graphs = 0, greedy_optimal = 0;
  for (std::uint64_t seed = 0; seed < 400; ++seed) {
    const std::size_t n = 1 + seed % 8;
    auto d = random_dag(n, seed % 3 == 0 ? 0.5 : 0.25, seed, 100, seed % 2 == 1);
    if (seed % 7 == 0 && n > 1) d.outputs = std::vector<std::size_t>{0, n - 1};
    const memory_graph g(d);
    CAPTURE(seed);
    std::int64_t best = std::numeric_limits<std::int64_t>::max();
    for_each_topological_order(g, [&](const std::vector<std::size_t>& o) { best = std::min(best, order_peak(g, o)); });
    const std::int64_t bound = peak_lower_bound(g);
    CHECK(bound <= best);
    for (const order_result& r : {kahn_order(g), dfs_order(g), greedy_order(g)}) {
      REQUIRE_NOTHROW((void)simulate_order(g, r.order));  // a valid topological order
      CHECK(r.peak_bytes == order_peak(g, r.order));
      CHECK(r.peak_bytes >= best);
      CHECK(r.lower_bound == bound);
      if (r.status == solve_status::optimal) CHECK(r.peak_bytes == best);
    }
    ++graphs;
    greedy_optimal += greedy_order(g).peak_bytes == best;
  }
  // Not a guarantee, but greedy should find the best order on most tiny graphs.
  CHECK(greedy_optimal * 2 > graphs);
}
