#include <memsched/sim/plan_from_computes.hpp>
#include <memsched/sim/simulate_plan.hpp>

#include "../support/random_dag.hpp"

#include <doctest/doctest.h>

#include <random>

using namespace memsched;
using namespace memsched::testing;

namespace {

using P = plan_op;

// Independent version: after the compute at position k, a resident value is freed when no later
// position reads it before the vertex is computed again, unless it is an output never recomputed.
std::vector<std::vector<std::size_t>> naive_frees(const memory_graph& g, const std::vector<std::size_t>& computes) {
  const std::size_t len = computes.size();
  std::vector<std::vector<std::size_t>> frees(len);
  std::vector<char> resident(g.size(), 0);
  for (std::size_t k = 0; k < len; ++k) {
    resident[computes[k]] = 1;
    for (std::size_t u = 0; u < g.size(); ++u) {
      if (!resident[u]) continue;
      bool needed = false, recomputed = false;
      for (std::size_t j = k + 1; j < len && !recomputed; ++j) {
        if (computes[j] == u) recomputed = true;
        for (auto p : g.predecessors(computes[j])) needed = needed || (!recomputed && p == u);
      }
      if (!needed && (recomputed || !g.is_output(u))) {
        resident[u] = 0;
        frees[k].push_back(u);
      }
    }
  }
  return frees;
}

}  // namespace

TEST_CASE("plan_from_computes by hand") {
  // 0 -> 1 -> 2 -> 3 and 0 -> 3: computing 0 twice frees the first copy after 1 reads it.
  const memory_graph g(memory_graph_data{.num_nodes = 4, .edges = {{0, 1}, {1, 2}, {2, 3}, {0, 3}}, .bytes = {10, 20, 30, 5}});
  const execution_plan plan = plan_from_computes(g, std::vector<std::size_t>{0, 1, 2, 0, 3});
  CHECK(plan.steps == std::vector<plan_step>{{P::compute, 0}, {P::compute, 1}, {P::free, 0}, {P::compute, 2}, {P::free, 1},
                                             {P::compute, 0}, {P::compute, 3}, {P::free, 2}, {P::free, 0}});
  CHECK(simulate_plan(g, plan).peak_bytes == 50);
  // An output computed twice keeps only its last copy; an unread value is freed at once.
  const memory_graph h(memory_graph_data{.num_nodes = 2, .edges = {{0, 1}}, .bytes = {4, 6}, .outputs = std::vector<std::size_t>{0}});
  CHECK(plan_from_computes(h, std::vector<std::size_t>{0, 1, 0}).steps ==
        std::vector<plan_step>{{P::compute, 0}, {P::compute, 1}, {P::free, 0}, {P::free, 1}, {P::compute, 0}});
}

TEST_CASE("plan_from_computes: bad entries throw, missing inputs give an invalid plan") {
  const memory_graph g(memory_graph_data{.num_nodes = 2, .edges = {{0, 1}}, .bytes = {1, 1}});
  CHECK_THROWS_AS((void)plan_from_computes(g, std::vector<std::size_t>{0, 2}), graph_error);
  const plan_check c = check_plan(g, plan_from_computes(g, std::vector<std::size_t>{1, 0}));
  CHECK_FALSE(c.valid);
  CHECK(c.step == 0);
  CHECK(plan_from_computes(g, std::vector<std::size_t>{}).steps.empty());
}

TEST_CASE_TEMPLATE("plan_from_computes frees each value right after its last use (random sequences, every graph type)", G,
                   vecs_graph, lists_graph, csr_graph) {
  std::mt19937_64 rng(11);
  int valid = 0;
  for (std::uint64_t seed = 0; seed < 150; ++seed) {
    const std::size_t n = 1 + seed % 9;
    auto d = random_dag(n, 0.3, seed, 100, seed % 2 == 1);
    if (seed % 3 == 0) d.outputs = std::vector<std::size_t>{n - 1, 0};
    const memory_graph g(d);
    const typed_graph<G> tg(d);
    // A topological order with recomputations inserted right before random consumers.
    std::vector<std::size_t> computes;
    for (auto v : g.topological_order()) {
      for (auto p : g.predecessors(v))
        if (rng() % 3 == 0) computes.push_back(p);  // invalid when p's own inputs are gone by then
      computes.push_back(v);
    }
    const execution_plan plan = plan_from_computes(tg.graph, computes, tg.maps());
    // Rebuild the frees after each compute from the independent version.
    const auto frees = naive_frees(g, computes);
    std::vector<plan_step> want;
    for (std::size_t k = 0; k < computes.size(); ++k) {
      want.push_back({P::compute, computes[k]});
      for (auto u : frees[k]) want.push_back({P::free, u});
    }
    // Frees after one compute may come in any order: compare group by group, sorted.
    auto normalize = [](std::vector<plan_step> steps) {
      for (std::size_t i = 0; i < steps.size();) {
        std::size_t j = i + 1;
        while (j < steps.size() && steps[j].op == P::free) ++j;
        std::sort(steps.begin() + static_cast<std::ptrdiff_t>(i + 1), steps.begin() + static_cast<std::ptrdiff_t>(j),
                  [](const plan_step& a, const plan_step& b) { return a.node < b.node; });
        i = j;
      }
      return steps;
    };
    CAPTURE(seed);
    const plan_check verdict = check_plan(g, plan);
    if (verdict.valid) {
      ++valid;
      REQUIRE(normalize(plan.steps) == normalize(want));
      CHECK(simulate_plan(g, plan).computes == computes.size());
    } else {
      // Only a recompute whose own inputs were already freed can break the plan.
      CHECK(verdict.error.find("needs its input") != std::string::npos);
    }
  }
  CHECK(valid > 50);
}
