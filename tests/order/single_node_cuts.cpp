#include <memsched/order/single_node_cuts.hpp>

#include "../support/random_dag.hpp"

#include <doctest/doctest.h>

#include <functional>

using namespace memsched;
using namespace memsched::testing;

namespace {

// The definition, by brute force: c is a cut iff removing it disconnects every source from every
// sink (a virtual source joined to all sources cannot reach a virtual sink joined from all sinks).
std::vector<std::size_t> brute_force_cuts(const memory_graph& g) {
  const std::size_t n = g.size();
  std::vector<std::size_t> cuts;
  for (std::size_t c = 0; c < n; ++c) {
    std::vector<char> seen(n, 0);
    std::vector<std::size_t> stack;
    for (std::size_t v = 0; v < n; ++v)
      if (g.in_degree(v) == 0 && v != c) {
        seen[v] = 1;
        stack.push_back(v);
      }
    bool reaches_sink = false;
    while (!stack.empty()) {
      const std::size_t u = stack.back();
      stack.pop_back();
      if (g.out_degree(u) == 0) reaches_sink = true;
      for (auto w : g.successors(u))
        if (w != c && !seen[w]) {
          seen[w] = 1;
          stack.push_back(w);
        }
    }
    if (!reaches_sink) cuts.push_back(c);
  }
  return cuts;
}

std::vector<std::size_t> sorted(std::vector<std::size_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

TEST_CASE("single_node_cuts by hand") {
  // 0 -> 1 -> {2, 3} -> 4 -> 5: cuts 0, 1, 4, 5.
  const memory_graph chain(memory_graph_data{.num_nodes = 6, .edges = {{0, 1}, {1, 2}, {1, 3}, {2, 4}, {3, 4}, {4, 5}}, .bytes = {1, 1, 1, 1, 1, 1}});
  CHECK(single_node_cuts(chain) == std::vector<std::size_t>{0, 1, 4, 5});
  // Two sources: no cut before they join; an edge jumping over 2 (1 -> 3) removes it.
  const memory_graph two(memory_graph_data{.num_nodes = 4, .edges = {{0, 2}, {1, 2}, {2, 3}, {1, 3}}, .bytes = {1, 1, 1, 1}});
  CHECK(single_node_cuts(two) == std::vector<std::size_t>{3});
  // Two sinks: nothing after the split is a cut.
  const memory_graph split(memory_graph_data{.num_nodes = 3, .edges = {{0, 1}, {0, 2}}, .bytes = {1, 1, 1}});
  CHECK(single_node_cuts(split) == std::vector<std::size_t>{0});
  const memory_graph empty(memory_graph_data{.num_nodes = 0});
  CHECK(single_node_cuts(empty).empty());
  const memory_graph one(memory_graph_data{.num_nodes = 1, .bytes = {5}});
  CHECK(single_node_cuts(one) == std::vector<std::size_t>{0});
}

TEST_CASE("single_node_cuts equals the brute-force definition on random DAGs") {
  int with_cuts = 0;
  for (std::size_t n = 1; n <= 14; ++n)
    for (double p : {0.1, 0.25, 0.4, 0.7})
      for (std::uint64_t seed = 0; seed < 30; ++seed) {
        const memory_graph g(random_dag(n, p, seed * 101 + n));
        const auto cuts = single_node_cuts(g);
        CAPTURE(n);
        CAPTURE(p);
        CAPTURE(seed);
        CHECK(sorted(cuts) == brute_force_cuts(g));
        // Returned in topological order.
        std::vector<std::size_t> pos(n);
        for (std::size_t i = 0; i < n; ++i) pos[g.topological_order()[i]] = i;
        for (std::size_t k = 1; k < cuts.size(); ++k) CHECK(pos[cuts[k - 1]] < pos[cuts[k]]);
        with_cuts += !cuts.empty();
      }
  CHECK(with_cuts > 100);
}

TEST_CASE_TEMPLATE("single_node_cuts works on every Boost graph type", G, vecs_graph, lists_graph, csr_graph) {
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    const auto d = random_dag(10, 0.3, seed);
    const typed_graph<G> tg(d);
    CHECK(single_node_cuts(tg.graph, tg.maps()) == single_node_cuts(memory_graph(d)));
  }
}

