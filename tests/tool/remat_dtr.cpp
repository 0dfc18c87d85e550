// `memsched remat --algo dtr`: runs the built tool (MEMSCHED_TOOL_PATH); its plan is the library's
// dtr_plan along the same input order (re-simulated against the graph), and its flags are checked.

#include <memsched/graph/json_io.hpp>
#include <memsched/remat/dtr.hpp>
#include <memsched/remat/input_order.hpp>
#include <memsched/sim/plan_io.hpp>
#include <memsched/sim/simulate_order.hpp>
#include <memsched/sim/simulate_plan.hpp>

#include "../support/run_tool.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

using namespace memsched;
using namespace memsched::testing;
using nlohmann::json;

TEST_CASE("memsched remat --algo dtr: the library's plan along Kahn's order, usage errors, the computation limit") {
  const temp_dir dir;
  const std::filesystem::path path = std::filesystem::path(MEMSCHED_TEST_DATA_DIR) / "torch" / "resnet18.training.json";
  const dataflow_graph df = read_json_graph(path);
  const memory_graph g = make_memory_graph(df);
  const std::vector<std::int64_t>& ids = g.all_ids();
  const auto& topo = g.topological_order();
  const std::int64_t peak = simulate_order(g, std::vector<std::size_t>(topo.begin(), topo.end())).peak_bytes;
  const std::vector<std::size_t> kahn = remat_input_order(df, input_order_options{.source = input_order_source::kahn}).order;
  std::size_t plans = 0;
  for (const char* heuristic : {"dtr-eq", "lru"})
    for (int pct : {50, 70, 90}) {
      CAPTURE(heuristic);
      CAPTURE(pct);
      const std::int64_t budget = peak * pct / 100;
      const tool_run r = run_tool("remat " + path.string() + " --budget " + std::to_string(budget) + " --algo dtr --order-from kahn --dtr-heuristic " +
                                      heuristic + " --json",
                                  dir);
      const remat_result lib = dtr_plan(df, budget, dtr_options{.order = kahn, .heuristic = *parse_dtr_heuristic(heuristic)});
      CHECK(r.exit_code == (has_solution(lib.status) ? 0 : 2));
      const json doc = json::parse(r.out);
      REQUIRE(doc.at("status") == std::string(to_string(lib.status)));
      CHECK(doc.at("order_source") == "kahn");
      CHECK(doc.at("dtr_heuristic") == heuristic);
      if (!has_solution(lib.status)) continue;
      ++plans;
      const execution_plan plan = plan_from_json(doc, ids, "tool output");
      CHECK(plan == lib.plan);
      const plan_simulation sim = simulate_plan(g, plan);
      CHECK(sim.peak_bytes <= budget);
      CHECK(doc.at("peak_bytes") == sim.peak_bytes);
      CHECK(doc.at("peak_bytes") == lib.peak_bytes);
      CHECK(doc.at("total_cost").get<double>() == doctest::Approx(lib.total_cost));
      CHECK(doc.at("total_cost").get<double>() == doctest::Approx(sim.total_cost));
    }
  CHECK(plans >= 3);  // the comparison must not pass by finding nothing
  // Usage errors (exit 2, nothing on standard output).
  const std::string base = "remat " + path.string() + " --budget 70% --algo dtr --order-from kahn";
  for (const std::string bad : {" --dtr-heuristic nope", " --max-computations 0", " --max-computations -3", " --time-limit 0", " --time-limit x"}) {
    CAPTURE(bad);
    const tool_run r = run_tool(base + bad, dir);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find(bad.substr(1, bad.find(' ', 1) - 1)) != std::string::npos);
  }
  // A time limit no walk reaches: the same plan as without one.
  {
    const json limited = run_tool_json(base + " --time-limit 1000 --json", dir);
    const json free = run_tool_json(base + " --json", dir);
    CHECK(limited.at("steps") == free.at("steps"));
  }
  // Too few computations allowed: no_solution with its message (exit 2, the JSON still printed).
  {
    const tool_run r = run_tool(base + " --max-computations 10 --json", dir);
    CHECK(r.exit_code == 2);
    const json doc = json::parse(r.out);
    CHECK(doc.at("status") == "no_solution");
    const std::string message = doc.at("message").get<std::string>();
    CHECK(message.find("dtr_plan: gave up after ") != std::string::npos);
    CHECK(message.find(" computations (max_computations)") != std::string::npos);
    CHECK(doc.at("steps").empty());
  }
}
