// Runs `memsched order --algo serenity` as a user would, through popen, and re-checks its orders
// with `memsched simulate`.

#include <nlohmann/json.hpp>

#include "../support/run_tool.hpp"

#include <doctest/doctest.h>

#include <string>

namespace {

using namespace memsched::testing;
using json = nlohmann::json;


const std::string n250 = std::string(MEMSCHED_TEST_DATA_DIR) + "/moccasin/random_layered_n250.json";

}  // namespace

TEST_CASE("memsched order --algo serenity proves random_layered_n250 optimal; simulate agrees") {
  const temp_dir s;
  const std::string order = (s / "order.json").string();
  const json doc = run_tool_json("order " + n250 + " --algo serenity --out " + order + " --json");
  CHECK(doc["status"] == "optimal");
  CHECK(doc["peak_bytes"] == 105170);
  CHECK(doc["lower_bound"] == 105170);
  CHECK(doc["stats"]["states_expanded"].get<std::int64_t>() > 0);
  const json sim = run_tool_json("simulate " + n250 + " --order " + order + " --json");
  CHECK(sim["peak_bytes"] == 105170);
  // Kahn's order of the same graph, for the reduction the docs quote.
  const json kahn = run_tool_json("order " + n250 + " --algo kahn --json");
  CHECK(kahn["peak_bytes"] == 135910);
}

TEST_CASE("memsched order --algo serenity: budget, limits and the layered search alone") {
  // A budget one byte below the optimum: status infeasible (exit code 0: the order command reports
  // the status), with a lower bound that proves the budget impossible.
  const json b = run_tool_json("order " + n250 + " --algo serenity --budget 105169 --json");
  CHECK(b["status"] == "infeasible");
  CHECK(b["lower_bound"].get<std::int64_t>() >= 105170);
  // The layered DP alone, stopped after a few states: a valid order marked feasible.
  const json c = run_tool_json("order " + n250 + " --algo serenity --decision-budget 0 --max-states 1000 --json");
  CHECK(c["status"] == "feasible");
  CHECK(c["peak_bytes"].get<std::int64_t>() >= 105170);
  CHECK(c["lower_bound"].get<std::int64_t>() <= 105170);
  // The same with the local search over orders and no beam: the flags reach the library (the
  // local search lowers the peak of the same capped run without it), and its answer is still a
  // valid order of the graph.
  const std::string no_beam = "order " + n250 + " --algo serenity --decision-budget 0 --max-states 1000 --beam-width 0 ";
  const json l = run_tool_json(no_beam + "--reorder-window 32 --reorder-attempts 200 --json");
  const json plain = run_tool_json(no_beam + "--json");
  CHECK(l["peak_bytes"].get<std::int64_t>() >= 105170);
  CHECK(l["peak_bytes"].get<std::int64_t>() < plain["peak_bytes"].get<std::int64_t>());
}

TEST_CASE("memsched order --algo serenity --decisions-on-training keeps the turns on a training graph") {
  // darts_v2_normal_cell.training needs a search: by default the layered search alone (as
  // --decision-budget 0), with the flag the turns (more states), the same optimal peak.
  const std::string darts = std::string(MEMSCHED_TEST_DATA_DIR) + "/torch/darts_v2_normal_cell.training.json";
  const json by_default = run_tool_json("order " + darts + " --algo serenity --json");
  const json layered = run_tool_json("order " + darts + " --algo serenity --decision-budget 0 --json");
  const json turns = run_tool_json("order " + darts + " --algo serenity --decisions-on-training --json");
  for (const json* r : {&by_default, &layered, &turns}) {
    CHECK((*r)["status"] == "optimal");
    CHECK((*r)["peak_bytes"] == layered["peak_bytes"]);
  }
  CHECK(by_default["stats"]["states_expanded"] == layered["stats"]["states_expanded"]);
  CHECK(turns["stats"]["states_expanded"].get<std::int64_t>() > layered["stats"]["states_expanded"].get<std::int64_t>());
}

TEST_CASE("memsched order --algo serenity rejects bad option values") {
  for (const char* bad : {"--decision-budget -1", "--decision-budget x", "--max-states 0", "--soft-budget sometimes",
                          "--beam-width -1", "--reorder-window 1", "--reorder-window 65", "--reorder-attempts x"}) {
    CAPTURE(bad);
    const tool_run r = run_tool("order " + n250 + " --algo serenity " + bad);
    CHECK(r.exit_code != 0);
    CHECK(r.out.empty());
    CHECK_FALSE(r.err.empty());
  }
  // Ranges the library checks are reported with the flag's name (option_error), as usage errors.
  const tool_run window = run_tool("order " + n250 + " --algo serenity --reorder-window 1");
  CHECK(window.exit_code == 2);
  CHECK(window.err.find("memsched order: --reorder-window must be 0 (off) or in [2, 64]\n") != std::string::npos);
  CHECK(window.err.find("usage:") != std::string::npos);
  const tool_run states = run_tool("order " + n250 + " --algo serenity --max-states 0");
  CHECK(states.exit_code == 2);
  CHECK(states.err.find("memsched order: --max-states must be > 0\n") != std::string::npos);
}

TEST_CASE("memsched order --algo serenity --progress prints better orders and bounds on stderr") {
  const tool_run r = run_tool("order " + n250 + " --algo serenity --progress --json");
  REQUIRE(r.exit_code == 0);
  const json doc = json::parse(r.out);  // stdout stays the JSON document
  REQUIRE(doc["status"] == "optimal");
  // Lines "[progress] 0.01 s  best 117.4 KiB  bound 85.5 KiB  gap 27.13%  (value=120220 bound=87600)":
  // the best value and the bound so far; each report changes one of them.
  std::vector<double> values, bounds;
  std::size_t pos = 0;
  while ((pos = r.err.find("[progress]", pos)) != std::string::npos) {
    const std::string line = r.err.substr(pos, r.err.find('\n', pos) - pos);
    const auto v = line.find("(value="), b = line.find(" bound=", v == std::string::npos ? 0 : v);
    REQUIRE(v != std::string::npos);
    REQUIRE(b != std::string::npos);
    if (line[v + 7] != '-' && (values.empty() || std::stod(line.substr(v + 7)) != values.back())) values.push_back(std::stod(line.substr(v + 7)));
    if (line[b + 7] != '-' && (bounds.empty() || std::stod(line.substr(b + 7)) != bounds.back())) bounds.push_back(std::stod(line.substr(b + 7)));
    ++pos;
  }
  REQUIRE(values.size() >= 2);
  REQUIRE(bounds.size() >= 2);
  for (std::size_t k = 1; k < values.size(); ++k) CHECK(values[k] < values[k - 1]);
  for (std::size_t k = 1; k < bounds.size(); ++k) CHECK(bounds[k] > bounds[k - 1]);
  CHECK(values.front() == 135910);  // Kahn's order first
  CHECK(values.back() == doc["peak_bytes"].get<double>());
  CHECK(bounds.back() == doc["peak_bytes"].get<double>());
  // Without --progress nothing is printed.
  const tool_run quiet = run_tool("order " + n250 + " --algo serenity --json");
  REQUIRE(quiet.exit_code == 0);
  CHECK(quiet.err.find("[progress]") == std::string::npos);
}

TEST_CASE("memsched order --algo serenity --rewrite lists every original node once") {
  const std::string unet = std::string(MEMSCHED_TEST_DATA_DIR) + "/torch/unet.inference.json";
  const temp_dir s;
  const std::string order = (s / "order.json").string();
  const json doc = run_tool_json("order " + unet + " --algo serenity --rewrite --out " + order + " --json");
  CHECK(doc["status"] == "optimal");
  // The order is one of the original graph: simulate accepts it.
  const tool_run sim = run_tool("simulate " + unet + " --order " + order + " --json");
  CHECK(sim.exit_code == 0);
  const json info = run_tool_json("info " + unet + " --json");
  CHECK(doc["order"].size() == info["nodes"].get<std::size_t>());
}
