#include <memsched/order/greedy.hpp>
#include <memsched/sim/simulate_order.hpp>

#include "../support/random_dag.hpp"

#include <doctest/doctest.h>

#include <tuple>

using namespace memsched;
using namespace memsched::testing;

namespace {

// The greedy rule written the slow, obvious way: at every step, simulate running each ready vertex
// from the explicit set of resident tensors and keep the best (live after, bytes + workspace, index).
std::vector<std::size_t> naive_greedy(const memory_graph& g) {
  const std::size_t n = g.size();
  std::vector<char> done(n, 0), resident(n, 0);
  std::vector<std::size_t> order;
  for (std::size_t step = 0; step < n; ++step) {
    std::tuple<std::int64_t, std::int64_t, std::size_t> best{0, 0, n};
    for (std::size_t v = 0; v < n; ++v) {
      if (done[v]) continue;
      bool ready = true;
      for (auto p : g.predecessors(v)) ready = ready && done[p];
      if (!ready) continue;
      // Resident after running v: everything resident, plus v, minus tensors with no unrun consumer left.
      std::int64_t after = 0;
      for (std::size_t u = 0; u < n; ++u) {
        if (!(resident[u] || u == v)) continue;
        bool needed = g.is_output(u);
        for (auto s : g.successors(u)) needed = needed || (!done[s] && s != v);
        if (needed) after += g.bytes(u);
      }
      const std::tuple<std::int64_t, std::int64_t, std::size_t> key{after, g.bytes(v) + g.workspace(v), v};
      if (std::get<2>(best) == n || key < best) best = key;
    }
    const std::size_t v = std::get<2>(best);
    done[v] = 1;
    resident[v] = 1;
    order.push_back(v);
    for (std::size_t u = 0; u < n; ++u) {
      if (!resident[u]) continue;
      bool needed = g.is_output(u);
      for (auto s : g.successors(u)) needed = needed || !done[s];
      if (!needed) resident[u] = 0;
    }
  }
  return order;
}

}  // namespace

TEST_CASE_TEMPLATE("greedy_order is a topological order with the simulator's peak, on every graph type", G, vecs_graph,
                   lists_graph, csr_graph) {
  for (std::uint64_t seed = 0; seed < 30; ++seed) {
    const auto d = random_dag(2 + seed % 9, 0.3, seed, 100, seed % 2 == 1);
    const typed_graph<G> tg(d);
    const order_result r = greedy_order(tg.graph, tg.maps());
    const memory_graph g(d);
    REQUIRE_NOTHROW((void)simulate_order(g, r.order));
    CHECK(r.peak_bytes == simulate_order(g, r.order).peak_bytes);
    CHECK(r.lower_bound == peak_lower_bound(g));
    CHECK(r.lower_bound <= r.peak_bytes);
    CHECK(greedy_order(g).order == r.order);
  }
}

TEST_CASE("greedy_order makes the same choices as a naive re-implementation of its rule") {
  for (std::uint64_t seed = 0; seed < 300; ++seed) {
    auto d = random_dag(3 + seed % 20, seed % 3 == 0 ? 0.5 : 0.2, seed, seed % 4 == 0 ? 3 : 100, seed % 2 == 1);
    if (seed % 5 == 0) d.outputs = std::vector<std::size_t>{0};  // an output that may have consumers
    const memory_graph g(d);
    CAPTURE(seed);
    CHECK(greedy_order(g).order == naive_greedy(g));
  }
}

TEST_CASE("greedy_order by hand") {
  // 0 -> {1, 2}, 1 -> 3, 2 -> 4, {3, 4} -> 5; bytes 10 20 30 1 5 1.
  // After 0: ready 1 (+20), 2 (+30): run 1. Ready 2 (+30-10), 3 (+1-20): run 3. Then 2, 4, 5.
  const memory_graph g(memory_graph_data{.num_nodes = 6,
                                         .edges = {{0, 1}, {0, 2}, {1, 3}, {2, 4}, {3, 5}, {4, 5}},
                                         .bytes = {10, 20, 30, 1, 5, 1}});
  const order_result r = greedy_order(g);
  CHECK(r.order == std::vector<std::size_t>{0, 1, 3, 2, 4, 5});
  // 0: 10 | 1: 30 | 3: 31 -> 11 | 2: 41 -> 31 | 4: 36 -> 6 | 5: 7.
  CHECK(r.peak_bytes == 41);
  CHECK(r.lower_bound == 40);
  CHECK(r.status == solve_status::feasible);
}

TEST_CASE("greedy_order ties: smaller transient peak first, then smaller index") {
  // Three independent sinks that are outputs: each leaves its own bytes resident.
  // 0 and 1 leave 5, 2 leaves 6; 0 has workspace 4, 1 has none: order 1, 0, 2.
  const memory_graph g(memory_graph_data{.num_nodes = 3, .bytes = {5, 5, 6}, .workspace = {4, 0, 0}});
  CHECK(greedy_order(g).order == std::vector<std::size_t>{1, 0, 2});
  const memory_graph h(memory_graph_data{.num_nodes = 3, .bytes = {5, 5, 5}});
  CHECK(greedy_order(h).order == std::vector<std::size_t>{0, 1, 2});
  // A non-output sink leaves nothing resident: it runs first.
  const memory_graph k(memory_graph_data{.num_nodes = 3, .bytes = {5, 9, 5}, .outputs = std::vector<std::size_t>{0, 2}});
  CHECK(greedy_order(k).order == std::vector<std::size_t>{1, 0, 2});
}

TEST_CASE("greedy_order on an empty graph and long chains") {
  CHECK(greedy_order(memory_graph{}).order.empty());
  const std::size_t n = 10000;
  memory_graph_data d{.num_nodes = n, .bytes = std::vector<std::int64_t>(n, 4)};
  for (std::size_t v = 0; v + 1 < n; ++v) d.edges.emplace_back(v, v + 1);
  const order_result chain = greedy_order(memory_graph(d));
  REQUIRE(chain.order.size() == n);
  for (std::size_t v = 0; v < n; ++v) REQUIRE(chain.order[v] == v);
  CHECK(chain.peak_bytes == 8);
  // A star: one source feeding 10k consumers that are outputs, run in index order.
  memory_graph_data s{.num_nodes = n, .bytes = std::vector<std::int64_t>(n, 1)};
  for (std::size_t v = 1; v < n; ++v) s.edges.emplace_back(0, v);
  const order_result star = greedy_order(memory_graph(s));
  REQUIRE(star.order.size() == n);
  CHECK(star.order.back() == n - 1);
  CHECK(star.peak_bytes == static_cast<std::int64_t>(n));
}
