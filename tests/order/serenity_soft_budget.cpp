#include <memsched/graph/json_io.hpp>
#include <memsched/order/kahn.hpp>
#include <memsched/order/serenity.hpp>
#include <memsched/sim/simulate_order.hpp>

#include "../support/random_dag.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace memsched;
using namespace memsched::testing;

namespace {

memory_graph shared_graph(const char* name) {
  return make_memory_graph(read_json_graph(std::string(MEMSCHED_TEST_DATA_DIR) + "/" + name));
}

}  // namespace

TEST_CASE("soft budgeting (paper and bounded) equals brute force on random DAGs") {
  for (std::size_t n = 2; n <= 9; ++n)
    for (std::uint64_t seed = 0; seed < 25; ++seed)
      for (auto mode : {soft_budget_mode::paper, soft_budget_mode::bounded}) {
        auto d = random_dag(n, 0.2 + 0.05 * static_cast<double>(seed % 8), seed * 13 + n, 100, seed % 2 == 0);
        if (seed % 3 == 0) d.outputs = std::vector<std::size_t>{0, n - 1};
        const memory_graph g(d);
        CAPTURE(n);
        CAPTURE(seed);
        const std::int64_t best = brute_force_peak(g);
        for (bool divide : {false, true}) {
          // No beam: the soft budget attempts do the whole search.
          const order_result r = serenity_order(g, serenity_options{.soft_budget = mode, .divide = divide, .beam_width = 0});
          CHECK(r.peak_bytes == best);
          CHECK(r.status == solve_status::optimal);
          CHECK(r.lower_bound == best);
          CHECK(simulate_order(g, r.order).peak_bytes == r.peak_bytes);
        }
      }
}

TEST_CASE("soft budgeting with attempts that time out still proves the optimum") {
  // Attempts of a microsecond stop at their first look at the clock: the paper's mode halves the
  // budget until an attempt ends, the bounded mode bisects and lengthens the attempts.
  const memory_graph g = shared_graph("torch/randwire_ws_stage.inference.json");
  const order_result exact = serenity_order(g, serenity_options{.divide = false});
  REQUIRE(exact.status == solve_status::optimal);
  CHECK(exact.peak_bytes < kahn_order(g).peak_bytes);
  for (auto mode : {soft_budget_mode::paper, soft_budget_mode::bounded}) {
    CAPTURE(static_cast<int>(mode));
    const order_result r = serenity_order(
        g, serenity_options{.soft_budget = mode, .divide = false, .attempt_time_limit = std::chrono::duration<double>(1e-6),
                            .beam_width = 0});
    CHECK(r.status == solve_status::optimal);
    CHECK(r.peak_bytes == exact.peak_bytes);
    CHECK(r.stats.states_expanded > 0);
    CHECK(simulate_order(g, r.order).peak_bytes == r.peak_bytes);
  }
}

TEST_CASE("soft budgeting stopped by the global time limit returns a feasible order") {
  const memory_graph g = shared_graph("torch/randwire_ws_stage.inference.json");
  for (auto mode : {soft_budget_mode::off, soft_budget_mode::paper, soft_budget_mode::bounded}) {
    const order_result r = serenity_order(g, serenity_options{.soft_budget = mode, .time_limit = std::chrono::duration<double>(0),
                                                              .free_moves = false, .beam_width = 0});
    CHECK(has_solution(r.status));
    CHECK(r.lower_bound <= r.peak_bytes);
    CHECK(r.peak_bytes <= kahn_order(g).peak_bytes);
    CHECK(simulate_order(g, r.order).peak_bytes == r.peak_bytes);
  }
}

TEST_CASE("soft budgeting stopped by a state cap ends (no endless retries) with a feasible order") {
  const memory_graph g = shared_graph("torch/randwire_ws_stage.inference.json");
  for (auto mode : {soft_budget_mode::paper, soft_budget_mode::bounded}) {
    const order_result r = serenity_order(g, serenity_options{.soft_budget = mode, .divide = false, .max_states = 300,
                                                              .free_moves = false, .beam_width = 0});
    CHECK(r.status == solve_status::feasible);
    CHECK(r.lower_bound <= r.peak_bytes);
    CHECK(r.lower_bound >= peak_lower_bound(g));
    CHECK(simulate_order(g, r.order).peak_bytes == r.peak_bytes);
  }
}

TEST_CASE("soft budgeting is deterministic") {
  const memory_graph g = shared_graph("torch/darts_v2_normal_cell.inference.json");
  for (auto mode : {soft_budget_mode::paper, soft_budget_mode::bounded}) {
    const order_result a = serenity_order(g, serenity_options{.soft_budget = mode});
    const order_result b = serenity_order(g, serenity_options{.soft_budget = mode, .threads = 2});
    CHECK(a.order == b.order);
    CHECK(a.status == solve_status::optimal);
  }
}
