// A budget above every peak, up to 2^63 - 1, is no constraint: every rematerialization algorithm
// the tool offers plans as with the no-remat peak (no arithmetic on the budget overflows). The
// solver-based ones run in tests/tool/remat.cpp through the tool.

#include <memsched/graph/random_layered.hpp>
#include <memsched/remat/best_heuristic.hpp>
#include <memsched/remat/dtr.hpp>
#include <memsched/remat/free_order.hpp>
#include <memsched/remat/hiremate.hpp>
#include <memsched/remat/lifetime_search.hpp>
#include <memsched/remat/remat_plan.hpp>
#include <memsched/remat/revolve.hpp>
#include <memsched/remat/training_graph.hpp>
#include <memsched/sim/simulate_plan.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

using namespace memsched;

TEST_CASE("remat algorithms: budgets up to 2^63 - 1 are unconstrained") {
  // Seeds 4 and 9 of a 40-node random layered graph's training graph.
  for (const std::uint64_t seed : {4u, 9u}) {
    const memory_graph g = make_memory_graph(make_training_graph(make_random_layered({.nodes = 40, .seed = seed})));
    const std::int64_t peak = checkpoint_all_plan(g, unlimited_budget).peak_bytes;
    constexpr std::int64_t max = std::numeric_limits<std::int64_t>::max();
    // 2^63 - 4096 .. 2^63 - 1 once overflowed HiRemate's tables (budget + units - 1).
    for (const std::int64_t budget : {max, max - 1, max - 4095, max - 4096, std::int64_t{1} << 62, 2 * peak}) {
      CAPTURE(seed);
      CAPTURE(budget);
      const std::vector<std::pair<std::string, std::function<remat_result()>>> runs{
          {"hiremate", [&] { return hiremate_plan(g, budget); }},
          {"remat_plan", [&] { return remat_plan(g, budget); }},
          {"lifetime_search", [&] { return lifetime_search_plan(g, budget); }},
          {"free_order", [&] { return free_order_plan(g, budget); }},
          {"dtr", [&] { return dtr_plan(g, budget); }},
          {"revolve", [&] { return revolve_plan(g, budget); }},
          {"best_heuristic", [&] { return best_heuristic_plan(g, budget); }},
      };
      for (const auto& [name, run] : runs) {
        CAPTURE(name);
        const remat_result r = run();
        REQUIRE_MESSAGE(has_solution(r.status), r.message);
        CHECK(r.peak_bytes <= peak);
        CHECK(simulate_plan(g, r.plan).peak_bytes == r.peak_bytes);
      }
      for (auto h : all_remat_heuristics) {
        CAPTURE(to_string(h));
        const remat_result r = run_remat_heuristic(g, h, budget, {});
        if (r.status == solve_status::unsupported) continue;
        REQUIRE(has_solution(r.status));
        CHECK(simulate_plan(g, r.plan).peak_bytes == r.peak_bytes);
      }
    }
  }
}
