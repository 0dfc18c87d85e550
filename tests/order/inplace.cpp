// In-place outputs (issue 12 section 2) in the orders: Serenity's searches (layered DP, both
// decision searches, divide and conquer at single-node cuts) find the optimum of the rule, checked
// against brute force over every order of small random DAGs with random in-place vertices; the
// lower bound stays a lower bound; a hand-checked ResNet-style block where in-place changes the
// optimal order and peak. The rule is written out in support/memory_rule.hpp.

#include <memsched/order/detail/serenity_decision.hpp>
#include <memsched/order/detail/serenity_dp.hpp>
#include <memsched/order/detail/serenity_segments.hpp>
#include <memsched/order/dfs.hpp>
#include <memsched/order/greedy.hpp>
#include <memsched/order/kahn.hpp>
#include <memsched/order/peak_lower_bound.hpp>
#include <memsched/order/serenity.hpp>
#include <memsched/sim/simulate_order.hpp>

#include "../support/memory_rule.hpp"
#include "../support/random_dag.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <vector>

using namespace memsched;
using namespace memsched::testing;

namespace {

constexpr auto no_deadline = std::chrono::steady_clock::time_point::max();
constexpr std::uint64_t no_cap = std::numeric_limits<std::uint64_t>::max();

// The small random graphs of the brute-force tests: 4-9 vertices, sizes 1-4 (equal sizes are
// common), workspaces on odd seeds, random outputs on every third, half the vertices in-place.
memory_graph random_inplace_graph(std::uint64_t seed) {
  const std::size_t n = 4 + seed % 6;
  memory_graph_data d = random_dag(n, 0.2 + 0.1 * static_cast<double>(seed % 5), seed, 4, seed % 2 == 1);
  if (seed % 3 == 0) d = with_random_outputs(std::move(d), seed);
  return memory_graph(with_random_inplace(std::move(d), seed));
}

detail::serenity_dp_answer run_dp(const memory_graph& g, std::int64_t limit, bool free_moves, std::int64_t free_threshold = 0) {
  detail::serenity_memory_pool pool;
  detail::serenity_dp_request r;
  r.limit = limit;
  r.free_moves = free_moves;
  r.free_threshold = free_threshold;
  r.pool = &pool;
  return detail::run_serenity_dp(g, r);
}

// x -> r (ReLU, in-place, 8 bytes), x -> s (1x1 shortcut, 2), r -> c (conv, 2), (c, s) -> y (Add,
// in-place, 2; the output). Indices: x 0, r 1, s 2, c 3, y 4.
memory_graph resnet_block(bool inplace) {
  memory_graph_data d;
  d.num_nodes = 5;
  d.edges = {{0, 1}, {0, 2}, {1, 3}, {3, 4}, {2, 4}};
  d.bytes = {8, 8, 2, 2, 2};
  d.outputs = std::vector<std::size_t>{4};
  if (inplace) d.inplace = {0, 1, 0, 0, 1};
  return memory_graph(std::move(d));
}

}  // namespace

TEST_CASE("the layered search finds the in-place optimum of random DAGs (brute force)") {
  std::size_t improved = 0;
  for (std::uint64_t seed = 0; seed < 400; ++seed) {
    const memory_graph g = random_inplace_graph(seed);
    CAPTURE(seed);
    const std::int64_t best = inplace_brute_force_peak(g);
    // In-place reuse only ever lowers the optimum.
    const std::int64_t best_plain = inplace_brute_force_peak(without_inplace(g));
    CHECK(best <= best_plain);
    improved += best < best_plain ? 1 : 0;
    CHECK(peak_lower_bound(g) <= best);
    for (bool free_moves : {false, true}) {
      CAPTURE(free_moves);
      const auto ans = run_dp(g, std::numeric_limits<std::int64_t>::max(), free_moves, peak_lower_bound(g));
      REQUIRE(ans.outcome == detail::serenity_dp_outcome::solved);
      CHECK(ans.peak == best);
      REQUIRE_NOTHROW(detail::check_order(g, ans.order, "test"));
      CHECK(inplace_rule_peak(g, ans.order) == ans.peak);
      // The limit prunes exactly: best fits, best - 1 does not.
      CHECK(run_dp(g, best, free_moves, best).peak == best);
      const auto below = run_dp(g, best - 1, free_moves, best - 1);
      CHECK(below.outcome == detail::serenity_dp_outcome::no_solution);
      CHECK(below.lower_bound == best);
    }
  }
  CHECK(improved > 40);  // the random graphs exercise the rule
}

TEST_CASE("both decision searches answer every tau of random in-place DAGs like brute force") {
  for (std::uint64_t seed = 0; seed < 250; ++seed) {
    const memory_graph g = random_inplace_graph(seed);
    CAPTURE(seed);
    const std::int64_t best = inplace_brute_force_peak(g);
    detail::serenity_memory_pool pool;
    for (bool backward : {false, true})
      for (bool free_moves : {false, true}) {
        CAPTURE(backward);
        CAPTURE(free_moves);
        auto s = detail::make_serenity_dfs(backward, g, pool, no_cap, no_deadline, free_moves);
        for (std::int64_t tau : {best + 1, best, best - 1}) {
          CAPTURE(tau);
          s->start(tau, no_deadline);
          const auto answer = s->run(no_cap);
          if (tau >= best) {
            REQUIRE(answer == detail::serenity_decision::yes);
            REQUIRE_NOTHROW(detail::check_order(g, s->order(), "test"));
            CHECK(inplace_rule_peak(g, s->order()) <= tau);
          } else {
            CHECK(answer == detail::serenity_decision::no);
          }
        }
      }
  }
}

TEST_CASE("segments at single-node cuts keep in-place vertices: joined optima are the optimum") {
  // Chains of random blocks joined at single cuts, so that divide and conquer has work; a block's
  // first vertex reads the previous cut, often with the same size and in-place.
  std::size_t with_cuts = 0;
  for (std::uint64_t seed = 0; seed < 150; ++seed) {
    CAPTURE(seed);
    memory_graph_data d;
    std::size_t prev_cut = 0;
    for (int b = 0; b < 3; ++b) {
      const memory_graph_data blk = random_dag(3 + (seed + static_cast<std::uint64_t>(b)) % 3, 0.5, seed * 3 + static_cast<std::uint64_t>(b), 3);
      const std::size_t off = d.num_nodes;
      d.num_nodes += blk.num_nodes;
      for (auto [u, v] : blk.edges) d.edges.emplace_back(off + u, off + v);
      d.bytes.insert(d.bytes.end(), blk.bytes.begin(), blk.bytes.end());
      // Every source of the block reads the previous cut; every sink feeds the next cut.
      std::vector<std::size_t> indeg(blk.num_nodes, 0), outdeg(blk.num_nodes, 0);
      for (auto [u, v] : blk.edges) ++outdeg[u], ++indeg[v];
      if (b > 0)
        for (std::size_t v = 0; v < blk.num_nodes; ++v)
          if (indeg[v] == 0) d.edges.emplace_back(prev_cut, off + v);
      const std::size_t cut = d.num_nodes++;
      d.bytes.push_back(1 + static_cast<std::int64_t>(seed % 3));
      for (std::size_t v = 0; v < blk.num_nodes; ++v)
        if (outdeg[v] == 0) d.edges.emplace_back(off + v, cut);
      prev_cut = cut;
    }
    d.cost.assign(d.num_nodes, 1);
    d.workspace.assign(d.num_nodes, 0);
    if (seed % 2 == 0) d = with_random_outputs(std::move(d), seed);
    const memory_graph g(with_random_inplace(std::move(d), seed));
    const std::int64_t best = inplace_brute_force_peak(g);
    const auto segs = detail::serenity_segments(g, true);
    with_cuts += segs.size() > 1 ? 1 : 0;
    std::vector<std::size_t> order;
    std::int64_t joined = 0;
    for (const auto& s : segs) {
      CHECK(s.graph.has_inplace() == std::any_of(s.global.begin(), s.global.end(), [&](std::size_t v) { return g.inplace(v); }));
      for (std::size_t k = 0; k < s.global.size(); ++k) CHECK(s.graph.inplace(k) == g.inplace(s.global[k]));
      const auto ans = run_dp(s.graph, std::numeric_limits<std::int64_t>::max(), true, peak_lower_bound(s.graph));
      REQUIRE(ans.outcome == detail::serenity_dp_outcome::solved);
      joined = std::max(joined, s.base + ans.peak);
      CHECK(s.base + peak_lower_bound(s.graph) <= best);
      for (std::size_t v : ans.order)
        if (!(s.has_lead && v == 0)) order.push_back(s.global[v]);
    }
    REQUIRE_NOTHROW(detail::check_order(g, order, "test"));
    CHECK(joined == best);
    CHECK(inplace_rule_peak(g, order) == best);
  }
  CHECK(with_cuts > 100);
}

TEST_CASE("a ResNet-style block by hand: in-place runs the shortcut first and lowers the peak") {
  // Without in-place every order peaks at 18: r (8) is computed while x (8) is resident, and
  // the first of s and r to run keeps x for the other: x, r, s: 8 + 8 + 2; x, s, r: 8 + 2 + 8.
  // With in-place r and y: after x, s (2) then r, at which x dies: r takes over x's buffer (10);
  // then c: 8 + 2 + 2 = 12 (r freed after: 4); y takes over c's buffer: 4. Peak 12, and it needs
  // s before r (x, r, ... keeps x for s: 16).
  const memory_graph plain = resnet_block(false), g = resnet_block(true);
  CHECK(inplace_brute_force_peak(plain) == 18);
  CHECK(inplace_brute_force_peak(g) == 12);
  CHECK(inplace_rule_peak(g, std::vector<std::size_t>{0, 2, 1, 3, 4}) == 12);
  CHECK(inplace_rule_peak(g, std::vector<std::size_t>{0, 1, 2, 3, 4}) == 18);
  CHECK(inplace_rule_peak(g, std::vector<std::size_t>{0, 1, 3, 2, 4}) == 18);
  // Bounds (inputs + output while a vertex runs): x 8, r 8 (in x's buffer), s 10, c 10, y 4 with
  // in-place; without, r needs 16 and y 6.
  CHECK(peak_lower_bound(g) == 10);
  CHECK(peak_lower_bound(plain) == 16);
  const auto ans = run_dp(g, std::numeric_limits<std::int64_t>::max(), true, peak_lower_bound(g));
  REQUIRE(ans.outcome == detail::serenity_dp_outcome::solved);
  CHECK(ans.peak == 12);
  CHECK(ans.order == std::vector<std::size_t>{0, 2, 1, 3, 4});
}

// The public functions re-check their orders with the simulator (sim/memory_model.hpp), so these
// need the model's in-place rule too.
TEST_CASE("serenity_order on the ResNet-style block: 12 with in-place, 18 without") {
  const auto r = serenity_order(resnet_block(true));
  CHECK(r.status == solve_status::optimal);
  CHECK(r.peak_bytes == 12);
  CHECK(r.lower_bound == 12);
  CHECK(r.order == std::vector<std::size_t>{0, 2, 1, 3, 4});
  CHECK(simulate_order(resnet_block(true), r.order).peak_bytes == 12);
  const auto p = serenity_order(resnet_block(false));
  CHECK(p.peak_bytes == 18);
  // Kahn runs r before s (smaller index): it misses the reuse.
  CHECK(kahn_order(resnet_block(true)).peak_bytes == 18);
}

TEST_CASE("serenity_order equals brute force on random in-place DAGs in every mode") {
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    const memory_graph g = random_inplace_graph(seed);
    CAPTURE(seed);
    const std::int64_t best = inplace_brute_force_peak(g);
    for (const auto& opt : {serenity_options{}, serenity_options{.divide = false},
                            serenity_options{.decision_budget = 0},
                            serenity_options{.free_moves = false, .beam_width = 0},
                            serenity_options{.soft_budget = soft_budget_mode::paper},
                            serenity_options{.soft_budget = soft_budget_mode::bounded},
                            serenity_options{.divide = false, .threads = 2, .beam_width = 4}}) {
      const auto r = serenity_order(g, opt);
      REQUIRE(r.status == solve_status::optimal);
      CHECK(r.peak_bytes == best);
      REQUIRE_NOTHROW(detail::check_order(g, r.order, "test"));
      CHECK(inplace_rule_peak(g, r.order) == r.peak_bytes);
    }
    // The budget: the optimum fits, one byte less is infeasible.
    CHECK(serenity_order(g, serenity_options{.budget = best}).status == solve_status::optimal);
    CHECK(serenity_order(g, serenity_options{.budget = best - 1}).status == solve_status::infeasible);
    // The heuristics report the rule's peak of the order they return.
    for (const order_result& h : {kahn_order(g), greedy_order(g), dfs_order(g)}) {
      CHECK(h.peak_bytes == inplace_rule_peak(g, h.order));
      CHECK(h.lower_bound <= best);
    }
  }
}
