// serenity_order's local search over orders (order/detail/window_reorder.hpp): windows around the
// peak re-ordered by a small dynamic program, and single-vertex moves.
#include <memsched/graph/json_io.hpp>
#include <memsched/order/detail/window_reorder.hpp>
#include <memsched/order/kahn.hpp>
#include <memsched/order/serenity.hpp>
#include <memsched/sim/simulate_order.hpp>

#include "../support/memory_rule.hpp"
#include "../support/random_dag.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace memsched;
using namespace memsched::testing;

namespace {

detail::window_reorder_answer improve(const memory_graph& g, const std::vector<std::size_t>& start, std::size_t window,
                                      std::size_t beam = 256, std::uint64_t attempts = 4096) {
  detail::serenity_memory_pool pool;
  const detail::window_reorder_request r{.max_window = window, .beam = beam, .max_attempts = attempts, .pool = &pool};
  auto ans = detail::window_reorder(g, r).run(start);
  CHECK(pool.used.load() == 0);  // every reserved byte returned
  return ans;
}

// The answer is a topological order of g whose simulated peak is the one reported.
void check_order(const memory_graph& g, const detail::window_reorder_answer& ans) {
  REQUIRE(ans.order.size() == g.size());
  CHECK(simulate_order(g, ans.order).peak_bytes == ans.peak);  // simulate_order rejects a non-topological order
}

memory_graph_data variant_of(std::size_t n, std::uint64_t seed, int variant) {
  auto d = random_dag(n, 0.3, seed, 100, variant == 1);
  if (variant == 2) d = with_random_outputs(std::move(d), seed);
  if (variant == 3) d = with_random_inplace(std::move(d), seed);
  return d;
}

}  // namespace

TEST_CASE("a window as large as the graph, solved exactly, reaches the brute-force optimum") {
  // With one window holding every vertex and a beam wider than the number of subsets, the dynamic
  // program finds an order below the peak whenever one exists: the search stops at the optimum.
  int below_start = 0;
  for (std::size_t n = 2; n <= 9; ++n)
    for (std::uint64_t seed = 0; seed < 12; ++seed)
      for (int variant = 0; variant < 4; ++variant) {
        CAPTURE(n);
        CAPTURE(seed);
        CAPTURE(variant);
        const memory_graph g(variant_of(n, seed * 13 + n, variant));
        const auto start = kahn_order(g).order;
        const auto ans = improve(g, start, n, 1024);
        check_order(g, ans);
        const std::int64_t best = variant == 3 ? inplace_brute_force_peak(g) : brute_force_peak(g);
        CHECK(ans.peak == best);
        CHECK(ans.attempts < 4096);  // it stopped because nothing helps, not at the cap: every change was progress
        if (best < simulate_order(g, start).peak_bytes) ++below_start;
      }
  CHECK(below_start > 20);  // the cases exercise improvement, not only optimal starts
}

TEST_CASE("small windows and a narrow beam never worsen the order, and are deterministic") {
  int improved = 0;
  for (std::uint64_t seed = 0; seed < 24; ++seed)
    for (int variant = 0; variant < 4; ++variant) {
      CAPTURE(seed);
      CAPTURE(variant);
      const memory_graph g(variant_of(40 + seed % 20, seed, variant));
      const auto start = kahn_order(g).order;
      const std::int64_t start_peak = simulate_order(g, start).peak_bytes;
      const auto ans = improve(g, start, 8, 4);
      check_order(g, ans);
      CHECK(ans.peak <= start_peak);
      CHECK(ans.improvements >= (ans.peak < start_peak ? 1u : 0u));  // a lower peak comes from kept changes
      CHECK(ans.attempts < 4096);  // each accepted change removes a peak step: the search ends by itself
      if (ans.peak < start_peak) ++improved;
      const auto again = improve(g, start, 8, 4);
      CHECK(again.order == ans.order);
      CHECK(again.attempts == ans.attempts);
    }
  CHECK(improved > 10);
}

TEST_CASE("the attempts limit is a hard count") {
  const memory_graph g(random_dag(40, 0.3, 7));
  const auto start = kahn_order(g).order;
  const auto unlimited = improve(g, start, 16, 64);
  REQUIRE(unlimited.attempts > 5);
  for (std::uint64_t limit : {1, 2, 5}) {
    const auto ans = improve(g, start, 16, 64, limit);
    check_order(g, ans);
    CHECK(ans.attempts == limit);  // counted, and stopped exactly there
  }
}

TEST_CASE_TEMPLATE("serenity_order with and without the local search: the brute-force optimum", G, vecs_graph,
                   lists_graph, csr_graph) {
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    const auto d = random_dag(9, 0.3, seed);
    const typed_graph<G> tg(d);
    const std::int64_t best = brute_force_peak(memory_graph(d));
    for (std::size_t window : {0, 2, 32}) {
      CAPTURE(window);
      // Without the beam the local search starts from the simple orders and has work to do.
      const auto r = serenity_order(tg.graph, serenity_options{.beam_width = 0, .reorder_window = window}, tg.maps());
      CHECK(r.status == solve_status::optimal);
      CHECK(r.peak_bytes == best);
    }
  }
}

TEST_CASE("serenity_order runs the local search when a window is set: a capped search ends lower with it") {
  // random_layered_n250 with the exact searches capped and no beam: the incumbent comes from the
  // simple orders, or from them improved by the local search.
  const memory_graph g = make_memory_graph(read_json_graph(std::string(MEMSCHED_TEST_DATA_DIR) + "/moccasin/random_layered_n250.json"));
  const serenity_options capped{.max_states = 1000, .beam_width = 0, .decision_budget = 0};
  serenity_options local = capped;
  local.reorder_window = 32;
  local.reorder_attempts = 200;
  const auto plain = serenity_order(g, capped);
  const auto improved = serenity_order(g, local);
  CHECK(plain.status == solve_status::feasible);
  CHECK(improved.status == solve_status::feasible);
  CHECK(improved.peak_bytes < plain.peak_bytes);
  CHECK(simulate_order(g, improved.order).peak_bytes == improved.peak_bytes);
}

TEST_CASE("serenity_order rejects a window of 1 or more than 64 vertices") {
  const memory_graph g(random_dag(5, 0.4, 1));
  CHECK_THROWS_WITH_AS((void)serenity_order(g, serenity_options{.reorder_window = 1}),
                       "serenity_order: reorder_window must be 0 (off) or in [2, 64]", std::invalid_argument);
  CHECK_THROWS_AS((void)serenity_order(g, serenity_options{.reorder_window = 65}), std::invalid_argument);
  CHECK_NOTHROW((void)serenity_order(g, serenity_options{.reorder_window = 64}));
}
