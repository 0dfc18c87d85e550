#include <memsched/graph/json_io.hpp>
#include <memsched/order/detail/serenity_decision.hpp>
#include <memsched/order/serenity.hpp>
#include <memsched/sim/simulate_order.hpp>

#include "../support/random_dag.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <string>

using namespace memsched;
using namespace memsched::testing;

namespace {

constexpr auto no_deadline = std::chrono::steady_clock::time_point::max();
constexpr std::uint64_t no_cap = std::numeric_limits<std::uint64_t>::max();

std::unique_ptr<detail::serenity_dfs> make_search(bool backward, const memory_graph& g, detail::serenity_memory_pool& pool,
                                                  bool free_moves) {
  return detail::make_serenity_dfs(backward, g, pool, no_cap, no_deadline, free_moves);
}

// Decides tau to the end and checks the answer against the optimum: an order within tau exactly
// when tau >= best, and the order is a valid one (simulate_order checks it) within tau.
void check_decision(detail::serenity_dfs& s, const memory_graph& g, std::int64_t tau, std::int64_t best) {
  s.start(tau, no_deadline);
  const auto answer = s.run(no_cap);
  CAPTURE(tau);
  CAPTURE(best);
  if (tau >= best) {
    REQUIRE(answer == detail::serenity_decision::yes);
    REQUIRE(s.order().size() == g.size());
    CHECK(simulate_order(g, s.order()).peak_bytes <= tau);
  } else {
    CHECK(answer == detail::serenity_decision::no);
  }
}

}  // namespace

TEST_CASE("decision searches, forward and backward, answer like brute force on random DAGs") {
  int checked = 0;
  for (std::size_t n = 1; n <= 8; ++n)
    for (double p : {0.2, 0.4, 0.7})
      for (std::uint64_t seed = 0; seed < 12; ++seed)
        for (int variant = 0; variant < 3; ++variant) {
          auto d = random_dag(n, p, seed * 17 + n, 100, variant == 1);
          if (variant == 2) d = with_random_outputs(d, seed);
          const memory_graph g(d);
          const std::int64_t best = brute_force_peak(g);
          for (bool backward : {false, true})
            for (bool free_moves : {false, true}) {
              CAPTURE(n);
              CAPTURE(seed);
              CAPTURE(variant);
              CAPTURE(backward);
              CAPTURE(free_moves);
              detail::serenity_memory_pool pool;
              {
                auto s = make_search(backward, g, pool, free_moves);
                REQUIRE(s != nullptr);
                // Falling taus keep the memo of dead signatures; a rising tau must drop it.
                for (std::int64_t tau : {best + 50, best, best - 1, best - 30, best + 1, best - 1, best})
                  check_decision(*s, g, tau, best);
              }
              CHECK(pool.used.load() == 0);
              ++checked;
            }
        }
  CHECK(checked > 1000);
}

TEST_CASE("the backward search counts outputs as resident from the start") {
  // 0 -> 1 -> 2, all three outputs (bytes 10, 20, 30): every order holds 10 + 20 + 30 at the end.
  const memory_graph g(memory_graph_data{.num_nodes = 3, .edges = {{0, 1}, {1, 2}}, .bytes = {10, 20, 30}, .outputs = std::vector<std::size_t>{0, 1, 2}});
  REQUIRE(brute_force_peak(g) == 60);
  detail::serenity_memory_pool pool;
  auto s = detail::make_serenity_dfs(true, g, pool, no_cap, no_deadline, true);
  check_decision(*s, g, 59, 60);
  check_decision(*s, g, 60, 60);
  CHECK(s->order() == std::vector<std::size_t>{0, 1, 2});
}

TEST_CASE("the decider pauses at its budget, stops at its limits and returns its memory") {
  const memory_graph g = make_memory_graph(read_json_graph(std::string(MEMSCHED_TEST_DATA_DIR) + "/moccasin/random_layered_n250.json"));
  const std::int64_t optimum = 105170;  // proven by serenity_order below (and by the layered search, docs/serenity.md)
  detail::serenity_memory_pool pool;
  {
    detail::serenity_decider decider(g, pool, no_cap, no_deadline, true);
    REQUIRE(decider.usable());
    CHECK(decider.decide(optimum - 1, 100) == detail::serenity_decision::paused);
    CHECK(decider.expanded() <= 100);
    CHECK(decider.decide(optimum - 1, no_cap) == detail::serenity_decision::no);
    REQUIRE(decider.decide(optimum, no_cap) == detail::serenity_decision::yes);
    CHECK(simulate_order(g, decider.order()).peak_bytes == optimum);
    CHECK(decider.peak_bytes() > 0);
  }
  CHECK(pool.used.load() == 0);
  SUBCASE("a memory pool too small stops it") {
    detail::serenity_memory_pool small;
    small.cap = 4096;
    detail::serenity_decider decider(g, small, no_cap, no_deadline, true);
    CHECK(decider.decide(optimum - 1, no_cap) == detail::serenity_decision::stopped);
    CHECK_FALSE(decider.out_of_time());
  }
  SUBCASE("a past deadline stops it") {
    detail::serenity_decider decider(g, pool, no_cap, std::chrono::steady_clock::now(), true);
    CHECK(decider.decide(optimum - 1, no_cap) == detail::serenity_decision::stopped);
    CHECK(decider.out_of_time());
  }
}

TEST_CASE("a paused decision goes on at the same tau and starts afresh at another") {
  int paused_then_resumed = 0, paused_then_switched = 0;
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    auto d = random_dag(5 + seed % 4, 0.3, seed * 11 + 2, 100, seed % 3 == 1);
    if (seed % 3 == 2) d = with_random_outputs(d, seed);
    const memory_graph g(d);
    const std::int64_t best = brute_force_peak(g);
    detail::serenity_memory_pool pool;
    detail::serenity_decider decider(g, pool, no_cap, no_deadline, seed % 2 == 0);
    REQUIRE(decider.usable());
    // Three expansions at a time, so most decisions pause several times.
    const auto decide_in_steps = [&](std::int64_t tau) {
      for (;;) {
        const auto out = decider.decide(tau, 3);
        if (out != detail::serenity_decision::paused) return out;
        ++paused_then_resumed;
      }
    };
    for (std::int64_t tau : {best + 100, best, best - 1, best - 100, best}) {
      CAPTURE(seed);
      CAPTURE(tau);
      // A pause at another tau first: the next decision must not go on with that one's search.
      if (decider.decide(tau == best ? best - 1 : best, 1) == detail::serenity_decision::paused) ++paused_then_switched;
      const auto out = decide_in_steps(tau);
      if (tau >= best) {
        REQUIRE(out == detail::serenity_decision::yes);
        CHECK(simulate_order(g, decider.order()).peak_bytes <= tau);
      } else {
        CHECK(out == detail::serenity_decision::no);
      }
    }
  }
  CHECK(paused_then_resumed > 100);
  CHECK(paused_then_switched > 100);
}

TEST_CASE("serenity_order proves random_layered_n250 optimal with the decision searches") {
  const memory_graph g = make_memory_graph(read_json_graph(std::string(MEMSCHED_TEST_DATA_DIR) + "/moccasin/random_layered_n250.json"));
  const order_result r = serenity_order(g);
  CHECK(r.status == solve_status::optimal);
  CHECK(r.peak_bytes == 105170);
  CHECK(r.lower_bound == 105170);
  CHECK(simulate_order(g, r.order).peak_bytes == r.peak_bytes);
  CHECK(serenity_order(g).order == r.order);  // deterministic
}

TEST_CASE("serenity_order equals brute force whatever the decision budget (slices alternating with the layered search)") {
  for (std::uint64_t seed = 0; seed < 60; ++seed) {
    auto d = random_dag(4 + seed % 6, 0.35, seed * 13 + 5, 100, seed % 3 == 1);
    if (seed % 3 == 2) d = with_random_outputs(d, seed);
    const memory_graph g(d);
    const std::int64_t best = brute_force_peak(g);
    for (std::uint64_t budget : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{3}, std::uint64_t{7}, std::uint64_t{1} << 19}) {
      CAPTURE(seed);
      CAPTURE(budget);
      const order_result r = serenity_order(g, serenity_options{.divide = seed % 2 == 0, .beam_width = 0, .decision_budget = budget});
      CHECK(r.status == solve_status::optimal);
      CHECK(r.peak_bytes == best);
      CHECK(r.lower_bound == best);
      CHECK(simulate_order(g, r.order).peak_bytes == best);
      const order_result tight = serenity_order(g, serenity_options{.budget = best - 1, .decision_budget = budget});
      CHECK(tight.status == solve_status::infeasible);
    }
  }
}

TEST_CASE("serenity_order runs the layered search alone on training segments unless decisions_on_training") {
  // darts_v2_normal_cell.training is proven by search (no bound settles it): the default equals
  // the layered search alone, state for state, and asking for the decisions there changes the
  // search (more states) but not the peak.
  const memory_graph g =
      make_memory_graph(read_json_graph(std::string(MEMSCHED_TEST_DATA_DIR) + "/torch/darts_v2_normal_cell.training.json"));
  REQUIRE(g.has_training_roles());
  const order_result by_default = serenity_order(g);
  const order_result layered = serenity_order(g, serenity_options{.decision_budget = 0});
  const order_result turns = serenity_order(g, serenity_options{.decisions_on_training = true});
  for (const order_result* r : {&by_default, &layered, &turns}) {
    CHECK(r->status == solve_status::optimal);
    CHECK(r->peak_bytes == layered.peak_bytes);
    CHECK(simulate_order(g, r->order).peak_bytes == r->peak_bytes);
  }
  CHECK(by_default.stats.states_expanded > 1000);
  CHECK(by_default.stats.states_expanded == layered.stats.states_expanded);
  CHECK(by_default.order == layered.order);
  CHECK(turns.stats.states_expanded != layered.stats.states_expanded);
  // The same graph without its roles is an inference-like graph to the solver: the turns again.
  memory_graph_data d = g.data();
  d.roles.clear();
  d.grad_of.clear();
  const memory_graph plain(std::move(d));
  REQUIRE_FALSE(plain.has_training_roles());
  const order_result without_roles = serenity_order(plain);
  CHECK(without_roles.peak_bytes == layered.peak_bytes);
  CHECK(without_roles.stats.states_expanded == turns.stats.states_expanded);
}

TEST_CASE("serenity_order equals brute force on random training graphs, with and without the decisions there") {
  std::size_t searched = 0;
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    const memory_graph g(random_training_dag(3 + seed % 3, 0.5, seed * 7 + 1));
    REQUIRE(g.size() <= 11);
    const std::int64_t best = brute_force_peak(g);
    CAPTURE(seed);
    for (const bool decisions : {false, true}) {
      // Small first slices, so that the turns alternate on these small graphs too.
      const order_result r = serenity_order(
          g, serenity_options{.divide = seed % 2 == 0, .beam_width = 0, .decision_budget = 3, .decisions_on_training = decisions});
      CHECK(r.status == solve_status::optimal);
      CHECK(r.peak_bytes == best);
      CHECK(r.lower_bound == best);
      CHECK(simulate_order(g, r.order).peak_bytes == best);
      searched += r.stats.states_expanded > 0;
    }
  }
  CHECK(searched >= 20);
}
