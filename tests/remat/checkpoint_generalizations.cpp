#include <memsched/remat/best_heuristic.hpp>
#include <memsched/remat/checkpoint_generalizations.hpp>

#include "support.hpp"

#include <doctest/doctest.h>

using namespace memsched;
using namespace memsched::testing;

namespace {

/// Articulation points by definition: removing v (from the undirected forward graph with a
/// virtual source on the first and a sink on the last forward vertex) adds a component.
std::vector<std::size_t> naive_articulation_points(const memory_graph& g, const std::vector<char>& fwd) {
  std::vector<std::size_t> order;
  for (auto v : g.topological_order())
    if (fwd[v]) order.push_back(v);
  const std::size_t n = g.size() + 2, src = g.size(), snk = g.size() + 1;
  std::vector<std::vector<std::size_t>> adj(n);
  for (auto u : order)
    for (auto s : g.successors(u))
      if (fwd[s]) {
        adj[u].push_back(s);
        adj[s].push_back(u);
      }
  adj[src].push_back(order.front());
  adj[order.front()].push_back(src);
  adj[snk].push_back(order.back());
  adj[order.back()].push_back(snk);
  std::vector<char> in(n, 0);
  for (auto v : order) in[v] = 1;
  in[src] = in[snk] = 1;
  auto components = [&](std::size_t removed) {
    std::vector<char> seen(n, 0);
    std::size_t c = 0;
    for (std::size_t s = 0; s < n; ++s) {
      if (!in[s] || s == removed || seen[s]) continue;
      ++c;
      std::vector<std::size_t> stack{s};
      seen[s] = 1;
      while (!stack.empty()) {
        auto u = stack.back();
        stack.pop_back();
        for (auto w : adj[u])
          if (w != removed && !seen[w]) {
            seen[w] = 1;
            stack.push_back(w);
          }
      }
    }
    return c;
  };
  const std::size_t base = components(n);
  std::vector<std::size_t> out;
  for (auto v : order)
    if (components(v) > base) out.push_back(v);
  return out;
}

}  // namespace

TEST_CASE("forward_articulation_points matches the definition") {
  for (std::uint64_t seed = 0; seed < 60; ++seed) {
    const dataflow_graph t = random_training_graph(4 + seed % 9, 0.15 + 0.05 * static_cast<double>(seed % 6), seed);
    const memory_graph g = make_memory_graph(t);
    CAPTURE(seed);
    CHECK(forward_articulation_points(t) == naive_articulation_points(g, detail::forward_mask(g)));
  }
  // On a chain every forward node is one.
  const dataflow_graph c = chain_training_graph(6);
  CHECK(forward_articulation_points(c) == std::vector<std::size_t>{0, 1, 2, 3, 4, 5});
}

TEST_CASE("generalized strategies: valid plans within budget on random and shared graphs") {
  std::vector<dataflow_graph> graphs;
  for (std::uint64_t seed = 0; seed < 12; ++seed) graphs.push_back(random_training_graph(10, 0.25, seed));
  for (const auto& p : shared_training_graphs()) graphs.push_back(read_json_graph(p));
  for (const auto& t : graphs) {
    CAPTURE(t[boost::graph_bundle].name);
    const remat_result all = checkpoint_all_plan(t, unlimited_budget);
    for (double frac : {1.0, 0.9, 0.7}) {
      const auto budget = static_cast<std::int64_t>(frac * static_cast<double>(all.peak_bytes));
      for (auto h : all_remat_heuristics) {
        CAPTURE(to_string(h));
        const remat_result r = run_remat_heuristic(t, h, budget, {});
        if (r.status == solve_status::unsupported) {
          CHECK((h == remat_heuristic::chen_sqrtn || h == remat_heuristic::chen_greedy));
          continue;
        }
        CHECK(r.overhead >= 0.0);
        if (r.status != solve_status::feasible) {
          CHECK(r.peak_bytes > budget);
          continue;
        }
        const plan_simulation sim = simulate_plan(t, r.plan);
        CHECK(sim.peak_bytes == r.peak_bytes);
        CHECK(sim.peak_bytes <= budget);
        CHECK(sim.total_cost == doctest::Approx(r.total_cost));
      }
      const remat_result best = best_heuristic_plan(t, budget);
      if (frac == 1.0) {
        REQUIRE(best.status == solve_status::feasible);
        CHECK(best.overhead == 0.0);
      }
      if (best.status == solve_status::feasible) {
        CHECK(simulate_plan(t, best.plan).peak_bytes <= budget);
        for (auto h : all_remat_heuristics) {
          const remat_result r = run_remat_heuristic(t, h, budget, {});
          if (r.status == solve_status::feasible) CHECK(best.total_cost <= r.total_cost);
        }
      }
    }
  }
}

TEST_CASE("fixed-b greedy plans and names") {
  const dataflow_graph t = random_training_graph(12, 0.3, 5);
  for (std::int64_t b : {0, 50, 200, 100000}) {
    for (const remat_result& r : {ap_greedy_plan(t, unlimited_budget, {.segment_bytes = b}), linearized_greedy_plan(t, unlimited_budget, {.segment_bytes = b})}) {
      REQUIRE(r.status == solve_status::feasible);
      CHECK(simulate_plan(t, r.plan).peak_bytes == r.peak_bytes);
    }
  }
  // b larger than the forward part: no checkpoint, the tail is everything: checkpoint all.
  CHECK(linearized_greedy_plan(t, unlimited_budget, {.segment_bytes = 100000}).overhead == 0.0);
  for (auto h : all_remat_heuristics) CHECK(parse_remat_heuristic(to_string(h)) == h);
  CHECK(!parse_remat_heuristic("nope"));
}
