#include <memsched/order/dfs.hpp>
#include <memsched/sim/simulate_order.hpp>

#include "../support/random_dag.hpp"

#include <doctest/doctest.h>

using namespace memsched;
using namespace memsched::testing;

TEST_CASE_TEMPLATE("dfs_order is a topological order with the simulator's peak, on every graph type", G, vecs_graph,
                   lists_graph, csr_graph) {
  for (std::uint64_t seed = 0; seed < 30; ++seed) {
    const auto d = random_dag(2 + seed % 9, 0.3, seed, 100, seed % 2 == 1);
    const typed_graph<G> tg(d);
    const order_result r = dfs_order(tg.graph, tg.maps());
    const memory_graph g(d);
    REQUIRE_NOTHROW((void)simulate_order(g, r.order));
    CHECK(r.peak_bytes == simulate_order(g, r.order).peak_bytes);
    CHECK(r.lower_bound == peak_lower_bound(g));
    CHECK(r.lower_bound <= r.peak_bytes);
    CHECK((r.status == solve_status::optimal) == (r.peak_bytes == r.lower_bound));
    CHECK(dfs_order(g).order == r.order);
    CHECK(dfs_order(to_dataflow_graph(d)).order == r.order);
  }
}

TEST_CASE("dfs_order by hand: reverse post-order, successors and sources in index order") {
  // 0 -> {1, 2}, 1 -> 3, 2 -> 4, {3, 4} -> 5. DFS from 0: 0 1 3 5 | 2 4; post-order 5 3 1 4 2 0.
  const memory_graph g(memory_graph_data{.num_nodes = 6,
                                         .edges = {{0, 1}, {0, 2}, {1, 3}, {2, 4}, {3, 5}, {4, 5}},
                                         .bytes = {10, 20, 30, 1, 5, 1}});
  const order_result r = dfs_order(g);
  CHECK(r.order == std::vector<std::size_t>{0, 2, 4, 1, 3, 5});
  // 0: 10 | 2: 10+30 = 40 | 4: 40+5 = 45, frees 2 -> 15 | 1: 35, frees 0 -> 25 | 3: 26 -> 6 | 5: 7.
  CHECK(r.peak_bytes == 45);
  CHECK(r.lower_bound == 40);
  CHECK(r.status == solve_status::feasible);

  // Two sources: 0 -> 2, 1 -> 2. Roots in index order, so the last root's subtree comes first.
  const memory_graph h(memory_graph_data{.num_nodes = 3, .edges = {{0, 2}, {1, 2}}, .bytes = {1, 1, 1}});
  CHECK(dfs_order(h).order == std::vector<std::size_t>{1, 0, 2});
}

TEST_CASE("dfs_order on an empty graph, a single vertex and a deep chain") {
  CHECK(dfs_order(memory_graph{}).order.empty());
  CHECK(dfs_order(memory_graph{}).peak_bytes == 0);
  const order_result one = dfs_order(memory_graph(memory_graph_data{.num_nodes = 1, .bytes = {7}, .workspace = {3}}));
  CHECK(one.order == std::vector<std::size_t>{0});
  CHECK(one.peak_bytes == 10);
  CHECK(one.status == solve_status::optimal);
  // 100k vertices deep: an iterative search must not overflow the stack.
  const std::size_t n = 100000;
  memory_graph_data d{.num_nodes = n, .bytes = std::vector<std::int64_t>(n, 4)};
  for (std::size_t v = 0; v + 1 < n; ++v) d.edges.emplace_back(v, v + 1);
  const order_result chain = dfs_order(memory_graph(d));
  REQUIRE(chain.order.size() == n);
  for (std::size_t v = 0; v < n; ++v) REQUIRE(chain.order[v] == v);
  CHECK(chain.peak_bytes == 8);
  CHECK(chain.status == solve_status::optimal);
}

TEST_CASE("dfs_order rejects a cycle") {
  memory_graph_data d{.num_nodes = 3, .edges = {{0, 1}, {1, 2}, {2, 1}}, .bytes = {1, 1, 1}};
  CHECK_THROWS_AS((void)dfs_order(to_dataflow_graph(d)), cycle_error);
}
