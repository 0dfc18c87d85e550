#include <memsched/sim/plan_from_computes.hpp>
#include <memsched/sim/simulate_order.hpp>
#include <memsched/sim/simulate_plan.hpp>

#include "../support/random_dag.hpp"

#include <doctest/doctest.h>

#include <random>
#include <string>

using namespace memsched;
using namespace memsched::testing;

namespace {

using P = plan_op;

// 0 -> 1 -> 2 -> 3 and 0 -> 3; bytes 10 20 30 5, cost 1 2 3 4 (total 10), workspace 0 0 6 0.
memory_graph chain_graph() {
  return memory_graph(memory_graph_data{.num_nodes = 4,
                                        .edges = {{0, 1}, {1, 2}, {2, 3}, {0, 3}},
                                        .bytes = {10, 20, 30, 5},
                                        .cost = {1, 2, 3, 4},
                                        .workspace = {0, 0, 6, 0},
                                        .ids = {100, 101, 102, 103}});
}

// The plan rules re-implemented independently: returns the index of the first bad step
// (steps.size() for an end-of-plan violation, -1 when valid) and the peak and cost when valid.
struct naive_verdict {
  long bad = -1;
  std::int64_t peak = 0;
  double cost = 0;
};
naive_verdict naive_check(const memory_graph& g, const execution_plan& plan) {
  naive_verdict r;
  std::vector<char> resident(g.size(), 0), ever(g.size(), 0);
  for (std::size_t k = 0; k < plan.steps.size(); ++k) {
    const auto s = plan.steps[k];
    if (s.node >= g.size()) return {static_cast<long>(k)};
    if (s.op == P::free) {
      if (!resident[s.node]) return {static_cast<long>(k)};
      resident[s.node] = 0;
      continue;
    }
    if (resident[s.node]) return {static_cast<long>(k)};
    for (auto p : g.predecessors(s.node))
      if (!resident[p]) return {static_cast<long>(k)};
    std::int64_t live = 0;
    for (std::size_t u = 0; u < g.size(); ++u) live += resident[u] ? g.bytes(u) : 0;
    r.peak = std::max(r.peak, live + g.bytes(s.node) + g.workspace(s.node));
    r.cost += g.cost(s.node);
    resident[s.node] = ever[s.node] = 1;
  }
  for (std::size_t v = 0; v < g.size(); ++v)
    if (!ever[v] || (g.is_output(v) && !resident[v])) return {static_cast<long>(plan.steps.size())};
  return r;
}

}  // namespace

TEST_CASE("simulate_plan by hand: recomputation, peak, cost and overhead") {
  const memory_graph g = chain_graph();
  // Recompute 0 instead of keeping it across 1 and 2.
  const execution_plan plan{{{P::compute, 0}, {P::compute, 1}, {P::free, 0}, {P::compute, 2}, {P::free, 1},
                             {P::compute, 0}, {P::compute, 3}, {P::free, 0}, {P::free, 2}}};
  const plan_simulation sim = simulate_plan(g, plan);
  // live after: 10, 30, 20, 50, 30, 40, 45, 35, 5. Computes: 0: 10 | 1: 30 | 2: 20+30+6 = 56 | 0: 40 | 3: 45.
  CHECK(sim.live_after == std::vector<std::int64_t>{10, 30, 20, 50, 30, 40, 45, 35, 5});
  CHECK(sim.peak_bytes == 56);
  CHECK(sim.peak_step == 3);
  CHECK(sim.total_cost == 11);
  CHECK(sim.overhead == doctest::Approx(0.1));
  CHECK(sim.computes == 5);
  CHECK(check_plan(g, plan).valid);
  // Without recomputation 0 stays: running 2 holds 10 + 20 + 30 + 6 = 66.
  const std::vector<std::size_t> order{0, 1, 2, 3};
  const plan_simulation once = simulate_plan(g, plan_from_computes(g, order));
  CHECK(once.peak_bytes == 66);
  CHECK(once.peak_bytes == order_peak(g, order));
  CHECK(once.overhead == 0);
}

TEST_CASE("check_plan names the first violated rule and its step") {
  const memory_graph g = chain_graph();
  auto verdict = [&](std::vector<plan_step> steps, std::optional<std::size_t> step, const std::string& words) {
    CAPTURE(words);
    const plan_check c = check_plan(g, execution_plan{steps});
    CHECK_FALSE(c.valid);
    CHECK(c.step == step);
    CHECK(c.error.find(words) != std::string::npos);
    try {
      (void)simulate_plan(g, execution_plan{steps});
      FAIL("no exception");
    } catch (const invalid_plan& e) {
      CHECK(e.step() == step.value_or(steps.size()));
      CHECK(std::string(e.what()).find("simulate_plan: ") == 0);
      CHECK(std::string(e.what()).find(words) != std::string::npos);
    }
  };
  verdict({{P::compute, 1}}, 0, "step 0: compute node 101 (vertex 1) needs its input node 100 (vertex 0), which is not resident");
  verdict({{P::compute, 0}, {P::compute, 0}}, 1, "step 1: compute node 100 (vertex 0) while it is resident");
  verdict({{P::compute, 0}, {P::free, 1}}, 1, "step 1: free node 101 (vertex 1), which is not resident");
  verdict({{P::compute, 0}, {P::free, 9}}, 1, "step 1: free of 9, which is not a vertex");
  verdict({{P::compute, 0}, {P::compute, 1}, {P::compute, 2}}, std::nullopt, "end of plan: node 103 (vertex 3) is never computed");
  verdict({{P::compute, 0}, {P::compute, 1}, {P::compute, 2}, {P::compute, 3}, {P::free, 3}}, std::nullopt,
          "end of plan: output node 103 (vertex 3) is not resident");
  // The first violation wins over later ones.
  verdict({{P::free, 0}, {P::compute, 3}}, 0, "step 0: free node 100");
  CHECK(check_plan(g, execution_plan{{{P::compute, 0}, {P::compute, 1}, {P::compute, 2}, {P::compute, 3}}}).valid);
}

TEST_CASE("an empty plan is valid only for the empty graph") {
  CHECK(check_plan(memory_graph{}, execution_plan{}).valid);
  const plan_simulation sim = simulate_plan(memory_graph{}, execution_plan{});
  CHECK(sim.peak_bytes == 0);
  CHECK(sim.overhead == 0);
  CHECK_FALSE(check_plan(chain_graph(), execution_plan{}).valid);
}

TEST_CASE_TEMPLATE("simulate_plan agrees with a naive checker on random plans, over every graph type", G, vecs_graph,
                   lists_graph, csr_graph) {
  std::mt19937_64 rng(7);
  int valid = 0, invalid = 0;
  for (std::uint64_t seed = 0; seed < 120; ++seed) {
    const std::size_t n = 1 + seed % 7;
    const auto d = random_dag(n, 0.35, seed, 50, seed % 2 == 0);
    const memory_graph g(d);
    const typed_graph<G> tg(d);
    // A random compute sequence with recomputations, turned into a plan, then randomly damaged.
    std::vector<std::size_t> computes(g.topological_order().begin(), g.topological_order().end());
    for (int extra = 0; extra < 3; ++extra) {
      const std::size_t at = rng() % (computes.size() + 1);
      computes.insert(computes.begin() + static_cast<std::ptrdiff_t>(at), rng() % n);
    }
    execution_plan plan = plan_from_computes(g, computes);
    if (rng() % 2 == 0 && !plan.steps.empty()) {
      auto& s = plan.steps[rng() % plan.steps.size()];
      switch (rng() % 3) {
        case 0: s.op = s.op == P::free ? P::compute : P::free; break;
        case 1: s.node = rng() % (n + 1); break;
        default: plan.steps.erase(plan.steps.begin() + static_cast<std::ptrdiff_t>(rng() % plan.steps.size()));
      }
    }
    const naive_verdict want = naive_check(g, plan);
    const plan_check got = check_plan(tg.graph, plan, tg.maps());
    CAPTURE(seed);
    REQUIRE(got.valid == (want.bad < 0));
    if (!got.valid) {
      ++invalid;
      CHECK(static_cast<long>(got.step.value_or(plan.steps.size())) == want.bad);
      continue;
    }
    ++valid;
    const plan_simulation sim = simulate_plan(tg.graph, plan, tg.maps());
    CHECK(sim.peak_bytes == want.peak);
    CHECK(sim.total_cost == doctest::Approx(want.cost));
    CHECK(sim.overhead == doctest::Approx(want.cost / g.total_cost() - 1));
  }
  CHECK(valid > 20);
  CHECK(invalid > 20);
}

TEST_CASE("a plan made from a topological order has the order's peak and no overhead (all orders, random DAGs)") {
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    const std::size_t n = 1 + seed % 7;
    auto d = random_dag(n, 0.3, seed, 100, seed % 2 == 1);
    if (seed % 4 == 0) d.outputs = std::vector<std::size_t>{0};
    const memory_graph g(d);
    for_each_topological_order(g, [&](const std::vector<std::size_t>& order) {
      const plan_simulation sim = simulate_plan(g, plan_from_computes(g, order));
      REQUIRE(sim.peak_bytes == order_peak(g, order));
      REQUIRE(sim.total_cost == g.total_cost());
      REQUIRE(sim.overhead == 0);
      REQUIRE(sim.live_after.back() == simulate_order(g, order).live_after.back());
    });
  }
}
