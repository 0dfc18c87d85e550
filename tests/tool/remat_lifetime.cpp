// `memsched remat --algo lifetime-search`: runs the built tool (MEMSCHED_TOOL_PATH); its plan is
// the library's lifetime_search_plan along the same input order (re-simulated against the graph),
// with the same rounds and seed, and its flags are checked; likewise `--algo free-order` and
// free_order_plan.

#include <memsched/graph/json_io.hpp>
#include <memsched/remat/free_order.hpp>
#include <memsched/remat/input_order.hpp>
#include <memsched/remat/lifetime_search.hpp>
#include <memsched/sim/plan_io.hpp>
#include <memsched/sim/simulate_plan.hpp>

#include "../support/run_tool.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

using namespace memsched;
using namespace memsched::testing;
using nlohmann::json;

TEST_CASE("memsched remat --algo lifetime-search: the library's plan along Kahn's order on n100, usage errors") {
  const temp_dir dir;
  const std::filesystem::path path = std::filesystem::path(MEMSCHED_TEST_DATA_DIR) / "moccasin" / "random_layered_n100.json";
  const dataflow_graph df = read_json_graph(path);
  const memory_graph g = make_memory_graph(df);
  const std::vector<std::int64_t>& ids = g.all_ids();
  const input_order_result kahn = remat_input_order(df, input_order_options{.source = input_order_source::kahn});
  std::size_t plans = 0, recomputing = 0;
  for (int pct : {80, 90}) {
    for (const auto [rounds, stall] : {std::pair{0, 40}, std::pair{20, 40}, std::pair{20, 2}}) {
      CAPTURE(pct);
      CAPTURE(rounds);
      CAPTURE(stall);
      const std::int64_t budget = kahn.peak_bytes * pct / 100;
      const tool_run r = run_tool("remat " + path.string() + " --budget " + std::to_string(budget) +
                                       " --algo lifetime-search --order-from kahn --max-rounds " + std::to_string(rounds) +
                                      " --max-stall-rounds " + std::to_string(stall) + " --seed 3 --json",
                                  dir);
      const remat_result lib = lifetime_search_plan(df, budget, lifetime_search_options{.order = kahn.order, .max_rounds = static_cast<std::size_t>(rounds),
                                                                                          .max_stall_rounds = static_cast<std::size_t>(stall), .seed = 3});
      CHECK(r.exit_code == (has_solution(lib.status) ? 0 : 2));
      const json doc = json::parse(r.out);
      REQUIRE(doc.at("status") == std::string(to_string(lib.status)));
      CHECK(doc.at("algorithm") == "lifetime-search");
      CHECK(doc.at("order_source") == "kahn");
      CHECK(doc.at("order_peak") == kahn.peak_bytes);
      CHECK(doc.at("max_rounds") == rounds);
      CHECK(doc.at("max_stall_rounds") == stall);
      CHECK(doc.at("rounds") == lib.stats.lns_rounds);
      CHECK(lib.stats.lns_rounds <= static_cast<std::size_t>(rounds));
      if (!has_solution(lib.status)) continue;
      ++plans;
      if (lib.overhead > 0) ++recomputing;
      const execution_plan plan = plan_from_json(doc, ids, "tool output");
      CHECK(plan == lib.plan);
      const plan_simulation sim = simulate_plan(g, plan);
      CHECK(sim.peak_bytes <= budget);
      CHECK(doc.at("peak_bytes") == sim.peak_bytes);
      CHECK(doc.at("total_cost").get<double>() == doctest::Approx(sim.total_cost));
      CHECK(doc.at("total_cost").get<double>() == doctest::Approx(lib.total_cost));
    }
  }
  CHECK(plans >= 3);        // the comparison must not pass by finding nothing
  CHECK(recomputing >= 3);  // below Kahn's peak: plans that recompute
  // Usage errors (exit 2, nothing on standard output, the flag named).
  const std::string base = "remat " + path.string() + " --budget 90% --algo lifetime-search --order-from kahn";
  for (const std::string bad : {" --max-rounds -1", " --max-stall-rounds -3", " --seed -2", " --time-limit 0", " --dtr-heuristic lru"}) {
    CAPTURE(bad);
    const tool_run r = run_tool(base + bad, dir);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find(bad.substr(1, bad.find(' ', 1) - 1)) != std::string::npos);
  }
}

TEST_CASE("memsched remat --algo free-order: the library's plan on n100 below every order's peak, usage errors") {
  const temp_dir dir;
  const std::filesystem::path path = std::filesystem::path(MEMSCHED_TEST_DATA_DIR) / "moccasin" / "random_layered_n100.json";
  const dataflow_graph df = read_json_graph(path);
  const memory_graph g = make_memory_graph(df);
  const std::vector<std::int64_t>& ids = g.all_ids();
  const std::int64_t budget = 30'000;  // every order peaks at 36,790 or more
  const json doc = run_tool_json("remat " + path.string() + " --budget " + std::to_string(budget) +
                                     " --algo free-order --max-evaluations 300 --max-copy-depth 0 --max-rounds 20 --seed 1"
                                     " --json",
                                 dir);
  const remat_result lib =
      free_order_plan(df, budget, free_order_options{.max_evaluations = 300, .max_copy_depth = 0, .lifetime_rounds = 20, .seed = 1});
  REQUIRE(has_solution(lib.status));
  CHECK(doc.at("status") == std::string(to_string(lib.status)));
  CHECK(doc.at("algorithm") == "free-order");
  CHECK(doc.at("max_evaluations") == 300);
  CHECK(doc.at("max_copy_depth") == 0);
  CHECK(doc.at("rounds") == lib.stats.lns_rounds);
  const execution_plan plan = plan_from_json(doc, ids, "tool output");
  CHECK(plan == lib.plan);
  const plan_simulation sim = simulate_plan(g, plan);
  CHECK(sim.peak_bytes <= budget);
  CHECK(doc.at("total_cost").get<double>() == doctest::Approx(sim.total_cost));
  CHECK(sim.total_cost > g.total_cost());
  const std::string base = "remat " + path.string() + " --budget 90% --algo free-order";
  for (const std::string bad : {" --max-evaluations -1", " --max-copy-depth x", " --seed -2", " --time-limit 0", " --order-from best"}) {
    CAPTURE(bad);
    const tool_run bad_run = run_tool(base + bad, dir);
    CHECK(bad_run.exit_code == 2);
    CHECK(bad_run.out.empty());
    CHECK(bad_run.err.find(bad.substr(1, bad.find(' ', 1) - 1)) != std::string::npos);
  }
}
