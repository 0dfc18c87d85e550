// The bridge lower bound on the peak (order/detail/bridge_lower_bound.hpp): a hand-computed skip
// connection, brute force over every order of small random DAGs (workspaces, outputs, in-place
// vertices), and Serenity's lower_bound, which now uses it, against its own proven peaks; training
// graphs proven at it without a search.

#include <memsched/graph/json_io.hpp>
#include <memsched/order/detail/bridge_lower_bound.hpp>
#include <memsched/order/peak_lower_bound.hpp>
#include <memsched/order/serenity.hpp>

#include "../support/memory_rule.hpp"
#include "../support/random_dag.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

using namespace memsched;
using namespace memsched::testing;

TEST_CASE("bridge_peak_lower_bound: a skip connection's value counts while the vertices it spans run") {
  // a -> b -> c -> d and a -> d; bytes a 10, b 5, c 5, d 1. The one order peaks at c: a, b and c
  // resident (20). A vertex with its inputs needs at most 16 (d: a, c, d).
  memory_graph_data d;
  d.num_nodes = 4;
  d.edges = {{0, 1}, {1, 2}, {2, 3}, {0, 3}};
  d.bytes = {10, 5, 5, 1};
  const memory_graph g(std::move(d));
  CHECK(peak_lower_bound(g) == 16);
  CHECK(detail::bridge_peak_lower_bound(g) == 20);
  CHECK(serenity_order(g).peak_bytes == 20);
}

TEST_CASE("bridge_peak_lower_bound: an output spans every descendant") {
  // a -> b -> c, a is a graph output: resident while c runs (a + b + c = 7, c with its input 3).
  memory_graph_data d;
  d.num_nodes = 3;
  d.edges = {{0, 1}, {1, 2}};
  d.bytes = {4, 2, 1};
  d.outputs = std::vector<std::size_t>{0, 2};
  const memory_graph g(std::move(d));
  CHECK(peak_lower_bound(g) == 6);
  CHECK(detail::bridge_peak_lower_bound(g) == 7);
}

TEST_CASE("bridge_peak_lower_bound never exceeds the least peak of any order (brute force)") {
  std::size_t stronger = 0;
  for (std::uint64_t seed = 0; seed < 300; ++seed) {
    const std::size_t n = 4 + seed % 6;
    memory_graph_data d = random_dag(n, 0.2 + 0.1 * static_cast<double>(seed % 5), seed, seed % 2 == 0 ? 100 : 4, seed % 4 == 1);
    if (seed % 3 == 0) d = with_random_outputs(std::move(d), seed);
    if (seed % 5 >= 3) d = with_random_inplace(std::move(d), seed);
    const memory_graph g(std::move(d));
    INFO("seed " << seed);
    const std::int64_t best = inplace_brute_force_peak(g);
    const std::int64_t bridge = detail::bridge_peak_lower_bound(g);
    CHECK(bridge <= best);
    CHECK(bridge >= peak_lower_bound(g));
    stronger += bridge > peak_lower_bound(g) ? 1 : 0;
  }
  // It must be worth having: strictly above the vertex-with-inputs bound on many graphs.
  CHECK(stronger >= 25);  // 36 of the 300
}

namespace {

// The bound read straight from its definition, with reachability by depth-first search: for each
// vertex v, v with its inputs and workspace plus every strict ancestor a of v that is not an input
// of v and is a graph output or has a reader among v's strict descendants. O(n^2 (n + m)).
std::int64_t bridge_bound_by_definition(const memory_graph& g) {
  const std::size_t n = g.size();
  std::vector<std::vector<char>> reaches(n, std::vector<char>(n, 0));  // reaches[a][b]: a path a -> b of >= 1 edge
  for (std::size_t a = 0; a < n; ++a) {
    std::vector<std::size_t> stack(g.successors(a).begin(), g.successors(a).end());
    while (!stack.empty()) {
      const std::size_t b = stack.back();
      stack.pop_back();
      if (reaches[a][b]) continue;
      reaches[a][b] = 1;
      for (auto s : g.successors(b)) stack.push_back(s);
    }
  }
  std::int64_t bound = peak_lower_bound(g);
  for (std::size_t v = 0; v < n; ++v) {
    std::int64_t resident = memory_model::min_running_bytes(g, v);
    for (std::size_t a = 0; a < n; ++a) {
      if (!reaches[a][v] || g.bytes(a) <= 0 || memory_model::dies_unread(g, a)) continue;
      const auto readers = g.successors(a);
      if (std::find(readers.begin(), readers.end(), v) != readers.end()) continue;  // an input of v
      bool spans = g.is_output(a);
      for (auto s : readers) spans = spans || reaches[v][s];
      if (spans) resident += g.bytes(a);
    }
    bound = std::max(bound, resident);
  }
  return bound;
}

}  // namespace

TEST_CASE("bridge_peak_lower_bound equals its definition on random DAGs of one to four bitset words") {
  std::size_t above_cheap = 0;
  for (std::uint64_t seed = 0; seed < 60; ++seed) {
    const std::size_t n = 5 + seed * 4;  // 5 .. 241 vertices
    memory_graph_data d = seed % 4 == 3 ? random_training_dag(n / 2, 0.15, seed)
                                        : random_dag(n, 0.05 + 0.05 * static_cast<double>(seed % 4), seed, 100, seed % 2 == 1);
    if (seed % 3 == 0) d = with_random_outputs(std::move(d), seed);
    if (seed % 5 == 2) d = with_random_inplace(std::move(d), seed);
    const memory_graph g(std::move(d));
    INFO("seed " << seed << ", " << g.size() << " vertices");
    const std::int64_t bound = detail::bridge_peak_lower_bound(g);
    CHECK(bound == bridge_bound_by_definition(g));
    above_cheap += bound > peak_lower_bound(g) ? 1 : 0;
  }
  CHECK(above_cheap >= 45);  // 54 of the 60: the comparison is about the bridges, not the cheap term
}

TEST_CASE("serenity_order: its lower bound, with the bridges, stays at or below the proven peak") {
  for (const char* name : {"moccasin/random_layered_n100.json", "checkmate/resnet50_inference.json"}) {
    const std::string path = std::string(MEMSCHED_TEST_DATA_DIR) + "/" + name;
    INFO(path);
    const memory_graph g = make_memory_graph(read_json_graph(path));
    const std::int64_t bridge = detail::bridge_peak_lower_bound(g);
    const order_result r = serenity_order(g);
    REQUIRE(r.status == solve_status::optimal);
    CHECK(bridge <= r.peak_bytes);
    CHECK(bridge >= peak_lower_bound(g));
    // Stopped after its first states, its bound is still a bound.
    const order_result stopped = serenity_order(g, serenity_options{.max_states = 2});
    CHECK(stopped.lower_bound <= r.peak_bytes);
    CHECK(stopped.lower_bound >= peak_lower_bound(g));
  }
}

TEST_CASE("serenity_order proves Checkmate's training graphs at the bridge bound, with no search") {
  // Their peak is above a vertex with its inputs (so no baseline is settled by that bound) but
  // equals the bridge bound, which a baseline order meets: nothing is expanded.
  for (const char* name : {"checkmate/vgg16_training.json", "checkmate/resnet50_training.json"}) {
    const std::string path = std::string(MEMSCHED_TEST_DATA_DIR) + "/" + name;
    INFO(path);
    const memory_graph g = make_memory_graph(read_json_graph(path));
    const order_result r = serenity_order(g);
    REQUIRE(r.status == solve_status::optimal);
    CHECK(peak_lower_bound(g) < r.peak_bytes);
    CHECK(detail::bridge_peak_lower_bound(g) == r.peak_bytes);
    CHECK(r.stats.states_expanded == 0);
  }
}
