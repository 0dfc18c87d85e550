// Runs `memsched simulate` (and `memsched order`) as a user would, through popen.

#include <nlohmann/json.hpp>

#include "../support/run_tool.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace {

using namespace memsched::testing;

using json = nlohmann::json;
namespace fs = std::filesystem;

// Standard error is not checked here; one scratch directory holds it for every run.
tool_run run(const std::string& args) {
  static const temp_dir stderr_dir;
  return run_tool(args, stderr_dir);
}


// 0 (10) -> {1, 2} -> 3 (5); bytes 10 20 30 5, cost 1 2 3 4: the diamond of tests/order/kahn.cpp,
// with ids 100..103.
const char* diamond = R"({"name": "diamond", "nodes": [
  {"id": 100, "bytes": 10, "cost": 1}, {"id": 101, "bytes": 20, "cost": 2},
  {"id": 102, "bytes": 30, "cost": 3}, {"id": 103, "bytes": 5, "cost": 4}],
  "edges": [[100, 101], [100, 102], [101, 103], [102, 103]], "outputs": [103]})";

}  // namespace

TEST_CASE("memsched simulate --order: a valid order, by hand") {
  const temp_dir s;
  const std::string graph = s.write("g.json", diamond);
  const std::string order = s.write("o.json", R"({"order": [100, 102, 101, 103]})");
  const tool_run r = run("simulate " + graph + " --order " + order + " --json");
  REQUIRE(r.exit_code == 0);
  const json doc = json::parse(r.out);
  CHECK(doc["valid"] == true);
  // 100: 10 | 102: 40 | 101: 60, frees 100 -> 50 | 103: 55 -> 5.
  CHECK(doc["peak_bytes"] == 60);
  CHECK(doc["peak_node"] == 101);
  CHECK(doc["resident_at_peak"] == json::array({100, 102, 101}));
  CHECK(doc["total_cost"] == 10.0);
  CHECK(doc["overhead"] == 0.0);
  CHECK(doc["arena"] == "greedy-by-size");
  CHECK(doc["arena_bytes"].get<std::int64_t>() >= 60);
  CHECK(doc["offchip_bytes"].is_null());
  REQUIRE(doc["timeline"].size() == 4);
  CHECK(doc["timeline"][2]["live_before"] == 40);
  CHECK(doc["timeline"][2]["transient"] == 60);
  CHECK(doc["timeline"][2]["live_after"] == 50);
  CHECK(doc["timeline"][3]["live_after"] == 5);
  // A bare array is accepted; first-fit and an on-chip capacity that forces traffic.
  const std::string bare = s.write("bare.json", "[100, 101, 102, 103]");
  const tool_run ff = run("simulate " + graph + " --order " + bare + " --arena first-fit --onchip 55 --json");
  REQUIRE(ff.exit_code == 0);
  const json d2 = json::parse(ff.out);
  CHECK(d2["arena"] == "first-fit");
  // 100 101 102 103 with 55 bytes: running 102 (10 + 20 + 30 = 60) must evict 101 (100 is its
  // input, so pinned): write 20; 103 reads it back: 20.
  CHECK(d2["offchip_bytes"] == 40);
  CHECK(d2["offchip"]["bytes_written"] == 20);
  const tool_run tiny = run("simulate " + graph + " --order " + bare + " --onchip 10 --json");
  REQUIRE(tiny.exit_code == 0);
  const json d3 = json::parse(tiny.out);
  CHECK(d3["offchip_bytes"].is_null());
  CHECK(d3["offchip"]["status"] == "infeasible");
}

TEST_CASE("memsched simulate accepts the output of memsched order, for every baseline") {
  const temp_dir s;
  const std::string graph = std::string(MEMSCHED_TEST_DATA_DIR) + "/torch/resnet18.inference.json";
  for (const char* algo : {"kahn", "dfs", "greedy"}) {
    CAPTURE(algo);
    const std::string order = (s / (std::string(algo) + ".json")).string();
    const tool_run o = run("order " + graph + " --algo " + algo + " --out " + order + " --json");
    REQUIRE(o.exit_code == 0);
    const json ordered = json::parse(o.out);
    const tool_run r = run("simulate " + graph + " --order " + order + " --json");
    REQUIRE(r.exit_code == 0);
    const json doc = json::parse(r.out);
    CHECK(doc["valid"] == true);
    CHECK(doc["peak_bytes"] == ordered["peak_bytes"]);
    CHECK(doc["arena_bytes"].get<std::int64_t>() >= doc["peak_bytes"].get<std::int64_t>());
  }
}

TEST_CASE("memsched simulate: an invalid order or plan gives valid:false and exit code 1") {
  const temp_dir s;
  const std::string graph = s.write("g.json", diamond);
  for (const char* text : {R"({"order": [101, 100, 102, 103]})", R"({"order": [100, 101, 102]})",
                           R"({"order": [100, 101, 102, 103, 103]})"}) {
    CAPTURE(text);
    const tool_run r = run("simulate " + graph + " --order " + s.write("bad.json", text).string() + " --json");
    CHECK(r.exit_code == 1);
    const json doc = json::parse(r.out);
    CHECK(doc["valid"] == false);
    CHECK(!doc["error"].get<std::string>().empty());
  }
  const tool_run r = run("simulate " + graph + " --order " + s.write("bad.json", R"({"order": [101, 100, 102, 103]})").string() + " --json");
  CHECK(json::parse(r.out)["error"].get<std::string>().find("node 101") != std::string::npos);
  const std::string plan = s.write("p.json", R"({"steps": [{"op": "compute", "node": 101}]})");
  const tool_run p = run("simulate " + graph + " --plan " + plan + " --json");
  CHECK(p.exit_code == 1);
  const json doc = json::parse(p.out);
  CHECK(doc["valid"] == false);
  CHECK(doc["error"].get<std::string>().find("step 0") != std::string::npos);
  // A file that is not an order or plan of the graph is an error naming the file and the entry
  // (stderr, exit code 1), not a verdict of the simulator.
  const std::string unknown = s.write("unknown.json", R"({"order": [100, 7, 101, 102]})").string();
  const tool_run u = run_tool("simulate " + graph + " --order " + unknown + " --json", s);
  CHECK(u.exit_code == 1);
  CHECK(u.out.empty());
  CHECK(u.err.find(unknown + ": order[1]: unknown node id 7") != std::string::npos);
  const std::string bad_op = s.write("bad_op.json", R"({"steps": [{"op": "keep", "node": 100}]})").string();
  const tool_run b = run_tool("simulate " + graph + " --plan " + bad_op, s);
  CHECK(b.exit_code == 1);
  CHECK(b.err.find(bad_op + ": steps[0].op must be") != std::string::npos);
  // Usage errors are not verdicts: exit code 2.
  CHECK(run("simulate " + graph + " --json").exit_code == 2);
  CHECK(run("simulate " + graph + " --order a --plan b").exit_code == 2);
  CHECK(run("simulate " + graph + " --order " + plan + " --arena best").exit_code == 2);
  CHECK(run("simulate --help").exit_code == 0);
}

TEST_CASE("memsched simulate --plan: recomputation, cost and overhead") {
  const temp_dir s;
  const std::string graph = s.write("g.json", diamond);
  // Recompute 100 so it is not held while 101 and 102 run.
  const std::string plan = s.write("p.json", R"({"steps": [
    {"op": "compute", "node": 100}, {"op": "compute", "node": 101}, {"op": "free", "node": 100},
    {"op": "compute", "node": 100}, {"op": "compute", "node": 102}, {"op": "free", "node": 100},
    {"op": "compute", "node": 103}, {"op": "free", "node": 101}, {"op": "free", "node": 102}]})");
  const tool_run r = run("simulate " + graph + " --plan " + plan + " --json");
  REQUIRE(r.exit_code == 0);
  const json doc = json::parse(r.out);
  CHECK(doc["valid"] == true);
  CHECK(doc["kind"] == "plan");
  // 10 | 30 -> 20 | 30 | 60 -> 50 | 55 -> 25 -> 5: peak 60 at step 4.
  CHECK(doc["peak_bytes"] == 60);
  CHECK(doc["peak_step"] == 4);
  CHECK(doc["total_cost"] == 11.0);
  CHECK(doc["overhead"].get<double>() == doctest::Approx(0.1));
  CHECK(doc["arena_bytes"].get<std::int64_t>() >= 60);
  CHECK(doc["offchip_bytes"].is_null());
  REQUIRE(doc["timeline"].size() == 9);
  CHECK(doc["timeline"][2]["op"] == "free");
  CHECK(doc["timeline"][2]["live_after"] == 20);
  CHECK(doc["timeline"][8]["live_after"] == 5);
}
