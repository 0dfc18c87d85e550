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
  const json doc = run_tool_json("simulate " + graph + " --order " + order + " --json");
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
  const json d2 = run_tool_json("simulate " + graph + " --order " + bare + " --arena first-fit --onchip 55 --json");
  CHECK(d2["arena"] == "first-fit");
  // --arena none: no placement, the arena fields null and no offsets in the timeline.
  const json dn = run_tool_json("simulate " + graph + " --order " + order + " --arena none --json");
  CHECK(dn["peak_bytes"] == 60);
  for (const char* key : {"arena", "arena_bytes", "arena_lower_bound", "arena_status", "fragmentation"}) CHECK(dn[key].is_null());
  REQUIRE(dn["timeline"].size() == 4);
  CHECK_FALSE(dn["timeline"][2].contains("offset"));
  CHECK(doc["timeline"][2].contains("offset"));
  // 100 101 102 103 with 55 bytes: running 102 (10 + 20 + 30 = 60) must evict 101 (100 is its
  // input, so pinned): write 20; 103 reads it back: 20.
  CHECK(d2["offchip_bytes"] == 40);
  CHECK(d2["offchip"]["bytes_written"] == 20);
  const json d3 = run_tool_json("simulate " + graph + " --order " + bare + " --onchip 10 --json");
  CHECK(d3["offchip_bytes"].is_null());
  CHECK(d3["offchip"]["status"] == "infeasible");
}

TEST_CASE("memsched simulate accepts the output of memsched order, for every baseline") {
  const temp_dir s;
  const std::string graph = std::string(MEMSCHED_TEST_DATA_DIR) + "/torch/resnet18.inference.json";
  for (const char* algo : {"kahn", "dfs", "greedy"}) {
    CAPTURE(algo);
    const std::string order = (s / (std::string(algo) + ".json")).string();
    const json ordered = run_tool_json("order " + graph + " --algo " + algo + " --out " + order + " --json");
    const json doc = run_tool_json("simulate " + graph + " --order " + order + " --json");
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
    const tool_run r = run_tool("simulate " + graph + " --order " + s.write("bad.json", text).string() + " --json");
    CHECK(r.exit_code == 1);
    const json doc = json::parse(r.out);
    CHECK(doc["valid"] == false);
    CHECK(!doc["error"].get<std::string>().empty());
  }
  const tool_run r = run_tool("simulate " + graph + " --order " + s.write("bad.json", R"({"order": [101, 100, 102, 103]})").string() + " --json");
  CHECK(json::parse(r.out)["error"].get<std::string>().find("node 101") != std::string::npos);
  const std::string plan = s.write("p.json", R"({"steps": [{"op": "compute", "node": 101}]})");
  const tool_run p = run_tool("simulate " + graph + " --plan " + plan + " --json");
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
  CHECK(run_tool("simulate " + graph + " --json").exit_code == 2);
  CHECK(run_tool("simulate " + graph + " --order a --plan b").exit_code == 2);
  CHECK(run_tool("simulate " + graph + " --order " + plan + " --arena best").exit_code == 2);
  CHECK(run_tool("simulate --help").exit_code == 0);
}

TEST_CASE("memsched simulate --plan: recomputation, cost and overhead") {
  const temp_dir s;
  const std::string graph = s.write("g.json", diamond);
  // Recompute 100 so it is not held while 101 and 102 run.
  const std::string plan = s.write("p.json", R"({"steps": [
    {"op": "compute", "node": 100}, {"op": "compute", "node": 101}, {"op": "free", "node": 100},
    {"op": "compute", "node": 100}, {"op": "compute", "node": 102}, {"op": "free", "node": 100},
    {"op": "compute", "node": 103}, {"op": "free", "node": 101}, {"op": "free", "node": 102}]})");
  const json doc = run_tool_json("simulate " + graph + " --plan " + plan + " --json");
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

TEST_CASE("memsched simulate: the streamed timeline is the JSON print_json writes; the summary; --no-timeline, --csv") {
  // The timeline is written entry by entry (a 2-million-step plan made a 2 GB DOM): the text must
  // be exactly nlohmann's dump() of the same document, for orders and plans.
  const temp_dir s;
  const std::string graph = s.write("g.json", diamond);
  const std::string order = s.write("o.json", R"({"order": [100, 102, 101, 103]})");
  const std::string plan = s.write("p.json", R"({"steps": [
    {"op": "compute", "node": 100}, {"op": "compute", "node": 101}, {"op": "free", "node": 100},
    {"op": "compute", "node": 100}, {"op": "compute", "node": 102}, {"op": "free", "node": 100},
    {"op": "compute", "node": 103}, {"op": "free", "node": 101}, {"op": "free", "node": 102}]})");
  for (const std::string& what : {"--order " + order, "--plan " + plan}) {
    CAPTURE(what);
    const tool_run pretty = run_tool("simulate " + graph + " " + what);
    const tool_run line = run_tool("simulate " + graph + " " + what + " --json");
    REQUIRE(pretty.exit_code == 0);
    REQUIRE(line.exit_code == 0);
    const json doc = json::parse(line.out);
    CHECK(line.out == doc.dump() + "\n");
    // Without --json a summary for people, with the document's figures.
    CHECK(json::parse(pretty.out, nullptr, false).is_discarded());
    CHECK(pretty.out.find("peak             " + std::to_string(doc["peak_bytes"].get<std::int64_t>()) + " at step " +
                          std::to_string(doc["peak_step"].get<std::int64_t>())) != std::string::npos);
    CHECK(doc.contains("timeline"));
    const json none = run_tool_json("simulate " + graph + " " + what + " --json --no-timeline");
    json without = doc;
    without.erase("timeline");
    CHECK(none == without);
  }
  // --csv: the rows of the timeline (a free's transient is its live_before).
  const std::string csv = (s.path() / "t.csv").string();
  REQUIRE(run_tool("simulate " + graph + " --plan " + plan + " --csv " + csv + " --no-timeline").exit_code == 0);
  std::ifstream in(csv);
  std::string header, row0, row1, row2;
  std::getline(in, header);
  std::getline(in, row0);
  std::getline(in, row1);
  std::getline(in, row2);
  CHECK(header == "step,node,op,live_before,transient,live_after");
  CHECK(row0 == "0,100,compute,0,10,10");
  CHECK(row1 == "1,101,compute,10,30,30");
  CHECK(row2 == "2,100,free,30,30,20");
  CHECK(run_tool("simulate " + graph + " --plan " + plan + " --csv " + (s.path() / "no-dir" / "t.csv").string()).exit_code == 1);
}

TEST_CASE("memsched simulate --plan: a 200,000-step plan (a 1,000-vertex chain computed 100 times)") {
  // Counted size, checked values (the time and memory of 2 million steps: docs/simulator.md).
  // Chain 0 -> 1 -> ... -> 999, bytes 1000 + i % 7, cost 1, output 999. Each round computes the
  // chain, freeing every vertex once its successor is computed, and frees 999 except in the last.
  const temp_dir s;
  const int n = 1000, rounds = 100;
  std::string g = R"({"name": "chain", "nodes": [)";
  for (int i = 0; i < n; ++i) g += (i ? ", " : "") + std::string(R"({"id": )") + std::to_string(i) + R"(, "bytes": )" + std::to_string(1000 + i % 7) + R"(, "cost": 1})";
  g += R"(], "edges": [)";
  for (int i = 0; i + 1 < n; ++i) g += (i ? ", [" : "[") + std::to_string(i) + ", " + std::to_string(i + 1) + "]";
  g += "], \"outputs\": [" + std::to_string(n - 1) + "]}";
  std::string p = R"({"steps": [)";
  std::size_t steps = 0;
  auto step = [&](const char* op, int node) {
    p += (steps++ ? ",\n" : "\n") + std::string(R"({"op": ")") + op + R"(", "node": )" + std::to_string(node) + "}";
  };
  for (int r = 0; r < rounds; ++r) {
    for (int i = 0; i < n; ++i) {
      step("compute", i);
      if (i > 0) step("free", i - 1);
    }
    if (r + 1 < rounds) step("free", n - 1);
  }
  p += "]}";
  REQUIRE(steps == 199999);
  const json doc = run_tool_json("simulate " + s.write("chain.json", g).string() + " --plan " + s.write("plan.json", p).string() +
                            " --json --no-timeline");
  CHECK(doc["valid"] == true);
  CHECK(doc["computes"] == 100000);
  CHECK(doc["total_cost"] == 100000.0);
  CHECK(doc["overhead"].get<double>() == doctest::Approx(99.0));
  // The largest pair of neighbours: i % 7 == 6 after i % 7 == 5 (1005 + 1006), first at i = 6.
  CHECK(doc["peak_bytes"] == 2011);
  CHECK(doc["peak_step"] == 11);  // compute 6 is step 2 * 6 - 1
  CHECK(doc["peak_node"] == 6);
  CHECK(!doc.contains("timeline"));
}

TEST_CASE("memsched simulate --order: a star of 20,000 branches, every branch live at the end") {
  // 200 million pairs of tensors live together: the default placement (auto) takes first fit
  // there (greedy by size is quadratic in them) and says so; the arena equals the peak, as
  // nothing is freed. With --arena none there is no placement at all.
  const temp_dir s;
  const int n = 20000;
  std::string g = R"({"nodes": [{"id": 0, "bytes": 8})";
  for (int i = 1; i <= n; ++i) g += R"(, {"id": )" + std::to_string(i) + R"(, "bytes": )" + std::to_string(8 + i % 5) + "}";
  g += R"(], "edges": [)";
  for (int i = 1; i <= n; ++i) g += (i > 1 ? ", [0, " : "[0, ") + std::to_string(i) + "]";
  g += "]}";
  const std::string graph = s.write("star.json", g).string();
  std::string order = "[0";
  for (int i = 1; i <= n; ++i) order += ", " + std::to_string(i);
  order += "]";
  const std::string order_file = s.write("order.json", order).string();
  const json doc = run_tool_json("simulate " + graph + " --order " + order_file + " --json --no-timeline");
  CHECK(doc["valid"] == true);
  CHECK(doc["arena"] == "first-fit");
  CHECK(doc["arena_bytes"] == doc["peak_bytes"]);
  CHECK(doc["arena_status"] == "optimal");
  const json none = run_tool_json("simulate " + graph + " --order " + order_file + " --arena none --json --no-timeline");
  CHECK(none["arena"].is_null());
  CHECK(none["peak_bytes"] == doc["peak_bytes"]);
}
