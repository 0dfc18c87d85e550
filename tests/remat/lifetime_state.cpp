// detail::lifetime_state (remat/lifetime_search.hpp), the lifetime search's incremental memory:
// random moves and undos against the memory model. In its own TU because a test that calls the
// class directly compiles its members, and the linker then keeps that copy for the library's
// search too: at -O0 under the sanitizers (CI's second phase), where memsched::compiled is -O1.

#include <memsched/graph/memory_graph.hpp>
#include <memsched/remat/lifetime_search.hpp>
#include <memsched/sim/plan_from_computes.hpp>
#include <memsched/sim/simulate_order.hpp>
#include <memsched/sim/simulate_plan.hpp>

#include "../support/random_dag.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <vector>

using namespace memsched;
using namespace memsched::testing;

namespace {

/// A random DAG of 8-17 vertices (workspaces on even seeds, random outputs on every third seed),
/// its topological order, and half that order's peak as the budget.
struct lives_case {
  memory_graph g;
  std::vector<std::size_t> order;
  std::int64_t budget = 0;
};

lives_case lives_case_of(std::uint64_t seed, std::uint64_t graph_seed) {
  auto d = random_dag(8 + seed % 10, 0.3, graph_seed, 70, seed % 2 == 0);
  if (seed % 3 == 1) d = with_random_outputs(d, seed);
  lives_case c{memory_graph(d), {}, 0};
  c.order.assign(c.g.topological_order().begin(), c.g.topological_order().end());
  c.budget = order_peak(c.g, c.order) / 2;
  return c;
}

}  // namespace

TEST_CASE("lifetime_state: the incremental slot memory equals the simulated peak after random moves and undos") {
  // Lives built by hand through detail::lifetime_state: after every move the largest slot memory
  // must be the peak the memory model finds for the state's compute sequence (exact without
  // in-place outputs), and undo must restore the previous memory exactly.
  std::size_t moves = 0;
  for (std::uint64_t seed = 0; seed < 30; ++seed) {
    const lives_case c = lives_case_of(seed, seed + 900);
    const memory_graph& g = c.g;
    const std::vector<std::size_t>& order = c.order;
    const std::int64_t budget = c.budget;
    const std::size_t n = g.size();
    memsched::detail::lifetime_state st(g, order, budget);
    auto largest = [&] {
      std::int64_t m = 0, over = 0;
      for (std::size_t p = 0; p < n; ++p) {
        m = std::max(m, st.memory(p));
        over += std::max<std::int64_t>(0, st.memory(p) - budget);
      }
      CHECK(over == st.over());
      return m;
    };
    auto memories = [&] {
      std::vector<std::int64_t> m(n);
      for (std::size_t p = 0; p < n; ++p) m[p] = st.memory(p);
      return m;
    };
    CHECK(largest() == order_peak(g, order));
    std::mt19937_64 rng(seed);
    for (int step = 0; step < 40; ++step) {
      INFO("seed " << seed << " step " << step);
      const std::size_t v = rng() % n;
      const auto s = static_cast<memsched::detail::lifetime_state::slot>(rng() % n);
      const auto before = memories();
      const std::size_t m = st.mark();
      if (s > st.pos(v) && !st.has_start(v, s)) {
        st.add_start(v, s);
        for (auto x : g.predecessors(v)) st.add_demand(x, s);
      } else if (st.starts(v).size() > 1) {
        st.unrecompute(v, st.starts(v)[1 + rng() % (st.starts(v).size() - 1)]);
      } else {
        continue;
      }
      ++moves;
      CHECK(largest() == memsched::detail::sequence_peak_cost(g, st.sequence()).first);
      if (rng() % 4 == 0) {
        st.undo(m);
        CHECK(memories() == before);
      }
      st.commit();
    }
  }
  CHECK(moves > 300);
}

namespace {

execution_plan computes(std::initializer_list<std::size_t> vertices) {
  execution_plan p;
  for (const std::size_t v : vertices) p.steps.push_back({plan_op::compute, v});
  return p;
}

}  // namespace

TEST_CASE("lifetime_state_from_plan: a plan's recomputations become lives in the slot of the next first computation") {
  // 0 -> 1 -> 2 -> 3 and 0 -> 3, order 0 1 2 3; bytes 10 20 30 40, costs 1 2 3 4.
  memory_graph_data d;
  d.num_nodes = 4;
  d.edges = {{0, 1}, {1, 2}, {2, 3}, {0, 3}};
  d.bytes = {10, 20, 30, 40};
  d.cost = {1, 2, 3, 4};
  d.workspace.assign(4, 0);
  const memory_graph g(d);
  const std::vector<std::size_t> order = {0, 1, 2, 3};
  using memsched::detail::lifetime_state_from_plan;
  using slot = memsched::detail::lifetime_state::slot;

  SUBCASE("recomputing 0 for 3: a second life of 0 in slot 3, 0 freed over slot 2") {
    const auto st = lifetime_state_from_plan(g, order, 1000, computes({0, 1, 2, 0, 3}));
    REQUIRE(st);
    CHECK(st->starts(0) == std::vector<slot>{0, 3});
    CHECK(st->recomputations() == 1);
    CHECK(st->extra_cost() == 1.0);
    CHECK(st->sequence() == std::vector<std::size_t>{0, 1, 2, 0, 3});
    // Slot 2 computes 2 (30) from 1 (20), with 0 freed after slot 1: 50, not 60.
    CHECK(st->memory(2) == 50);
    CHECK(st->memory(1) == 30);  // 0 and 1, 0's first life ends at its reader 1
    CHECK(st->over() == 0);
  }
  SUBCASE("a budget below the plan's slot memory is reported as over, not refused") {
    const auto st = lifetime_state_from_plan(g, order, 55, computes({0, 1, 2, 0, 3}));
    REQUIRE(st);
    CHECK(st->memory(3) == 10 + 30 + 40);  // slot 3: 0 recomputed, 2 kept, 3 computed
    CHECK(st->over() == 80 - 55);
  }
  SUBCASE("repeats within a slot merge; a recomputation nobody reads afterwards is dropped") {
    // 0 twice before 3, and 1 recomputed before 3 although only 2 (already computed) reads it.
    const auto st = lifetime_state_from_plan(g, order, 1000, computes({0, 1, 2, 0, 0, 1, 3}));
    REQUIRE(st);
    CHECK(st->starts(0) == std::vector<slot>{0, 3});
    CHECK(st->starts(1) == std::vector<slot>{1});
    CHECK(st->recomputations() == 1);
    CHECK(st->extra_cost() == 1.0);
  }
  SUBCASE("after the last first computation: what no output needs is dropped") {
    const auto st = lifetime_state_from_plan(g, order, 1000, computes({0, 1, 2, 3, 1, 2}));
    REQUIRE(st);
    CHECK(st->recomputations() == 0);
    CHECK(st->sequence() == order);
  }
  SUBCASE("after the last first computation: an output computed again, with its input, joins the last slot") {
    d.outputs = std::vector<std::size_t>{1, 3};
    const memory_graph g2(d);
    const auto st = lifetime_state_from_plan(g2, order, 1000, computes({0, 1, 2, 3, 0, 1, 2}));
    REQUIRE(st);
    CHECK(st->starts(0) == std::vector<slot>{0, 3});
    CHECK(st->starts(1) == std::vector<slot>{1, 3});
    CHECK(st->starts(2) == std::vector<slot>{2});  // not an output, and no output read it at the end
    CHECK(st->extra_cost() == 3.0);
    CHECK(st->sequence() == std::vector<std::size_t>{0, 1, 2, 0, 1, 3});
    CHECK(st->memory(2) == 20 + 30);  // 0 and the output 1 are not held over slot 2 (60 without)
    CHECK(st->memory(3) == 10 + 20 + 30 + 40);
  }
  SUBCASE("plans that do not follow the order or miss a vertex give nothing") {
    CHECK_FALSE(lifetime_state_from_plan(g, order, 1000, computes({0, 2, 1, 3})));  // 2 before 1: not this order
    CHECK_FALSE(lifetime_state_from_plan(g, order, 1000, computes({0, 1, 2})));
    CHECK_FALSE(lifetime_state_from_plan(g, order, 1000, computes({0, 1, 2, 3, 7})));
    CHECK_FALSE(lifetime_state_from_plan(g, {0, 1, 2}, 1000, computes({0, 1, 2, 3})));
  }
}

TEST_CASE("lifetime_state_from_plan: random lives survive the round trip through their plan") {
  // Random recomputations (as in the test above), written out as a plan and read back: the same
  // lives without the ones nobody reads, never more cost, and reading that plan back again
  // changes nothing.
  std::size_t kept = 0, dropped = 0;
  for (std::uint64_t seed = 0; seed < 30; ++seed) {
    INFO("seed " << seed);
    const auto& [g, order, budget] = lives_case_of(seed, seed + 1900);
    const std::size_t n = g.size();
    memsched::detail::lifetime_state st(g, order, budget);
    std::mt19937_64 rng(seed);
    for (int step = 0; step < 30; ++step) {
      const std::size_t v = rng() % n;
      const auto s = static_cast<memsched::detail::lifetime_state::slot>(rng() % n);
      if (s <= st.pos(v) || st.has_start(v, s)) continue;
      st.add_start(v, s);
      for (auto x : g.predecessors(v)) st.add_demand(x, s);
    }
    st.commit();
    const auto back = memsched::detail::lifetime_state_from_plan(g, order, budget, plan_from_computes(g, st.sequence()));
    REQUIRE(back);
    CHECK(back->extra_cost() <= st.extra_cost() + 1e-9);
    for (std::size_t v = 0; v < n; ++v) {
      // Every life kept was one of the original's, and it has a reader.
      for (std::size_t i = 1; i < back->starts(v).size(); ++i) {
        ++kept;
        CHECK(st.has_start(v, back->starts(v)[i]));
        CHECK_FALSE(back->useless(v, back->starts(v)[i]));
      }
      for (std::size_t i = 1; i < st.starts(v).size(); ++i)
        if (!back->has_start(v, st.starts(v)[i])) ++dropped;
    }
    // The result is a plan (every reader finds its inputs), and its slot memory is the simulator's.
    CHECK(check_plan(g, plan_from_computes(g, back->sequence())).valid);
    std::int64_t largest = 0;
    for (std::size_t p = 0; p < n; ++p) largest = std::max(largest, back->memory(p));
    CHECK(largest == memsched::detail::sequence_peak_cost(g, back->sequence()).first);
    const auto again = memsched::detail::lifetime_state_from_plan(g, order, budget, plan_from_computes(g, back->sequence()));
    REQUIRE(again);
    for (std::size_t v = 0; v < n; ++v) CHECK(again->starts(v) == back->starts(v));
  }
  // Both sides were exercised: lives read by someone came back, random moves left unread ones.
  CHECK(kept > 0);
  CHECK(dropped > 0);
}
