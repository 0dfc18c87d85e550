// In-place outputs (issue 12): the memory model, the simulators, the arena, off-chip traffic and
// the remat plan builder against the rule as support/memory_rule.hpp writes it out from its text
// (rule_steps).
#include <memsched/remat/detail/plan_builder.hpp>
#include <memsched/sim/arena.hpp>
#include <memsched/sim/memory_model.hpp>
#include <memsched/sim/offchip_traffic.hpp>
#include <memsched/sim/plan_from_computes.hpp>
#include <memsched/sim/simulate_order.hpp>
#include <memsched/sim/simulate_plan.hpp>

#include "../support/memory_rule.hpp"
#include "../support/random_dag.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

using namespace memsched;
using namespace memsched::testing;

namespace {

constexpr std::size_t none = memory_step::none;
constexpr arena_strategy both[] = {arena_strategy::greedy_by_size, arena_strategy::first_fit};

// The bytes of the arena buffers live at each step (from the arena's own buffer list): the arena
// must hold exactly the simulator's transient at every step (at compute steps for plans).
std::vector<std::int64_t> live_buffer_bytes(const std::vector<detail::arena_buffer>& buffers, std::size_t steps) {
  std::vector<std::int64_t> live(steps, 0);
  for (const auto& b : buffers)
    for (std::size_t k = b.first; k <= b.last && k < steps; ++k) live[k] += b.size;
  return live;
}

// A ResNet-style basic block: x (100) -> conv1 (200) -> relu (200, in-place) -> conv2 (100)
// -> add (100, in-place; also reads the skip x). Vertices 0..4 in that order.
memory_graph resnet_block(bool inplace, std::optional<std::vector<std::size_t>> outputs = std::nullopt) {
  return memory_graph(memory_graph_data{.num_nodes = 5,
                                        .edges = {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {0, 4}},
                                        .bytes = {100, 200, 200, 100, 100},
                                        .outputs = std::move(outputs),
                                        .inplace = inplace ? std::vector<char>{0, 0, 1, 0, 1} : std::vector<char>{}});
}

}  // namespace

TEST_CASE("in-place by hand: a ResNet-style block with and without in-place outputs") {
  const std::vector<std::size_t> order{0, 1, 2, 3, 4};
  // Without in-place:
  //   x:     0 + 100                         = 100, live after 100
  //   conv1: 100 + 200                       = 300, live after 300 (x waits for add)
  //   relu:  300 + 200                       = 500, conv1 dies: live after 300
  //   conv2: 300 + 100                       = 400, relu dies: live after 200
  //   add:   200 + 100                       = 300, x and conv2 die: live after 100
  // peak 500 at relu.
  const order_simulation plain = simulate_order(resnet_block(false), order);
  CHECK(plain.transient == std::vector<std::int64_t>{100, 300, 500, 400, 300});
  CHECK(plain.live_after == std::vector<std::int64_t>{100, 300, 300, 200, 100});
  CHECK(plain.peak_bytes == 500);
  CHECK(plain.reused == std::vector<std::size_t>(5, none));
  // In-place: relu writes into conv1's buffer (conv1 dies there, equal size): 300 + 0 = 300; add
  // writes into x's buffer (x, the first input by index, and conv2 both die there): 200 + 0 = 200.
  // live_after is the same; the peak moves to conv2: 400.
  const order_simulation in_place = simulate_order(resnet_block(true), order);
  CHECK(in_place.transient == std::vector<std::int64_t>{100, 300, 300, 400, 200});
  CHECK(in_place.live_after == plain.live_after);
  CHECK(in_place.peak_bytes == 400);
  CHECK(in_place.peak_step == 3);
  CHECK(in_place.reused == std::vector<std::size_t>{none, none, 1, none, 0});
  CHECK(order_peak(resnet_block(true), order) == 400);

  // x a graph output too: add cannot take over x (outputs are never reused) but takes conv2's
  // buffer: 200 + 0 = 200, and x stays: live after 200.
  const order_simulation keep_x = simulate_order(resnet_block(true, std::vector<std::size_t>{0, 4}), order);
  CHECK(keep_x.reused == std::vector<std::size_t>{none, none, 1, none, 3});
  CHECK(keep_x.transient == std::vector<std::int64_t>{100, 300, 300, 400, 200});
  CHECK(keep_x.live_after == std::vector<std::int64_t>{100, 300, 300, 200, 200});
  // conv1 an output: relu cannot take it over: 300 + 200 = 500 again.
  const order_simulation keep_conv1 = simulate_order(resnet_block(true, std::vector<std::size_t>{1, 4}), order);
  CHECK(keep_conv1.reused[2] == none);
  CHECK(keep_conv1.transient[2] == 500);

  // The peak step lists what is allocated: at relu without in-place x, conv1 and relu (500); with
  // in-place at conv2: x, relu, conv2 (400).
  CHECK(plain.resident_at_peak == std::vector<std::size_t>{0, 1, 2});
  CHECK(in_place.resident_at_peak == std::vector<std::size_t>{0, 2, 3});
  // At an in-place peak step the reused input is not listed: x (100) -> a (100, in-place,
  // workspace 50): a runs in x's buffer, 100 + 50 = 150 at step 1, and only a is listed.
  const memory_graph tiny(memory_graph_data{.num_nodes = 2, .edges = {{0, 1}}, .bytes = {100, 100}, .workspace = {0, 50},
                                            .inplace = {0, 1}});
  const order_simulation t = simulate_order(tiny, std::vector<std::size_t>{0, 1});
  CHECK(t.transient == std::vector<std::int64_t>{100, 150});
  CHECK(t.peak_step == 1);
  CHECK(t.reused[1] == 0);
  CHECK(t.resident_at_peak == std::vector<std::size_t>{1});

  // The arena: relu at conv1's offset, add at x's; the arena is the peak (one 200 and one 100
  // buffer shared along the block, plus conv2's 100).
  for (arena_strategy s : both) {
    CAPTURE(to_string(s));
    const arena_plan a = plan_arena(resnet_block(true), order, s);
    CHECK(a.offset[2] == a.offset[1]);
    CHECK(a.offset[4] == a.offset[0]);
    CHECK(a.peak_bytes == 400);
    CHECK(a.arena_bytes >= 400);
    CHECK(check_arena(resnet_block(true), order, a).valid);
    // The same offsets are wrong for the graph without in-place: relu overlaps conv1 at step 2.
    CHECK(!check_arena(resnet_block(false), order, a).valid);
  }
  CHECK(plan_arena(resnet_block(true), order, arena_strategy::greedy_by_size).arena_bytes == 400);
}

TEST_CASE("check_arena: a vertex that reuses an input's buffer must have its offset") {
  const std::vector<std::size_t> order{0, 1, 2, 3, 4};
  arena_plan a = plan_arena(resnet_block(true), order, arena_strategy::greedy_by_size);
  REQUIRE(check_arena(resnet_block(true), order, a).valid);
  a.offset[2] = a.offset[1] + 1000;
  a.arena_bytes += 2000;
  const arena_check c = check_arena(resnet_block(true), order, a);
  CHECK(!c.valid);
  CHECK(c.error.find("the output of node 2 reuses the output of node 1") != std::string::npos);
}

TEST_CASE("in-place in plans: the input's free must follow the compute before the next compute") {
  using P = plan_op;
  const memory_graph g = resnet_block(true);
  // Frees right after their last reader: relu reuses conv1, add reuses x.
  const execution_plan early{{{P::compute, 0}, {P::compute, 1}, {P::compute, 2}, {P::free, 1}, {P::compute, 3}, {P::free, 2},
                              {P::compute, 4}, {P::free, 3}, {P::free, 0}}};
  const plan_simulation e = simulate_plan(g, early);
  // transient per step: x 100; conv1 100+200; relu 300 (in place); free conv1: live_before 500
  // (both counted until the free); conv2 300+100; free relu 400; add 200 (in place; x freed after
  // conv2's free, before the next compute: x, the first input, is taken over); frees.
  CHECK(e.transient == std::vector<std::int64_t>{100, 300, 300, 500, 400, 400, 200, 300, 200});
  CHECK(e.reused == std::vector<std::size_t>{none, none, 1, none, none, none, 0, none, none});
  CHECK(e.peak_bytes == 400);
  // The free of conv1 comes after the next compute: relu does not reuse it (300 + 200 = 500).
  const execution_plan late{{{P::compute, 0}, {P::compute, 1}, {P::compute, 2}, {P::compute, 3}, {P::free, 1}, {P::free, 2},
                             {P::compute, 4}, {P::free, 3}, {P::free, 0}}};
  const plan_simulation l = simulate_plan(g, late);
  CHECK(l.reused[2] == none);
  CHECK(l.transient[2] == 500);
  CHECK(l.transient[3] == 500 + 100);  // conv2 with conv1 still resident
  CHECK(l.peak_bytes == 600);
  // x kept to the end (never freed): add takes conv2, freed right after it.
  const execution_plan keep{{{P::compute, 0}, {P::compute, 1}, {P::compute, 2}, {P::free, 1}, {P::compute, 3}, {P::free, 2},
                             {P::compute, 4}, {P::free, 3}}};
  CHECK(simulate_plan(g, keep).reused[6] == 3);
  // The plan's arena: relu's compute step at conv1's offset, add's at x's; valid and equal to the
  // simulator's transient at every compute step.
  for (arena_strategy s : both) {
    const plan_arena_layout a = plan_arena(g, early, s);
    CHECK(a.offset[2] == a.offset[1]);
    CHECK(a.offset[6] == a.offset[0]);
    CHECK(check_arena(g, early, a).valid);
    CHECK(a.peak_bytes == 400);
  }
  // The late plan's arena gives relu a buffer of its own.
  const plan_arena_layout la = plan_arena(g, late, arena_strategy::greedy_by_size);
  CHECK(la.offset[2] != la.offset[1]);
  CHECK(check_arena(g, late, la).valid);
}

TEST_CASE("in-place: every order of small random DAGs against the rule's text (brute force)") {
  std::size_t orders = 0, reuses = 0;
  for (std::uint64_t seed = 0; seed < 120; ++seed) {
    CAPTURE(seed);
    memory_graph_data d = random_dag(2 + seed % 7, 0.4, seed, seed % 2 ? 4 : 40, seed % 3 == 0);
    if (seed % 4 == 1) d = with_random_outputs(std::move(d), seed);
    const memory_graph g(with_random_inplace(std::move(d), seed));
    const memory_graph plain = without_inplace(g);
    std::int64_t best = std::numeric_limits<std::int64_t>::max(), lower = 0;
    for (std::size_t v = 0; v < g.size(); ++v) lower = std::max(lower, memory_model::min_running_bytes(g, v));
    for_each_topological_order(g, [&](const std::vector<std::size_t>& order) {
      ++orders;
      const std::vector<memory_step> expected = rule_steps(g, order);
      const std::vector<memory_step> stepped = walk(g, order);
      REQUIRE(stepped == expected);
      CHECK(simulate_sequence(g, order) == expected);
      const order_simulation sim = simulate_order(g, order);
      const std::vector<memory_step> before = walk(plain, order);
      std::int64_t peak = 0;
      for (std::size_t k = 0; k < order.size(); ++k) {
        CHECK(sim.transient[k] == expected[k].transient);
        CHECK(sim.reused[k] == expected[k].reused);
        // Only the memory while v runs changes, by exactly bytes(v) when it reuses.
        CHECK(before[k].live_after == expected[k].live_after);
        CHECK(before[k].transient - expected[k].transient == (expected[k].reused == none ? 0 : g.bytes(order[k])));
        if (expected[k].reused != none) {
          ++reuses;
          CHECK(!g.is_output(expected[k].reused));
        }
        peak = std::max(peak, expected[k].transient);
      }
      CHECK(sim.peak_bytes == peak);
      CHECK(order_peak(g, order) == peak);
      best = std::min(best, peak);
      // The plan of the order says the same, and its arena matches the simulator step by step.
      const execution_plan plan = plan_from_computes(g, order);
      const plan_simulation ps = simulate_plan(g, plan);
      CHECK(ps.peak_bytes == peak);
      std::vector<std::size_t> first, last, buffer_of;
      const auto buffers = detail::arena_buffers(g, order, first, last, buffer_of);
      CHECK(live_buffer_bytes(buffers, order.size()) == sim.transient);
      for (arena_strategy s : both) {
        const arena_plan a = plan_arena(g, order, s);
        CHECK(check_arena(g, order, a).valid);
        CHECK(a.arena_bytes >= peak);
        CHECK(a.peak_bytes == peak);
        for (std::size_t k = 0; k < order.size(); ++k)
          if (expected[k].reused != none) CHECK(a.offset[order[k]] == a.offset[expected[k].reused]);
        const plan_arena_layout pa = plan_arena(g, plan, s);
        CHECK(check_arena(g, plan, pa).valid);
        CHECK(pa.peak_bytes == peak);
        CHECK(pa.arena_bytes == a.arena_bytes);  // the plan of an order has the order's arena
      }
      // Off chip: at the order's peak nothing moves; the working sets are the rule's.
      const offchip_traffic_result t = offchip_traffic(g, order, peak);
      CHECK(t.status == solve_status::feasible);
      CHECK(t.total_bytes == 0);
    });
    // min_running_bytes is a lower bound on every order's peak under the rule.
    CHECK(lower <= best);
  }
  CHECK(orders > 2000);
  CHECK(reuses > 1000);  // the rule applied, often
}

TEST_CASE("in-place with recomputation: simulate_sequence, plans and arenas agree with the rule") {
  // The rule for a sequence: the value of p read at k dies at k when p is not recomputed before
  // its next read and no later position reads that value, and it is not the last copy of an output.
  std::mt19937_64 rng(5);
  std::size_t reuses = 0;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    CAPTURE(seed);
    memory_graph_data d = random_dag(2 + seed % 9, 0.35, seed, 3, seed % 2 == 1);
    if (seed % 4 == 0) d = with_random_outputs(std::move(d), seed);
    const memory_graph g(with_random_inplace(std::move(d), seed));
    std::vector<std::size_t> seq, done;
    for (auto v : g.topological_order()) {
      while (!done.empty() && rng() % 3 == 0) seq.push_back(done[rng() % done.size()]);
      seq.push_back(v);
      done.push_back(v);
    }
    const std::size_t len = seq.size();
    // Naive: the value of p current at position k (computed at j < k) dies at k when no position
    // in (k, next computation of p) reads p and it is not kept as the last copy of an output.
    auto dies_at = [&](std::size_t p, std::size_t k) {
      std::size_t j = k;
      while (j-- > 0 && seq[j] != p) {
      }
      std::size_t next = j + 1;
      while (next < len && seq[next] != p) ++next;
      if (next == len && g.is_output(p)) return false;
      for (std::size_t r = k + 1; r < next; ++r)
        for (auto q : g.predecessors(seq[r]))
          if (q == p) return false;
      return true;
    };
    const std::vector<memory_step> steps = simulate_sequence(g, seq);
    const std::vector<memory_step> plain = simulate_sequence(without_inplace(g), seq);
    for (std::size_t k = 0; k < len; ++k) {
      const std::size_t v = seq[k];
      std::size_t want = none;
      std::vector<std::size_t> preds(g.predecessors(v).begin(), g.predecessors(v).end());
      std::sort(preds.begin(), preds.end());
      for (std::size_t p : preds)
        if (g.inplace(v) && g.bytes(p) == g.bytes(v) && g.bytes(v) > 0 && !g.is_output(p) && dies_at(p, k)) {
          want = p;
          break;
        }
      CHECK(steps[k].reused == want);
      CHECK(steps[k].live_after == plain[k].live_after);
      CHECK(steps[k].transient == plain[k].transient - (want == none ? 0 : g.bytes(v)));
      reuses += want != none;
    }
    const execution_plan plan = plan_from_computes(g, seq);
    const plan_simulation sim = simulate_plan(g, plan);
    std::size_t k = 0;
    std::int64_t peak = 0;
    for (std::size_t s = 0; s < plan.steps.size(); ++s) {
      if (plan.steps[s].op != plan_op::compute) continue;
      CHECK(sim.transient[s] == steps[k].transient);
      CHECK(sim.reused[s] == steps[k].reused);
      peak = std::max(peak, steps[k].transient);
      ++k;
    }
    CHECK(sim.peak_bytes == peak);
    std::vector<std::size_t> buffer_of_step;
    const auto buffers = detail::plan_arena_buffers(g, plan, sim.reused, buffer_of_step);
    const auto live = live_buffer_bytes(buffers, plan.steps.size());
    for (std::size_t s = 0; s < plan.steps.size(); ++s)
      if (plan.steps[s].op == plan_op::compute) CHECK(live[s] == sim.transient[s]);
    for (arena_strategy st : both) {
      const plan_arena_layout a = plan_arena(g, plan, st);
      CHECK(check_arena(g, plan, a).valid);
      CHECK(a.arena_bytes >= sim.peak_bytes);
    }
  }
  CHECK(reuses > 100);
}

TEST_CASE("offchip_traffic with in-place outputs, by hand") {
  const std::vector<std::size_t> order{0, 1, 2, 3, 4};
  // Capacity 400. Without in-place, relu needs room for its 200 bytes next to x and conv1 (500):
  // x (next read by add, furthest) is written off chip (100) and read back for add (100).
  const offchip_traffic_result plain = offchip_traffic(resnet_block(false), order, 400);
  CHECK(plain.status == solve_status::feasible);
  CHECK(plain.bytes_written == 100);
  CHECK(plain.bytes_read == 100);
  CHECK(plain.max_working_set == 400);  // relu: conv1 + relu
  // In place, relu needs no room of its own: nothing moves. Working sets: x 100, conv1 300, relu
  // 200, conv2 300, add 200.
  const offchip_traffic_result in_place = offchip_traffic(resnet_block(true), order, 400);
  CHECK(in_place.status == solve_status::feasible);
  CHECK(in_place.total_bytes == 0);
  CHECK(in_place.max_working_set == 300);
  // 300 fits every in-place working set; 299 does not (conv1 needs x + conv1).
  CHECK(offchip_traffic(resnet_block(true), order, 300).status == solve_status::feasible);
  CHECK(offchip_traffic(resnet_block(true), order, 299).status == solve_status::infeasible);
}

TEST_CASE("plan builder: use_spare_memory stays within budget with in-place outputs; the lower bound is the in-place one") {
  std::mt19937_64 rng(9);
  std::size_t kept = 0;
  for (std::uint64_t seed = 0; seed < 300; ++seed) {
    CAPTURE(seed);
    const memory_graph g(with_random_inplace(random_dag(3 + seed % 10, 0.3, seed, 3), seed));
    std::vector<std::size_t> seq, done;
    for (auto v : g.topological_order()) {
      while (!done.empty() && rng() % 2 == 0) seq.push_back(done[rng() % done.size()]);
      seq.push_back(v);
      done.push_back(v);
    }
    const std::int64_t peak = detail::sequence_peak_cost(g, seq).first;
    for (std::int64_t extra : {0, 1, 2, 4}) {
      const std::vector<std::size_t> out = detail::use_spare_memory(g, seq, peak + extra);
      CHECK(detail::sequence_peak_cost(g, out).first <= peak + extra);
      CHECK(simulate_plan(g, plan_from_computes(g, out)).peak_bytes <= peak + extra);
      kept += seq.size() - out.size();
    }
  }
  CHECK(kept > 100);  // recomputations were dropped: the estimate was exercised

  // A chain a (8) -> b (8, in-place): b needs only 8 bytes with its input; a budget of 8 is not
  // below the lower bound (without in-place it would be: 16).
  const memory_graph chain(memory_graph_data{.num_nodes = 2, .edges = {{0, 1}}, .bytes = {8, 8}, .inplace = {0, 1}});
  CHECK(memory_model::min_running_bytes(chain, 1) == 8);
  CHECK(!detail::budget_below_lower_bound(chain, 8));
  CHECK(detail::budget_below_lower_bound(without_inplace(chain), 8));
  CHECK(order_peak(chain, std::vector<std::size_t>{0, 1}) == 8);
}
