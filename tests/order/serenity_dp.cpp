// The layered search (order/detail/serenity_dp.hpp) paused and resumed in slices, as serenity_order
// runs it in turn with the decision searches: the same answer as one uninterrupted run, and a
// limit lowered while paused prunes like a search started with it.
#include <memsched/graph/json_io.hpp>
#include <memsched/order/detail/serenity_decision.hpp>
#include <memsched/order/detail/serenity_dp.hpp>
#include <memsched/order/serenity.hpp>
#include <memsched/sim/simulate_order.hpp>

#include "../support/random_dag.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <limits>
#include <random>
#include <string>

using namespace memsched;
using namespace memsched::testing;

namespace {

detail::serenity_dp_request request(detail::serenity_memory_pool& pool, std::int64_t limit, bool free_moves) {
  detail::serenity_dp_request r;
  r.limit = limit;
  r.free_moves = free_moves;
  r.pool = &pool;
  return r;
}

// Runs `dp` in slices of `slice` expansions to its end; counts the pauses.
detail::serenity_dp_answer run_in_slices(detail::serenity_dp& dp, std::uint64_t slice, int& pauses) {
  for (;;) {
    const std::uint64_t before = dp.expanded();
    auto ans = dp.run(slice);
    if (ans.outcome != detail::serenity_dp_outcome::paused) return ans;
    REQUIRE(dp.expanded() == before + slice);  // a pause comes exactly at the budget
    ++pauses;
  }
}

std::vector<memory_graph> random_graphs() {
  std::vector<memory_graph> graphs;
  for (std::uint64_t seed = 0; seed < 48; ++seed) {
    auto d = random_dag(4 + seed % 6, 0.2 + 0.1 * static_cast<double>(seed % 4), seed * 7 + 3, 100, seed % 3 == 1);
    if (seed % 3 == 2) d = with_random_outputs(d, seed);
    if (seed % 8 == 5) d = with_random_inplace(d, seed);
    graphs.emplace_back(d);
  }
  return graphs;
}

// A random DAG on n vertices whose antichains have at most 6 vertices (i -> i+3 and i -> i+4
// always, so i precedes every j >= i+6; other edges of span <= 6 with probability 0.3), relabelled
// at random: large graphs that every exact search finishes at once.
memory_graph_data narrow_random_dag(std::size_t n, std::uint64_t seed) {
  std::bernoulli_distribution extra(0.3);
  return random_dag_with(n, seed, [&](std::size_t i, std::size_t j, std::mt19937_64& rng) {
    return j <= i + 6 && (j == i + 3 || j == i + 4 || extra(rng));
  });
}

}  // namespace

TEST_CASE("the layered search agrees with both decision searches at every bitset width") {
  // 1, 2, 4 (3 padded), 5 and 7 words: the widths with_small_width instantiates and the run-time
  // width. The two kinds of search share only the memory model's fast copy, which
  // serenity_memory_model.cpp checks against memory_model.
  int checked = 0;
  for (std::size_t n : {50, 100, 150, 300, 420})
    for (std::uint64_t seed = 0; seed < 6; ++seed) {
      memory_graph_data d = narrow_random_dag(n, seed + 100 * n);
      if (seed % 3 == 1) d = with_random_outputs(std::move(d), seed);
      if (seed % 3 == 2) d = with_random_inplace(std::move(d), seed);
      const memory_graph g(std::move(d));
      CAPTURE(n);
      CAPTURE(seed);
      REQUIRE(detail::signature_tables(g).words == std::vector<std::size_t>{1, 2, 4, 5, 7}[checked / 6]);
      detail::serenity_memory_pool pool;
      std::int64_t best = -1;
      for (bool free_moves : {false, true}) {
        auto ans = detail::run_serenity_dp(g, request(pool, std::numeric_limits<std::int64_t>::max(), free_moves));
        REQUIRE(ans.outcome == detail::serenity_dp_outcome::solved);
        CHECK(simulate_order(g, ans.order).peak_bytes == ans.peak);
        if (best < 0) best = ans.peak;
        CHECK(ans.peak == best);
      }
      for (bool backward : {false, true}) {
        CAPTURE(backward);
        auto search = detail::make_serenity_dfs(backward, g, pool, std::numeric_limits<std::uint64_t>::max(),
                                                std::chrono::steady_clock::time_point::max(), true);
        REQUIRE(search != nullptr);
        search->start(best, std::chrono::steady_clock::time_point::max());
        REQUIRE(search->run(std::numeric_limits<std::uint64_t>::max()) == detail::serenity_decision::yes);
        CHECK(simulate_order(g, search->order()).peak_bytes <= best);
        search->start(best - 1, std::chrono::steady_clock::time_point::max());
        CHECK(search->run(std::numeric_limits<std::uint64_t>::max()) == detail::serenity_decision::no);
      }
      CHECK(pool.used.load() == 0);
      ++checked;
    }
  CHECK(checked == 30);
}

TEST_CASE("a layered search run in slices gives the answer of one uninterrupted run") {
  int pauses = 0, checked = 0;
  for (const memory_graph& g : random_graphs()) {
    const std::int64_t best = brute_force_peak(g);
    for (std::int64_t limit : {std::numeric_limits<std::int64_t>::max(), best, best - 1})
      for (bool free_moves : {false, true})
        for (std::uint64_t slice : {std::uint64_t{1}, std::uint64_t{3}, std::uint64_t{17}}) {
          CAPTURE(g.size());
          CAPTURE(limit);
          CAPTURE(free_moves);
          CAPTURE(slice);
          detail::serenity_memory_pool whole_pool, sliced_pool;
          const auto whole = detail::run_serenity_dp(g, request(whole_pool, limit, free_moves));
          detail::serenity_dp_answer sliced;
          {
            detail::serenity_dp dp(g, request(sliced_pool, limit, free_moves));
            sliced = run_in_slices(dp, slice, pauses);
          }
          CHECK(sliced_pool.used.load() == 0);  // every byte reserved is returned
          REQUIRE(sliced.outcome == whole.outcome);
          CHECK(sliced.stats.states_expanded == whole.stats.states_expanded);
          CHECK(sliced.stats.states_stored == whole.stats.states_stored);
          if (limit >= best) {
            REQUIRE(sliced.outcome == detail::serenity_dp_outcome::solved);
            CHECK(sliced.peak == best);
            CHECK(sliced.order == whole.order);
            CHECK(simulate_order(g, sliced.order).peak_bytes == best);
          } else {
            CHECK(sliced.outcome == detail::serenity_dp_outcome::no_solution);
            CHECK(sliced.lower_bound == limit + 1);
          }
          ++checked;
        }
  }
  CHECK(checked == 48 * 3 * 2 * 3);
  CHECK(pauses > 1000);  // the slices did pause (a search of one slice would test nothing)
}

TEST_CASE("a limit lowered while the layered search is paused prunes like a search started with it") {
  int lowered_mid_search = 0;
  for (const memory_graph& g : random_graphs()) {
    const std::int64_t best = brute_force_peak(g);
    for (std::int64_t lowered : {best + 50, best, best - 1})
      for (std::uint64_t first : {std::uint64_t{1}, std::uint64_t{4}}) {
        CAPTURE(g.size());
        CAPTURE(lowered);
        CAPTURE(first);
        detail::serenity_memory_pool pool;
        detail::serenity_dp dp(g, request(pool, std::numeric_limits<std::int64_t>::max(), true));
        auto ans = dp.run(first);
        const bool paused = ans.outcome == detail::serenity_dp_outcome::paused;
        if (paused) {
          ++lowered_mid_search;
          dp.lower_limit(lowered);
          dp.lower_limit(lowered + 1000);  // raising is ignored
          ans = dp.run();
        }
        if (paused && lowered < best) {
          CHECK(ans.outcome == detail::serenity_dp_outcome::no_solution);
          CHECK(ans.lower_bound == lowered + 1);
        } else {
          REQUIRE(ans.outcome == detail::serenity_dp_outcome::solved);
          CHECK(ans.peak == best);  // the optimum survives any limit >= it
          CHECK(simulate_order(g, ans.order).peak_bytes == best);
        }
      }
  }
  CHECK(lowered_mid_search > 200);
}

TEST_CASE("serenity_order alternates the two exact searches: optimal, deterministic, every expansion counted") {
  const memory_graph g = make_memory_graph(read_json_graph(std::string(MEMSCHED_TEST_DATA_DIR) + "/moccasin/random_layered_n250.json"));
  // With slices of 1,000 signatures the decisions (63 k signatures alone) and the layered search
  // (12.4 M alone) take turns many times before the decisions settle the proof.
  const serenity_options small_slices{.decision_budget = 1000};
  const order_result r = serenity_order(g, small_slices);
  CHECK(r.status == solve_status::optimal);
  CHECK(r.peak_bytes == 105170);
  CHECK(r.lower_bound == 105170);
  CHECK(simulate_order(g, r.order).peak_bytes == r.peak_bytes);
  const order_result again = serenity_order(g, small_slices);
  CHECK(again.order == r.order);
  CHECK(again.stats.states_expanded == r.stats.states_expanded);
  CHECK(again.stats.states_stored == r.stats.states_stored);
  // The layered search's expansions are counted too: more than the decisions' alone.
  const order_result decisions_only = serenity_order(g, serenity_options{.decision_budget = std::uint64_t{1} << 30});
  CHECK(decisions_only.peak_bytes == 105170);
  CHECK(r.stats.states_expanded > decisions_only.stats.states_expanded);
}
