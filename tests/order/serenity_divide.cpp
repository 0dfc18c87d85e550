#include <memsched/order/detail/serenity_segments.hpp>
#include <memsched/order/serenity.hpp>
#include <memsched/order/single_node_cuts.hpp>
#include <memsched/sim/simulate_order.hpp>

#include "../support/random_dag.hpp"

#include <doctest/doctest.h>

#include <random>

using namespace memsched;
using namespace memsched::testing;

namespace {

// An hourglass-shaped graph: random blobs joined by single vertices (the necks). The first blob
// may have several sources and the last several sinks; some inner vertices are graph outputs, so
// memory stays live across the necks.
memory_graph_data hourglass(std::size_t blobs, std::size_t blob_size, double p, std::uint64_t seed, bool outputs,
                            bool workspace) {
  std::mt19937_64 rng(seed);
  memory_graph_data d;
  std::uniform_int_distribution<std::int64_t> size(1, 100), ws(0, 40);
  std::bernoulli_distribution coin(p);
  auto add = [&] {
    d.bytes.push_back(size(rng));
    d.workspace.push_back(workspace ? ws(rng) : 0);
    return d.num_nodes++;
  };
  const bool lead = rng() % 2 == 0;  // start with a neck, or with a blob of several sources
  std::size_t neck = lead ? add() : std::size_t(-1);
  for (std::size_t b = 0; b < blobs; ++b) {
    const auto inner = random_dag(blob_size, p, rng());
    const std::size_t first = d.num_nodes;
    for (std::size_t v = 0; v < blob_size; ++v) add();
    std::vector<char> has_in(blob_size, 0), has_out(blob_size, 0);
    for (auto [u, v] : inner.edges) {
      d.edges.emplace_back(first + u, first + v);
      has_in[v] = has_out[u] = 1;
    }
    const bool last = b + 1 == blobs && rng() % 2 == 0;  // end with a blob of several sinks
    const std::size_t next = last ? std::size_t(-1) : add();
    for (std::size_t v = 0; v < blob_size; ++v) {
      if (neck != std::size_t(-1) && (!has_in[v] || coin(rng))) d.edges.emplace_back(neck, first + v);
      if (next != std::size_t(-1) && (!has_out[v] || coin(rng))) d.edges.emplace_back(first + v, next);
    }
    if (neck != std::size_t(-1) && next != std::size_t(-1) && coin(rng)) d.edges.emplace_back(neck, next);
    neck = next;
  }
  if (outputs) {
    std::vector<std::size_t> outs;
    for (std::size_t v = 0; v < d.num_nodes; ++v) {
      bool sink = true;
      for (auto [a, b] : d.edges) sink &= a != v;
      if (sink || rng() % 5 == 0) outs.push_back(v);
    }
    d.outputs = outs;
  }
  return d;
}

}  // namespace

TEST_CASE("divide and conquer gives the whole-graph optimum on random hourglass graphs") {
  int segmented = 0;
  for (std::uint64_t seed = 0; seed < 300; ++seed) {
    const std::size_t blobs = 1 + seed % 4;
    const std::size_t blob_size = 2 + seed % 5;
    const auto d = hourglass(blobs, blob_size, 0.3 + 0.1 * static_cast<double>(seed % 4), seed, seed % 3 != 0, seed % 2 == 1);
    const memory_graph g(d);
    CAPTURE(seed);
    const auto cuts = single_node_cuts(g);
    segmented += cuts.size() >= 2;
    const order_result whole = serenity_order(g, serenity_options{.divide = false});
    const order_result split = serenity_order(g, serenity_options{.divide = true});
    const order_result parallel = serenity_order(g, serenity_options{.divide = true, .threads = 2});
    REQUIRE(whole.status == solve_status::optimal);
    CHECK(split.status == solve_status::optimal);
    CHECK(split.peak_bytes == whole.peak_bytes);
    CHECK(split.lower_bound == whole.peak_bytes);
    CHECK(simulate_order(g, split.order).peak_bytes == split.peak_bytes);
    CHECK(parallel.order == split.order);  // deterministic whatever the thread count
    if (g.size() <= 9) CHECK(whole.peak_bytes == brute_force_peak(g));
    // Each vertex is an ancestor or a descendant of every cut, so the cut splits the order.
    std::vector<std::size_t> pos(g.size());
    for (std::size_t i = 0; i < g.size(); ++i) pos[split.order[i]] = i;
    for (std::size_t c : cuts) {
      for (std::size_t v = 0; v < g.size(); ++v)
        for (auto w : g.successors(v)) CHECK(!(pos[v] < pos[c] && pos[c] < pos[w]));
    }
  }
  CHECK(segmented > 100);
}

TEST_CASE("divide and conquer with a budget and with the soft budgeting modes") {
  for (std::uint64_t seed = 0; seed < 60; ++seed) {
    const auto d = hourglass(3, 4, 0.35, seed + 1000, true, seed % 2 == 0);
    const memory_graph g(d);
    CAPTURE(seed);
    const std::int64_t best = serenity_order(g, serenity_options{.divide = false}).peak_bytes;
    for (auto mode : {soft_budget_mode::off, soft_budget_mode::paper, soft_budget_mode::bounded}) {
      const order_result r = serenity_order(g, serenity_options{.soft_budget = mode});
      CHECK(r.peak_bytes == best);
      CHECK(r.status == solve_status::optimal);
      const order_result at = serenity_order(g, serenity_options{.budget = best, .soft_budget = mode});
      CHECK(at.status == solve_status::optimal);
      CHECK(at.peak_bytes == best);
      const order_result below = serenity_order(g, serenity_options{.budget = best - 1, .soft_budget = mode});
      CHECK(below.status == solve_status::infeasible);
      CHECK(below.lower_bound >= best);
    }
  }
}

TEST_CASE("divide and conquer on a chain: every vertex is a cut") {
  const memory_graph g(memory_graph_data{.num_nodes = 5, .edges = {{0, 1}, {1, 2}, {2, 3}, {3, 4}}, .bytes = {5, 7, 3, 9, 1}});
  CHECK(single_node_cuts(g).size() == 5);
  const order_result r = serenity_order(g);
  CHECK(r.order == std::vector<std::size_t>{0, 1, 2, 3, 4});
  CHECK(r.peak_bytes == 12);  // 3 then 9
  CHECK(r.status == solve_status::optimal);
}

TEST_CASE("a graph numbered in topological order is its one segment: the same graph the segment build gives") {
  // serenity_segments copies such a graph (without training roles) instead of building the
  // segment; the copy must be exactly what the build gives, which a graph with training roles (the
  // build's path, whose segment drops the roles) shows.
  std::size_t compared = 0;
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    const std::size_t n = 2 + seed % 11;
    memory_graph_data d = random_dag(n, 0.3 + 0.05 * static_cast<double>(seed % 6), seed, 100, seed % 3 == 0);
    if (seed % 2 == 0) d = with_random_outputs(std::move(d), seed);
    if (seed % 4 == 1) d = with_random_inplace(std::move(d), seed);
    const memory_graph_data numbered = numbered_in_topological_order(d);
    const memory_graph plain(numbered);
    memory_graph_data with_roles_data = numbered;
    with_roles_data.roles.assign(n, node_role::forward);
    with_roles_data.roles[n - 1] = node_role::loss;  // the last vertex has no successor
    const memory_graph with_roles(with_roles_data);
    REQUIRE(plain.successors(n - 1).empty());
    REQUIRE(with_roles.has_training_roles());

    for (const bool divide : {false, true}) {
      const auto copied = detail::serenity_segments(plain, divide);
      const auto built = detail::serenity_segments(with_roles, divide);
      REQUIRE(copied.size() == built.size());
      if (copied.size() != 1) continue;
      CHECK(copied[0].whole);
      CHECK_FALSE(built[0].whole);
      CHECK(built[0].training);
      CHECK_FALSE(copied[0].training);
      CHECK(copied[0].global == built[0].global);
      CHECK(copied[0].has_lead == built[0].has_lead);
      CHECK(copied[0].base == built[0].base);
      const memory_graph_data a = copied[0].graph.data(), b = built[0].graph.data();
      CHECK(a.edges == b.edges);
      CHECK(a.bytes == b.bytes);
      CHECK(a.cost == b.cost);
      CHECK(a.workspace == b.workspace);
      CHECK(a.outputs == b.outputs);
      CHECK(a.ids == b.ids);
      CHECK(a.inplace == b.inplace);
      CHECK(b.roles.empty());
      CHECK(copied[0].graph.topological_order() == built[0].graph.topological_order());
      ++compared;
    }
    // The solve that starts from the whole graph's baselines gives the optimum.
    const auto r = serenity_order(plain);
    CHECK(r.status == solve_status::optimal);
    CHECK(r.peak_bytes == brute_force_peak(plain));
    CHECK(detail::order_peak_unchecked(plain, r.order) == r.peak_bytes);
  }
  CHECK(compared >= 40);
}
