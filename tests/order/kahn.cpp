#include <memsched/order/kahn.hpp>
#include <memsched/sim/simulate_order.hpp>

#include "../support/random_dag.hpp"

#include <doctest/doctest.h>

using namespace memsched;
using namespace memsched::testing;

TEST_CASE_TEMPLATE("kahn_order is a FIFO topological order with the simulator's peak", G, vecs_graph, lists_graph, csr_graph) {
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    const auto d = random_dag(8, 0.3, seed);
    const typed_graph<G> tg(d);
    const order_result r = kahn_order(tg.graph, tg.maps());
    const memory_graph g(d);
    CHECK(r.peak_bytes == simulate_order(g, r.order).peak_bytes);
    CHECK(r.lower_bound <= r.peak_bytes);
    // Same answer as on the memory_graph directly: the graph type does not matter.
    CHECK(kahn_order(g).order == r.order);
  }
}

TEST_CASE("kahn_order on a diamond, by hand") {
  // 0 -> {1, 2} -> 3; bytes 10, 20, 30, 5. Order 0 1 2 3: running 2 holds 0, 1, 2 = 60.
  const memory_graph g(memory_graph_data{.num_nodes = 4, .edges = {{0, 1}, {0, 2}, {1, 3}, {2, 3}}, .bytes = {10, 20, 30, 5}});
  const order_result r = kahn_order(g);
  CHECK(r.order == std::vector<std::size_t>{0, 1, 2, 3});
  CHECK(r.peak_bytes == 60);
  CHECK(r.lower_bound == 55);  // running 3 needs 20 + 30 + 5
  CHECK(r.status == solve_status::feasible);
}
