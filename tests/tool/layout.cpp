// Runs `memsched layout` and `memsched simulate --arena exact` as a user would, through popen.

#include <memsched/sim/layout.hpp>
#include <memsched/sim/layout_io.hpp>

#include <nlohmann/json.hpp>

#include "../support/run_tool.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

namespace {

using namespace memsched::testing;
using json = nlohmann::json;


const std::string example = (std::filesystem::path(MEMSCHED_TEST_DATA_DIR) / "minimalloc" / "example.12.csv").string();

}  // namespace

TEST_CASE("memsched layout: MiniMalloc's example, minimised and at a capacity, written back") {
  const temp_dir s;
  const json doc = run_tool_json("layout " + example + " --json");
  CHECK(doc["status"] == "optimal");
  CHECK(doc["arena_bytes"] == 12);
  CHECK(doc["lower_bound"] == 12);
  CHECK(doc["buffers"] == 5);
  CHECK(doc["valid"] == true);
  const std::string out = (s.path() / "out.csv").string();
  const json at = run_tool_json("layout " + example + " --capacity 12 --out " + out + " --json");
  CHECK(at["capacity"] == 12);
  CHECK(at["status"] == "optimal");
  // The file written holds the offsets: re-read and re-checked here.
  const memsched::layout_problem p = memsched::read_layout_csv(std::filesystem::path(out));
  REQUIRE(p.buffers.size() == 5);
  CHECK(p.ids.front() == "b1");
  std::vector<std::int64_t> offsets;
  for (const auto& b : p.buffers) offsets.push_back(b.offset.value_or(-1));
  std::vector<memsched::layout_buffer> free = p.buffers;
  for (auto& b : free) b.offset.reset();
  CHECK(memsched::check_layout(free, offsets, 12).valid);
  const json tight = run_tool_json("layout " + example + " --capacity 11 --json");
  CHECK(tight["status"] == "infeasible");
  CHECK(tight["arena_bytes"].is_null());
  CHECK(tight["lower_bound"] == 12);
}

TEST_CASE("memsched layout: bad files and flags are errors naming the place") {
  const temp_dir s;
  const std::string bad = s.write("bad.csv", "id,lower,upper,size\n0,1,2,4\n1,1,x,4\n");
  const tool_run r = run_tool("layout " + bad);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("bad.csv:3:3: upper 'x' is not an integer") != std::string::npos);
  const std::string gaps = s.write("gaps.csv", "id,lower,upper,size,gaps\n");
  CHECK(run_tool("layout " + gaps).err.find("gaps.csv:1:5: unknown column 'gaps'") != std::string::npos);
  CHECK(run_tool("layout " + example + " --capacity -3").exit_code == 2);
  CHECK(run_tool("layout " + example + " --node-limit x").exit_code == 2);
  CHECK(run_tool("layout").exit_code == 2);
}

TEST_CASE("memsched simulate --arena exact: arena = peak where greedy by size fragments") {
  const temp_dir s;
  {
    // Checkmate's MobileNet inference graph is a chain: its one order's greedy-by-size arena is
    // above the peak, and a layout at the peak exists (tests/sim/arena.cpp).
    const std::string mobilenet = (std::filesystem::path(MEMSCHED_TEST_DATA_DIR) / "checkmate" / "mobilenet_inference.json").string();
    const std::string kahn = (s / "kahn.json").string();
    REQUIRE(run_tool("order " + mobilenet + " --algo kahn --out " + kahn + " --json").exit_code == 0);
    const json greedy = run_tool_json("simulate " + mobilenet + " --order " + kahn + " --no-timeline --json");
    const json exact = run_tool_json("simulate " + mobilenet + " --order " + kahn + " --arena exact --no-timeline --json");
    CHECK(greedy["arena_bytes"].get<std::int64_t>() > greedy["peak_bytes"].get<std::int64_t>());
    CHECK(exact["arena_bytes"] == exact["peak_bytes"]);
    CHECK(exact["arena_status"] == "optimal");
  }
  // A small chain, through an order and through a plan.
  // 0 (10) -> 1 (10) -> 2 (20): first fit needs 40, the peak is 30 (tests/sim/arena.cpp).
  const std::string graph = s.write("g.json", R"({"nodes": [{"id": 0, "bytes": 10}, {"id": 1, "bytes": 10},
    {"id": 2, "bytes": 20}], "edges": [[0, 1], [1, 2]], "outputs": [2]})");
  const std::string order = s.write("o.json", R"({"order": [0, 1, 2]})");
  const json doc = run_tool_json("simulate " + graph + " --order " + order + " --arena exact --no-timeline --json");
  CHECK(doc["arena"] == "exact");
  CHECK(doc["arena_bytes"] == doc["peak_bytes"]);
  CHECK(doc["arena_lower_bound"] == doc["peak_bytes"]);
  CHECK(doc["arena_status"] == "optimal");
  const std::string plan = s.write("p.json", R"({"steps": [{"op": "compute", "node": 0}, {"op": "compute", "node": 1},
    {"op": "free", "node": 0}, {"op": "compute", "node": 2}, {"op": "free", "node": 1}]})");
  const json p = run_tool_json("simulate " + graph + " --plan " + plan + " --arena exact --time-limit 5 --no-timeline --json");
  CHECK(p["arena"] == "exact");
  CHECK(p["arena_status"] == "optimal");
  CHECK(p["arena_bytes"] == p["peak_bytes"]);
  CHECK(run_tool("simulate " + graph + " --order " + order + " --arena exact --time-limit 0").exit_code == 2);
}

TEST_CASE("memsched order --arena exact: the order with the least arena found, its peak and the start's arena beside it") {
  const temp_dir s;
  // Seed 14 at 80 vertices: Serenity's order leaves gaps in its least arena (tests/order/arena_order.cpp).
  const std::string graph = (s.path() / "rl.json").string(), order = (s.path() / "o.json").string();
  REQUIRE(run_tool("generate random-layered --nodes 80 --edge-density 0.3 --seed 14 --out " + graph).exit_code == 0);
  const json plain = run_tool_json("order " + graph + " --algo serenity");
  CHECK_FALSE(plain.contains("arena"));
  const json doc = run_tool_json("order " + graph + " --algo serenity --arena exact --out " + order);
  REQUIRE(doc.contains("arena"));
  const json& a = doc["arena"];
  CHECK(doc["peak_bytes"] == plain["peak_bytes"]);  // no slack: the peak stays optimal
  CHECK(a["start_peak_bytes"] == plain["peak_bytes"]);
  CHECK(a["start_bytes"].get<std::int64_t>() > plain["peak_bytes"].get<std::int64_t>());
  CHECK(a["bytes"].get<std::int64_t>() <= a["start_bytes"].get<std::int64_t>());
  CHECK(a["bytes"].get<std::int64_t>() >= doc["peak_bytes"].get<std::int64_t>());
  CHECK(a["lower_bound"].get<std::int64_t>() <= a["bytes"].get<std::int64_t>());
  CHECK((a["status"] == "optimal") == (a["bytes"] == doc["peak_bytes"]));
  // The order written is the one reported: simulate lays it out as well or better.
  const json sim = run_tool_json("simulate " + graph + " --order " + order + " --arena exact");
  CHECK(sim["valid"] == true);
  CHECK(sim["peak_bytes"] == doc["peak_bytes"]);
  CHECK(sim["arena_bytes"].get<std::int64_t>() <= a["bytes"].get<std::int64_t>());
  const tool_run summary = run_tool("order " + graph + " --algo serenity --arena exact");
  CHECK(summary.out.find("arena search") != std::string::npos);
}

TEST_CASE("memsched order --arena: wrong values and orphan flags are usage errors") {
  const std::string graph = (std::filesystem::path(MEMSCHED_TEST_DATA_DIR) / "moccasin" / "random_layered_n100.json").string();
  const tool_run greedy = run_tool("order " + graph + " --algo kahn --arena greedy-by-size");
  CHECK(greedy.exit_code == 2);
  CHECK(greedy.err.find("--arena takes exact") != std::string::npos);
  const tool_run orphan = run_tool("order " + graph + " --algo kahn --arena-time-limit 3");
  CHECK(orphan.exit_code == 2);
  CHECK(orphan.err.find("need --arena exact") != std::string::npos);
  CHECK(run_tool("order " + graph + " --algo kahn --arena exact --arena-peak-slack -1").exit_code == 2);
}

TEST_CASE("memsched generate layout: a CSV that memsched layout reads and lays out") {
  const temp_dir s;
  const std::string csv = (s.path() / "r.csv").string();
  const json gen = run_tool_json("generate layout --buffers 3000 --seed 5 --alignment 8 --out " + csv);
  CHECK(gen["buffers"] == 3000);
  const memsched::layout_problem p = memsched::read_layout_csv(std::filesystem::path(csv));
  REQUIRE(p.buffers.size() == 3000);
  CHECK(p.buffers[0].alignment == 8);
  const json doc = run_tool_json("layout " + csv + " --node-limit 10000");
  CHECK(doc["valid"] == true);
  CHECK(doc["arena_bytes"].get<std::int64_t>() <= doc["greedy_bytes"].get<std::int64_t>());
  CHECK(doc["lower_bound"].get<std::int64_t>() >= doc["max_load"].get<std::int64_t>());
  const tool_run bad = run_tool("generate layout --buffers 10 --out " + (s.path() / "r.json").string());
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find(".csv") != std::string::npos);
  const tool_run range = run_tool("generate layout --buffers 10 --long-lived 2 --out " + csv);
  CHECK(range.exit_code != 0);
  CHECK(range.err.find("long-lived") != std::string::npos);
}
