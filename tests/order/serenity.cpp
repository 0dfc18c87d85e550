#include <memsched/graph/json_io.hpp>
#include <memsched/order/detail/serenity_dp.hpp>
#include <memsched/order/detail/serenity_memory_pool.hpp>
#include <memsched/order/kahn.hpp>
#include <memsched/order/serenity.hpp>
#include <memsched/sim/simulate_order.hpp>

#include "../support/option_error_of.hpp"
#include "../support/random_dag.hpp"

#include <doctest/doctest.h>

#include <limits>
#include <string>

using namespace memsched;
using namespace memsched::testing;

namespace {

void check_result(const memory_graph& g, const order_result& r) {
  REQUIRE(r.order.size() == g.size());
  CHECK(simulate_order(g, r.order).peak_bytes == r.peak_bytes);
  CHECK(r.lower_bound <= r.peak_bytes);
}

}  // namespace

TEST_CASE("serenity_order on a diamond, by hand") {
  // 0 -> {1, 2} -> 3; bytes 10, 20, 30, 5. Running 1 then 2 holds 0+1+2 = 60; both orders do,
  // since 0 stays until both consumers ran. Optimum 60; the lower bound 55 is not tight.
  const memory_graph g(memory_graph_data{.num_nodes = 4, .edges = {{0, 1}, {0, 2}, {1, 3}, {2, 3}}, .bytes = {10, 20, 30, 5}});
  const order_result r = serenity_order(g);
  CHECK(r.peak_bytes == 60);
  CHECK(r.status == solve_status::optimal);
  CHECK(r.lower_bound == 60);
  check_result(g, r);
}

TEST_CASE("serenity_order beats Kahn where branch order matters") {
  // s(1) -> a1(100) -> a2(1) -> t(1); s -> b1(50) -> t. Kahn runs s a1 b1 ...: b1 runs while s and
  // a1 are resident: 1 + 100 + 50 = 151. Best: s a1 a2 b1 t: a1 101, a2 102 (s waits for b1), then
  // a1 is freed: b1 runs with s and a2: 52. Optimum 102.
  const memory_graph g(memory_graph_data{.num_nodes = 5,
                                         .edges = {{0, 1}, {1, 2}, {2, 4}, {0, 3}, {3, 4}},
                                         .bytes = {1, 100, 1, 50, 1}});
  const order_result k = kahn_order(g);
  const order_result r = serenity_order(g, serenity_options{.divide = false});
  CHECK(r.peak_bytes == brute_force_peak(g));
  CHECK(r.peak_bytes == 102);
  CHECK(k.peak_bytes > r.peak_bytes);
  CHECK(r.status == solve_status::optimal);
  check_result(g, r);
}

TEST_CASE("serenity_order equals brute force on random DAGs up to 9 vertices") {
  int checked = 0;
  for (std::size_t n = 1; n <= 9; ++n)
    for (double p : {0.15, 0.3, 0.5, 0.8})
      for (std::uint64_t seed = 0; seed < (n <= 7 ? 25u : 10u); ++seed)
        for (int variant = 0; variant < 3; ++variant) {
          auto d = random_dag(n, p, seed * 31 + n, 100, variant == 1);
          if (variant == 2) d = with_random_outputs(d, seed);
          const memory_graph g(d);
          const std::int64_t best = brute_force_peak(g);
          for (bool divide : {false, true})
            for (bool free_moves : {false, true}) {
              const order_result r = serenity_order(g, serenity_options{.divide = divide, .free_moves = free_moves, .beam_width = seed % 2 ? 4u : 0u});
              CAPTURE(n);
              CAPTURE(p);
              CAPTURE(seed);
              CAPTURE(variant);
              CAPTURE(divide);
              CHECK(r.peak_bytes == best);
              CHECK(r.status == solve_status::optimal);
              CHECK(r.lower_bound == best);
              check_result(g, r);
              ++checked;
            }
        }
  CHECK(checked > 1000);
}

TEST_CASE("serenity_order with a budget: optimal at or above the optimum, infeasible below") {
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    const memory_graph g(random_dag(8, 0.35, seed, 100, seed % 2 == 0));
    const std::int64_t best = brute_force_peak(g);
    for (bool divide : {false, true}) {
      const order_result at = serenity_order(g, serenity_options{.budget = best, .divide = divide});
      CHECK(at.status == solve_status::optimal);
      CHECK(at.peak_bytes == best);
      const order_result above = serenity_order(g, serenity_options{.budget = best + 1000, .divide = divide});
      CHECK(above.peak_bytes == best);
      const order_result below = serenity_order(g, serenity_options{.budget = best - 1, .divide = divide});
      CHECK(below.status == solve_status::infeasible);
      CHECK(below.lower_bound >= best);
      check_result(g, at);
      REQUIRE(below.order.size() == g.size());
      CHECK(simulate_order(g, below.order).peak_bytes == below.peak_bytes);
    }
  }
}

TEST_CASE_TEMPLATE("serenity_order works on every Boost graph type", G, vecs_graph, lists_graph, csr_graph) {
  for (std::uint64_t seed = 0; seed < 15; ++seed) {
    auto d = random_dag(9, 0.3, seed);
    if (seed % 3 == 0) d = with_random_outputs(d, seed);
    const typed_graph<G> tg(d);
    const memory_graph g(d);
    const order_result r = serenity_order(tg.graph, serenity_options{}, tg.maps());
    CHECK(r.peak_bytes == brute_force_peak(g));
    CHECK(r.order == serenity_order(g).order);  // same answer whatever the graph type
    check_result(g, r);
  }
}

TEST_CASE("serenity_order accepts a dataflow_graph with bundled nodes") {
  const auto d = random_dag(7, 0.4, 5);
  const dataflow_graph dg = to_dataflow_graph(d);
  const order_result r = serenity_order(dg);
  CHECK(r.peak_bytes == brute_force_peak(memory_graph(d)));
}

TEST_CASE("serenity_order limits return a valid order marked feasible") {
  const auto path = std::string(MEMSCHED_TEST_DATA_DIR) + "/torch/randwire_ws_stage.inference.json";
  const dataflow_graph dg = read_json_graph(path);
  const memory_graph g = make_memory_graph(dg);
  const order_result kahn = kahn_order(g);
  SUBCASE("max_states") {
    const order_result r = serenity_order(g, serenity_options{.divide = false, .max_states = 50, .beam_width = 0});
    CHECK(r.status == solve_status::feasible);
    check_result(g, r);
    CHECK(r.peak_bytes <= kahn.peak_bytes);
    CHECK(r.lower_bound >= peak_lower_bound(g));
  }
  SUBCASE("max_bytes") {
    const order_result r = serenity_order(g, serenity_options{.divide = false, .max_bytes = 20000, .beam_width = 0});
    CHECK(r.status == solve_status::feasible);
    check_result(g, r);
    CHECK(r.stats.search_bytes <= 20000);
  }
  SUBCASE("time_limit zero") {
    const order_result r = serenity_order(g, serenity_options{.time_limit = std::chrono::duration<double>(0)});
    CHECK(has_solution(r.status));
    check_result(g, r);
  }
}

TEST_CASE("serenity_order on the small shared graphs: optimal, deterministic, at most Kahn") {
  for (const char* name : {"torch/resnet18.inference.json", "torch/darts_v2_normal_cell.inference.json",
                           "checkmate/vgg16_inference.json", "torch/unet.inference.json"}) {
    CAPTURE(name);
    const dataflow_graph dg = read_json_graph(std::string(MEMSCHED_TEST_DATA_DIR) + "/" + name);
    const memory_graph g = make_memory_graph(dg);
    const order_result r = serenity_order(g);
    CHECK(r.status == solve_status::optimal);
    CHECK(r.peak_bytes <= kahn_order(g).peak_bytes);
    check_result(g, r);
    const order_result again = serenity_order(g, serenity_options{.threads = 2});
    CHECK(again.order == r.order);
    const order_result whole = serenity_order(g, serenity_options{.divide = false});
    CHECK(whole.peak_bytes == r.peak_bytes);
  }
}

TEST_CASE("serenity_order rejects bad options and cyclic graphs") {
  const memory_graph g(random_dag(4, 0.5, 1));
  CHECK_THROWS_AS((void)serenity_order(g, serenity_options{.budget = -1}), std::invalid_argument);
  CHECK_THROWS_AS((void)serenity_order(g, serenity_options{.max_states = 0}), std::invalid_argument);
  CHECK_THROWS_AS((void)serenity_order(g, serenity_options{.max_bytes = 0}), std::invalid_argument);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH_AS((void)serenity_order(g, serenity_options{.time_limit = std::chrono::duration<double>(nan)}),
                       doctest::Contains("time_limit"), std::invalid_argument);
  CHECK_THROWS_AS((void)serenity_order(g, serenity_options{.time_limit = std::chrono::duration<double>(-1)}), std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)serenity_order(g, serenity_options{.attempt_time_limit = std::chrono::duration<double>(nan)}),
                       doctest::Contains("attempt_time_limit"), std::invalid_argument);
  CHECK_THROWS_AS((void)serenity_order(g, serenity_options{.attempt_time_limit = std::chrono::duration<double>(0)}),
                  std::invalid_argument);
  // Each bad option is an option_error naming its field (the tool turns the field into its flag).
  const auto option_of = [&](const serenity_options& o) { return testing::option_error_of("serenity_order", [&] { (void)serenity_order(g, o); }); };
  CHECK(option_of({.budget = -1}) == "budget");
  CHECK(option_of({.time_limit = std::chrono::duration<double>(-1)}) == "time_limit");
  CHECK(option_of({.attempt_time_limit = std::chrono::duration<double>(0)}) == "attempt_time_limit");
  CHECK(option_of({.max_states = 0}) == "max_states");
  CHECK(option_of({.max_bytes = 0}) == "max_bytes");
  CHECK(option_of({.reorder_window = 65}) == "reorder_window");
  CHECK(option_of({.soft_budget = static_cast<soft_budget_mode>(3)}) == "soft_budget");
  CHECK(option_of({}) == "(nothing thrown)");
  // The boundary values are valid.
  CHECK(option_of({.soft_budget = soft_budget_mode::bounded, .reorder_window = 64}) == "(nothing thrown)");
  CHECK(option_of({.soft_budget = soft_budget_mode::paper, .threads = 0, .beam_width = 0, .reorder_window = 2}) == "(nothing thrown)");
  const dataflow_graph empty;
  CHECK(serenity_order(empty).status == solve_status::optimal);
  dataflow_graph cyc(2);
  add_edge(0, 1, cyc);
  add_edge(1, 0, cyc);
  CHECK_THROWS_AS((void)serenity_order(cyc), boost::not_a_dag);
}

TEST_CASE("the search returns every byte it reserved from the memory pool") {
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    const memory_graph g(random_dag(9, 0.3, seed));
    for (std::int64_t cap : {std::int64_t{1} << 40, std::int64_t{1500}}) {
      detail::serenity_memory_pool pool;
      pool.cap = cap;
      detail::serenity_dp_request req;
      req.pool = &pool;
      req.beam_width = seed % 2 ? 3 : 0;
      const auto a = detail::run_serenity_dp(g, req);
      CHECK(pool.used.load() == 0);
      CHECK(pool.peak.load() <= cap);
      if (a.outcome == detail::serenity_dp_outcome::solved) {
        CHECK(detail::order_peak_unchecked(g, a.order) == a.peak);
        if (req.beam_width == 0) {
          std::int64_t best = std::numeric_limits<std::int64_t>::max();
          for_each_topological_order(g, [&](const std::vector<std::size_t>& o) { best = std::min(best, detail::order_peak_unchecked(g, o)); });
          CHECK(a.peak == best);
        }
      }
    }
  }
}

TEST_CASE("serenity_order: an infinite or huge time limit means no limit (issue 11)") {
  // Such limits once overflowed the deadline (start + limit) into the past: the search stopped at
  // once, or, as an attempt limit of the soft-budget modes, retried forever.
  const memory_graph g = make_memory_graph(read_json_graph(std::string(MEMSCHED_TEST_DATA_DIR) + "/torch/randwire_ws_stage.inference.json"));
  const order_result exact = serenity_order(g, serenity_options{.divide = false});
  REQUIRE(exact.status == solve_status::optimal);
  for (double t : {1e9, 1e12, 1e300, std::numeric_limits<double>::infinity()}) {
    CAPTURE(t);
    const auto limit = std::chrono::duration<double>(t);
    for (auto mode : {soft_budget_mode::off, soft_budget_mode::paper, soft_budget_mode::bounded}) {
      CAPTURE(static_cast<int>(mode));
      const order_result r = serenity_order(
          g, serenity_options{.soft_budget = mode, .divide = false, .time_limit = limit, .attempt_time_limit = limit});
      CHECK(r.status == solve_status::optimal);
      CHECK(r.peak_bytes == exact.peak_bytes);
      check_result(g, r);
    }
  }
}
