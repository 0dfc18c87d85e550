#include <memsched/sim/memory_model.hpp>
#include <memsched/sim/plan_from_computes.hpp>
#include <memsched/sim/simulate_order.hpp>
#include <memsched/sim/simulate_plan.hpp>

#include "../support/memory_rule.hpp"
#include "../support/random_dag.hpp"

#include <doctest/doctest.h>

#include <random>
#include <vector>

using namespace memsched;
using namespace memsched::testing;

namespace {

memory_step ms(std::int64_t before, std::int64_t transient, std::int64_t freed, std::int64_t after) {
  return memory_step{before, transient, freed, after};
}

// The rule re-implemented the slow, obvious way for a compute sequence: before position k, the
// value computed at j < k is resident when some position in [k, next computation of the same
// vertex) reads it, or when it is the last computation of an output.
std::vector<memory_step> naive_sequence(const memory_graph& g, const std::vector<std::size_t>& seq) {
  const std::size_t len = seq.size();
  auto next_computation = [&](std::size_t j) {
    for (std::size_t r = j + 1; r < len; ++r)
      if (seq[r] == seq[j]) return r;
    return len;
  };
  auto resident_before = [&](std::size_t k) {
    std::int64_t live = 0;
    for (std::size_t j = 0; j < k; ++j) {
      const std::size_t end = next_computation(j);
      bool keep = end == len && g.is_output(seq[j]);
      for (std::size_t r = k; r < end && !keep; ++r)
        for (auto p : g.predecessors(seq[r])) keep = keep || p == seq[j];
      if (keep) live += g.bytes(seq[j]);
    }
    return live;
  };
  std::vector<memory_step> steps;
  for (std::size_t k = 0; k < len; ++k) {
    const std::int64_t before = resident_before(k), after = resident_before(k + 1);
    const std::size_t v = seq[k];
    steps.push_back(ms(before, before + g.bytes(v) + g.workspace(v), before + g.bytes(v) - after, after));
  }
  return steps;
}

// A random valid compute sequence: a topological order with, before some vertices, recomputations
// of vertices computed earlier (their inputs were computed before them, so the value can be
// computed again).
std::vector<std::size_t> random_sequence(const memory_graph& g, std::mt19937_64& rng) {
  std::vector<std::size_t> seq, done;
  for (auto v : g.topological_order()) {
    while (!done.empty() && rng() % 3 == 0) seq.push_back(done[rng() % done.size()]);
    seq.push_back(v);
    done.push_back(v);
  }
  return seq;
}

}  // namespace

TEST_CASE("memory_model by hand: frees after the last consumer, workspace only while running, outputs kept") {
  // a(10) -> b(20, workspace 7) -> c(5); a -> c. Outputs: the sinks (c).
  const memory_graph g(memory_graph_data{.num_nodes = 3, .edges = {{0, 1}, {1, 2}, {0, 2}}, .bytes = {10, 20, 5}, .workspace = {0, 7, 0}});
  CHECK(walk(g, {0, 1, 2}) == std::vector<memory_step>{ms(0, 10, 0, 10), ms(10, 37, 0, 30), ms(30, 35, 30, 5)});

  // Explicit outputs {a}: a stays to the end although both consumers ran; c is read by nobody and
  // is not an output, so it is freed at once.
  const memory_graph h(memory_graph_data{.num_nodes = 3, .edges = {{0, 1}, {1, 2}, {0, 2}}, .bytes = {10, 20, 5}, .outputs = std::vector<std::size_t>{0}});
  memory_model model(h);
  std::vector<std::size_t> freed;
  auto record = [&](std::size_t u) { freed.push_back(u); };
  CHECK(model.step(0, record) == ms(0, 10, 0, 10));
  CHECK(model.unread_consumers(0) == 2);
  CHECK(model.step(1, record) == ms(10, 30, 0, 30));
  CHECK(model.unread_consumers(0) == 1);
  CHECK(model.step(2, record) == ms(30, 35, 25, 10));  // b (its last consumer ran) and c (unread)
  CHECK(freed == std::vector<std::size_t>{1, 2});
  CHECK(model.live() == 10);
  CHECK(model.resident(0));
  CHECK(!model.resident(1));
  CHECK(!model.resident(2));
  model.reset();
  CHECK(model.live() == 0);
  CHECK(model.unread_consumers(0) == 2);
  CHECK(model.step(0) == ms(0, 10, 0, 10));

  // No outputs at all: every value dies; an isolated vertex is freed right after it runs.
  const memory_graph none(memory_graph_data{.num_nodes = 2, .bytes = {3, 4}, .workspace = {1, 0}, .outputs = std::vector<std::size_t>{}});
  CHECK(walk(none, {1, 0}) == std::vector<memory_step>{ms(0, 4, 4, 0), ms(0, 4, 3, 0)});
}

TEST_CASE("the model on compute sequences with recomputation, by hand") {
  // a(10) -> b(20) -> c(5), a -> c; c is the output. Sequence a, b, a, c: the first a dies after b
  // (its last read before a is computed again), the second a and b die after c.
  const memory_graph g(memory_graph_data{.num_nodes = 3, .edges = {{0, 1}, {1, 2}, {0, 2}}, .bytes = {10, 20, 5}});
  const std::vector<std::size_t> seq{0, 1, 0, 2};
  CHECK(sequence_lifetimes(g, seq) == std::vector<std::size_t>{1, 3, 3, kept_to_end});
  CHECK(simulate_sequence(g, seq) == std::vector<memory_step>{ms(0, 10, 0, 10), ms(10, 30, 10, 20), ms(20, 30, 0, 30), ms(30, 35, 30, 5)});

  // An output computed twice: the first copy is freed (after its last read, or at once when
  // unread), only the last one stays. An unread recomputation dies at once.
  const std::vector<std::size_t> twice{0, 1, 2, 2};
  CHECK(sequence_lifetimes(g, twice) == std::vector<std::size_t>{3, 3, 2, kept_to_end});
  CHECK(simulate_sequence(g, twice) == std::vector<memory_step>{ms(0, 10, 0, 10), ms(10, 30, 0, 30), ms(30, 35, 5, 30), ms(30, 35, 30, 5)});
  const std::vector<std::size_t> unread{0, 0, 1, 2};
  CHECK(sequence_lifetimes(g, unread) == std::vector<std::size_t>{0, 3, 3, kept_to_end});

  // The plan built from the sequence frees exactly there.
  const execution_plan plan = plan_from_computes(g, seq);
  CHECK(plan.steps == std::vector<plan_step>{{plan_op::compute, 0}, {plan_op::compute, 1}, {plan_op::free, 0}, {plan_op::compute, 0},
                                             {plan_op::compute, 2}, {plan_op::free, 1}, {plan_op::free, 0}});
}

TEST_CASE("memory_model, simulate_sequence, simulate_order and a naive model agree on random DAGs and orders") {
  std::mt19937_64 rng(7);
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    CAPTURE(seed);
    memory_graph_data d = random_dag(2 + seed % 11, 0.3, seed, 100, seed % 2 == 0);
    if (seed % 3 == 0) d = with_random_outputs(d, seed);
    const memory_graph g(d);
    // A random topological order (Kahn with a random ready vertex).
    std::vector<std::uint32_t> indegree(g.size());
    std::vector<std::size_t> ready, order;
    for (std::size_t v = 0; v < g.size(); ++v)
      if ((indegree[v] = static_cast<std::uint32_t>(g.in_degree(v))) == 0) ready.push_back(v);
    while (!ready.empty()) {
      std::swap(ready[rng() % ready.size()], ready.back());
      const std::size_t v = ready.back();
      ready.pop_back();
      order.push_back(v);
      for (auto s : g.successors(v))
        if (--indegree[s] == 0) ready.push_back(s);
    }
    const std::vector<memory_step> stepped = walk(g, order);
    CHECK(stepped == naive_sequence(g, order));
    CHECK(stepped == simulate_sequence(g, order));
    const order_simulation sim = simulate_order(g, order);
    std::int64_t peak = 0;
    for (std::size_t k = 0; k < order.size(); ++k) {
      CHECK(sim.live_before[k] == stepped[k].live_before);
      CHECK(sim.transient[k] == stepped[k].transient);
      CHECK(sim.live_after[k] == stepped[k].live_after);
      peak = std::max(peak, stepped[k].transient);
    }
    CHECK(sim.peak_bytes == peak);
    CHECK(order_peak(g, order) == peak);
  }
}

TEST_CASE("simulate_sequence agrees with a naive model and with simulate_plan on random sequences with recomputation") {
  std::mt19937_64 rng(11);
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    CAPTURE(seed);
    memory_graph_data d = random_dag(2 + seed % 9, 0.35, seed, 50, seed % 2 == 1);
    if (seed % 4 == 0) d = with_random_outputs(d, seed);
    const memory_graph g(d);
    const std::vector<std::size_t> seq = random_sequence(g, rng);
    CAPTURE(seq.size());
    const std::vector<memory_step> steps = simulate_sequence(g, seq);
    CHECK(steps == naive_sequence(g, seq));

    const execution_plan plan = plan_from_computes(g, seq);
    const plan_simulation sim = simulate_plan(g, plan);  // throws if the model's plan were invalid
    std::int64_t peak = 0;
    std::size_t k = 0;
    for (std::size_t s = 0; s < plan.steps.size(); ++s) {
      if (plan.steps[s].op != plan_op::compute) continue;
      REQUIRE(k < steps.size());
      CHECK(plan.steps[s].node == seq[k]);
      CHECK(sim.live_before[s] == steps[k].live_before);
      CHECK(sim.transient[s] == steps[k].transient);
      // After the compute and the frees that follow it.
      std::size_t last = s;
      while (last + 1 < plan.steps.size() && plan.steps[last + 1].op == plan_op::free) ++last;
      CHECK(sim.live_after[last] == steps[k].live_after);
      peak = std::max(peak, steps[k].transient);
      ++k;
    }
    CHECK(k == seq.size());
    CHECK(sim.peak_bytes == peak);
  }
}

TEST_CASE("simulate_plan's timeline: live_before, transient (compute: + bytes + workspace; free: live_before), live_after") {
  const memory_graph g(memory_graph_data{.num_nodes = 2, .edges = {{0, 1}}, .bytes = {10, 20}, .workspace = {3, 4}});
  const plan_simulation sim = simulate_plan(g, execution_plan{{{plan_op::compute, 0}, {plan_op::compute, 1}, {plan_op::free, 0}}});
  CHECK(sim.live_before == std::vector<std::int64_t>{0, 10, 30});
  CHECK(sim.transient == std::vector<std::int64_t>{13, 34, 30});
  CHECK(sim.live_after == std::vector<std::int64_t>{10, 30, 20});
  CHECK(sim.peak_bytes == 34);
  const order_simulation os = simulate_order(g, std::vector<std::size_t>{0, 1});
  CHECK(os.transient == std::vector<std::int64_t>{13, 34});
}
