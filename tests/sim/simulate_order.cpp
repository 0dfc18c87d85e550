#include <memsched/sim/simulate_order.hpp>

#include "../support/random_dag.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace memsched;
using namespace memsched::testing;

namespace {

// The model of the README re-implemented the slow, obvious way: before step k, a vertex that ran
// earlier is resident when it is an output or one of its consumers has not run yet.
struct naive_simulation {
  std::int64_t peak = 0;
  std::size_t peak_step = 0;
  std::vector<std::size_t> at_peak;
  std::vector<std::int64_t> before, after;
};

std::vector<std::size_t> resident_after_prefix(const memory_graph& g, const std::vector<std::size_t>& order, std::size_t k) {
  std::vector<char> ran(g.size(), 0);
  for (std::size_t i = 0; i < k; ++i) ran[order[i]] = 1;
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < k; ++i) {
    const std::size_t u = order[i];
    bool keep = g.is_output(u);
    for (auto s : g.successors(u)) keep = keep || !ran[s];
    if (keep) out.push_back(u);
  }
  return out;
}

naive_simulation naive_simulate(const memory_graph& g, const std::vector<std::size_t>& order) {
  naive_simulation sim;
  auto sum = [&](const std::vector<std::size_t>& vs) {
    std::int64_t s = 0;
    for (auto v : vs) s += g.bytes(v);
    return s;
  };
  for (std::size_t k = 0; k < order.size(); ++k) {
    const auto before = resident_after_prefix(g, order, k);
    sim.before.push_back(sum(before));
    sim.after.push_back(sum(resident_after_prefix(g, order, k + 1)));
    const std::int64_t at = sum(before) + g.bytes(order[k]) + g.workspace(order[k]);
    if (k == 0 || at > sim.peak) {
      sim.peak = at;
      sim.peak_step = k;
      sim.at_peak = before;
      sim.at_peak.push_back(order[k]);
    }
  }
  return sim;
}

}  // namespace

TEST_CASE("simulate_order by hand: workspace, outputs kept, non-output sinks freed at once") {
  // 0 -> {1, 2}, 1 -> 3, 2 -> 3; 2 is also an input of 4, a sink that is not an output.
  // bytes 10 20 30 5 7, workspace 0 0 4 0 100; outputs {3, 1}: 1 stays although consumed.
  const memory_graph g(memory_graph_data{.num_nodes = 5,
                                         .edges = {{0, 1}, {0, 2}, {1, 3}, {2, 3}, {2, 4}},
                                         .bytes = {10, 20, 30, 5, 7},
                                         .workspace = {0, 0, 4, 0, 100},
                                         .outputs = std::vector<std::size_t>{3, 1}});
  const std::vector<std::size_t> order{0, 1, 2, 4, 3};
  const order_simulation sim = simulate_order(g, order);
  // 0: 0+10 -> 10 | 1: 10+20 -> 30 | 2: 30+30+4 = 64, frees 0 -> 50 | 4: 50+7+100 = 157, 4 freed -> 50
  // | 3: 50+5 = 55, frees 2 (1 is an output) -> 25.
  CHECK(sim.live_before == std::vector<std::int64_t>{0, 10, 30, 50, 50});
  CHECK(sim.live_after == std::vector<std::int64_t>{10, 30, 50, 50, 25});
  CHECK(sim.peak_bytes == 157);
  CHECK(sim.peak_step == 3);
  CHECK(sim.resident_at_peak == std::vector<std::size_t>{1, 2, 4});
  CHECK(order_peak(g, order) == 157);
  // Running 2 and 4 before 1 moves the peak.
  const order_simulation other = simulate_order(g, std::vector<std::size_t>{0, 2, 4, 1, 3});
  // 0: 10 | 2: 44 -> 40 | 4: 147 -> 40 | 1: 60, frees 0 -> 50 | 3: 55, frees 2 -> 25.
  CHECK(other.live_before == std::vector<std::int64_t>{0, 10, 40, 40, 50});
  CHECK(other.live_after == std::vector<std::int64_t>{10, 40, 40, 50, 25});
  CHECK(other.peak_bytes == 147);
  CHECK(other.resident_at_peak == std::vector<std::size_t>{0, 2, 4});
}

TEST_CASE("simulate_order: the first peak step wins ties; empty graph") {
  const memory_graph g(memory_graph_data{.num_nodes = 3, .bytes = {5, 5, 5}, .outputs = std::vector<std::size_t>{}});
  const order_simulation sim = simulate_order(g, std::vector<std::size_t>{2, 0, 1});
  CHECK(sim.peak_bytes == 5);
  CHECK(sim.peak_step == 0);
  CHECK(sim.resident_at_peak == std::vector<std::size_t>{2});
  CHECK(sim.live_after == std::vector<std::int64_t>{0, 0, 0});
  const order_simulation empty = simulate_order(memory_graph{}, std::vector<std::size_t>{});
  CHECK(empty.peak_bytes == 0);
  CHECK(empty.resident_at_peak.empty());
}

TEST_CASE("simulate_order rejects invalid orders, naming the first offending node") {
  // ids 100 + index, so messages name ids and vertices.
  memory_graph_data d{.num_nodes = 4, .edges = {{0, 1}, {1, 2}, {0, 3}}, .bytes = {1, 2, 3, 4}, .ids = {100, 101, 102, 103}};
  const memory_graph g(d);
  auto fails = [&](std::vector<std::size_t> order, std::size_t position, const std::string& words) {
    CAPTURE(words);
    try {
      (void)simulate_order(g, order);
      FAIL("no exception");
    } catch (const invalid_order& e) {
      CHECK(e.position() == position);
      const std::string what = e.what();
      CHECK(what.find("simulate_order") != std::string::npos);
      CHECK(what.find(words) != std::string::npos);
    }
  };
  fails({1, 0, 2, 3}, 0, "node 101 (vertex 1) at position 0 runs before its input node 100 (vertex 0)");
  fails({0, 1, 1, 2, 3}, 2, "node 101 (vertex 1) appears twice");
  fails({0, 7, 1, 2}, 1, "entry 1 (7)");
  fails({0, 1, 3}, 3, "node 102 (vertex 2) is missing");
  fails({0, 2, 1, 3}, 1, "node 102 (vertex 2) at position 1 runs before its input node 101");
  CHECK_THROWS_AS((void)order_peak(g, std::vector<std::size_t>{3, 0, 1, 2}), invalid_order);
  CHECK_NOTHROW((void)order_peak(g, std::vector<std::size_t>{0, 3, 1, 2}));
}

TEST_CASE_TEMPLATE("simulate_order agrees with a naive re-implementation on every order of random DAGs", G, vecs_graph,
                   lists_graph, csr_graph) {
  std::size_t orders = 0;
  for (std::uint64_t seed = 0; seed < 60; ++seed) {
    const std::size_t n = 1 + seed % 8;
    auto d = random_dag(n, seed % 3 == 0 ? 0.5 : 0.25, seed, 100, seed % 2 == 0);
    if (seed % 5 == 0) d.outputs = std::vector<std::size_t>{n / 2};
    const typed_graph<G> tg(d);
    const memory_graph g(d);
    CAPTURE(seed);
    for_each_topological_order(g, [&](const std::vector<std::size_t>& order) {
      ++orders;
      const naive_simulation want = naive_simulate(g, order);
      const order_simulation got = simulate_order(tg.graph, order, tg.maps());
      REQUIRE(got.peak_bytes == want.peak);
      REQUIRE(got.peak_step == want.peak_step);
      REQUIRE(got.resident_at_peak == want.at_peak);
      REQUIRE(got.live_before == want.before);
      REQUIRE(got.live_after == want.after);
      REQUIRE(order_peak(g, order) == want.peak);
    });
  }
  CHECK(orders > 1000);
}
