#include <memsched/remat/checkpoint_plan.hpp>
#include <memsched/sim/simulate_order.hpp>

#include "support.hpp"

#include <doctest/doctest.h>

#include <map>
#include <queue>

using namespace memsched;
using namespace memsched::testing;

namespace {

/// Brute force: the least recomputation cost of a backward phase that starts with exactly the
/// forward values of `start` resident and runs the backward vertices in topological order
/// (Dijkstra over (backward vertices done, resident forward set); recomputing a forward value
/// needs its inputs resident).
double brute_force_recompute_cost(const memory_graph& g, const std::vector<char>& fwd, const std::vector<char>& start) {
  std::vector<std::size_t> fw, bw;
  for (auto v : g.topological_order()) (fwd[v] ? fw : bw).push_back(v);
  REQUIRE(fw.size() <= 16);
  std::vector<int> bit(g.size(), -1);
  for (std::size_t i = 0; i < fw.size(); ++i) bit[fw[i]] = static_cast<int>(i);
  auto need = [&](std::size_t v) {
    std::uint32_t m = 0;
    for (auto p : g.predecessors(v))
      if (fwd[p]) m |= 1u << bit[p];
    return m;
  };
  std::uint32_t mask0 = 0;
  for (std::size_t i = 0; i < fw.size(); ++i)
    if (start[fw[i]]) mask0 |= 1u << i;
  using state = std::pair<std::size_t, std::uint32_t>;
  std::map<state, double> dist;
  std::priority_queue<std::pair<double, state>, std::vector<std::pair<double, state>>, std::greater<>> q;
  dist[{0, mask0}] = 0;
  q.push({0, {0, mask0}});
  while (!q.empty()) {
    auto [d, s] = q.top();
    q.pop();
    if (d > dist[s]) continue;
    auto [k, mask] = s;
    if (k == bw.size()) return d;
    auto relax = [&](state t, double nd) {
      auto it = dist.find(t);
      if (it == dist.end() || nd < it->second) {
        dist[t] = nd;
        q.push({nd, t});
      }
    };
    if ((need(bw[k]) & ~mask) == 0) relax({k + 1, mask}, d);
    for (std::size_t i = 0; i < fw.size(); ++i)
      if (!(mask & (1u << i)) && (need(fw[i]) & ~mask) == 0) relax({k, mask | (1u << i)}, d + g.cost(fw[i]));
  }
  FAIL("no plan");
  return 0;
}

}  // namespace

TEST_CASE("checkpoint_plan on a chain, by hand") {
  // x -> a -> b -> c, 100 bytes each, cost 1 (x: 0). Training: loss 4, g(c) 5, g(b) 6, g(a) 7.
  const dataflow_graph t = chain_training_graph(4, 0, true);
  const memory_graph g = make_memory_graph(t);
  const remat_result all = checkpoint_all_plan(t, unlimited_budget);
  CHECK(all.status == solve_status::feasible);
  CHECK(all.overhead == 0.0);
  const std::vector<std::size_t> s{2};  // keep b
  const remat_result r = checkpoint_plan(t, unlimited_budget, {.checkpoints = s});
  REQUIRE(r.status == solve_status::feasible);
  // Recomputed: c (from b) for the loss, then x and a for g(a): 1 + 0 + 1.
  CHECK(r.total_cost == doctest::Approx(g.total_cost() + 2));
  const plan_simulation sim = simulate_plan(t, r.plan);
  CHECK(sim.peak_bytes == r.peak_bytes);
  CHECK(sim.total_cost == r.total_cost);
  // Budget below the peak: no_solution (nothing proven) with an empty plan, but the numbers still
  // say why; below what every plan needs: infeasible (proven).
  const remat_result tight = checkpoint_plan(t, r.peak_bytes - 1, {.checkpoints = s});
  CHECK(tight.status == solve_status::no_solution);
  CHECK_FALSE(tight.message.empty());
  CHECK(checkpoint_plan(t, 99, {.checkpoints = s}).status == solve_status::infeasible);  // every value has 100 bytes
  CHECK(tight.plan.steps.empty());
  CHECK(tight.peak_bytes == r.peak_bytes);
}

TEST_CASE("checkpoint_plan: minimal recomputation (brute force) and valid plans on random training graphs") {
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    const dataflow_graph t = random_training_graph(5 + seed % 4, 0.4, seed);
    const memory_graph g = make_memory_graph(t);
    const auto fwd = detail::forward_mask(make_memory_graph(t));
    std::vector<std::size_t> fw;
    for (auto v : g.topological_order())
      if (fwd[v]) fw.push_back(v);
    std::mt19937_64 rng(seed);
    for (int trial = 0; trial < 6; ++trial) {
      std::vector<std::size_t> s;
      std::vector<char> start(g.size(), 0);
      for (auto v : fw)
        if (rng() % 2) {
          s.push_back(v);
          start[v] = 1;
        }
      for (auto o : g.outputs()) start[o] = 1;
      CAPTURE(seed);
      CAPTURE(trial);
      const remat_result r = checkpoint_plan(t, unlimited_budget, {.checkpoints = s});
      REQUIRE(r.status == solve_status::feasible);
      const plan_simulation sim = simulate_plan(g, r.plan);
      CHECK(sim.peak_bytes == r.peak_bytes);
      CHECK(r.total_cost == doctest::Approx(g.total_cost() + brute_force_recompute_cost(g, fwd, start)));
      // The plan respects S: after the forward phase, only checkpoints and outputs stay resident.
      std::vector<char> resident(g.size(), 0);
      std::size_t computes = 0;
      for (std::size_t k = 0; k < r.plan.steps.size(); ++k) {
        const auto [op, v] = r.plan.steps[k];
        if (op == plan_op::compute) {
          if (computes == fw.size()) break;
          ++computes;
        }
        resident[v] = op == plan_op::compute;
      }
      for (auto v : fw)
        if (resident[v]) CHECK(start[v]);
    }
    // Checkpoint all: no recomputation, and the same peak as running the topological order.
    const remat_result all = checkpoint_all_plan(t, unlimited_budget);
    CHECK(all.overhead == 0.0);
    CHECK(all.total_cost == doctest::Approx(g.total_cost()));
    std::vector<std::size_t> order;
    for (auto v : g.topological_order())
      if (fwd[v]) order.push_back(v);
    for (auto v : g.topological_order())
      if (!fwd[v]) order.push_back(v);
    CHECK(all.peak_bytes == order_peak(g, order));
  }
}

TEST_CASE_TEMPLATE("checkpoint_plan is the same through every graph type", G, vecs_graph, lists_graph, csr_graph) {
  const dataflow_graph t = random_training_graph(7, 0.4, 3);
  const memory_graph g = make_memory_graph(t);
  const auto fwd = detail::forward_mask(make_memory_graph(t));
  const auto d = g.data();
  const typed_graph<G> tg(d);
  const std::vector<std::size_t> s{1, 3};
  const remat_result a = checkpoint_plan(g, unlimited_budget, {.checkpoints = s});
  const remat_result b = checkpoint_plan(tg.graph, unlimited_budget, {.checkpoints = s}, tg.maps());
  CHECK(a.plan == b.plan);
  CHECK(a.peak_bytes == b.peak_bytes);
  CHECK(a.overhead > 0.0);  // the roles came through: the backward phase recomputes
  // Without roles a graph is forward-only: one pass, no recomputation.
  memory_graph_data plain_data = d;
  plain_data.roles.clear();
  plain_data.grad_of.clear();
  const remat_result plain = checkpoint_plan(memory_graph(plain_data), unlimited_budget, {.checkpoints = s});
  CHECK(plain.overhead == 0.0);
}

TEST_CASE("checkpoint-all on every shared training graph: valid, overhead exactly 0") {
  for (const auto& path : shared_training_graphs()) {
    CAPTURE(path.string());
    const dataflow_graph t = read_json_graph(path);
    const remat_result r = checkpoint_all_plan(t, unlimited_budget);
    REQUIRE(r.status == solve_status::feasible);
    const plan_simulation sim = simulate_plan(t, r.plan);
    CHECK(sim.overhead == 0.0);
    CHECK(r.overhead == 0.0);
    CHECK(sim.peak_bytes == r.peak_bytes);
  }
}

TEST_CASE("checkpoint_plan rejects bad input") {
  const dataflow_graph t = chain_training_graph(4);
  const std::vector<std::size_t> backward{5};
  CHECK_THROWS_AS((void)checkpoint_plan(t, unlimited_budget, {.checkpoints = backward}), graph_error);
  const std::vector<std::size_t> bad{99};
  CHECK_THROWS_AS((void)checkpoint_plan(t, unlimited_budget, {.checkpoints = bad}), graph_error);
  // A forward node that reads a backward node.
  dataflow_graph u = t;
  for (auto v : boost::make_iterator_range(vertices(u))) u[v].role = node_role::backward;
  u[7].role = node_role::forward;
  u[7].grad_of.reset();
  CHECK_THROWS_AS((void)checkpoint_all_plan(u, unlimited_budget), graph_error);
}
