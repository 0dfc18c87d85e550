// `memsched info`: runs the built tool (MEMSCHED_TOOL_PATH) and checks its JSON against the library.

#include <memsched/graph/memory_graph.hpp>
#include <memsched/graph/read_graph.hpp>
#include <memsched/order/kahn.hpp>
#include <memsched/order/peak_lower_bound.hpp>
#include <memsched/sim/simulate_order.hpp>

#include "../graph/io_test_support.hpp"

#include "../support/run_tool.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

using namespace memsched;
using namespace memsched::testing;
using nlohmann::json;

namespace {


/// Checks the --json output of `memsched info` for `path` against the library's own numbers.
json check_info(const std::filesystem::path& path, const temp_dir& dir) {
  const tool_run r = run_tool("info " + path.string() + " --json", dir);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  // One JSON object on one line.
  REQUIRE(!r.out.empty());
  CHECK(r.out.back() == '\n');
  CHECK(r.out.find('\n') == r.out.size() - 1);
  const json doc = json::parse(r.out);
  REQUIRE(doc.is_object());

  const dataflow_graph g = read_graph(path);
  const memory_graph m = make_memory_graph(g);
  std::size_t sources = 0, sinks = 0;
  std::int64_t total = 0;
  for (std::size_t v = 0; v < m.size(); ++v) {
    sources += m.in_degree(v) == 0;
    sinks += m.out_degree(v) == 0;
    total += m.bytes(v);
  }
  CHECK(doc["file"] == path.string());
  CHECK(doc["name"] == g[boost::graph_bundle].name);
  CHECK(doc["kind"] == g[boost::graph_bundle].kind);
  CHECK(doc["nodes"] == num_vertices(g));
  CHECK(doc["edges"] == num_edges(g));
  CHECK(doc["sources"] == sources);
  CHECK(doc["sinks"] == sinks);
  CHECK(doc["outputs"] == m.outputs().size());
  CHECK(doc["total_bytes"] == total);
  CHECK(doc["lower_bound"] == peak_lower_bound(g));
  if (g[boost::graph_bundle].order.empty())
    CHECK(!doc.contains("order_peak"));
  else {
    REQUIRE(doc.contains("order_peak"));
    CHECK(doc["order_peak"] == order_peak(m, g[boost::graph_bundle].order));
  }
  REQUIRE(doc["baselines"].is_object());
  CHECK(doc["baselines"]["kahn"] == kahn_order(g).peak_bytes);
  for (const auto& [name, peak] : doc["baselines"].items()) {
    CAPTURE(name);
    CHECK((name == "kahn" || name == "dfs" || name == "greedy"));
    CHECK(peak.get<std::int64_t>() >= doc["lower_bound"].get<std::int64_t>());
    CHECK(peak.get<std::int64_t>() <= m.total_bytes());
  }
  return doc;
}

}  // namespace

TEST_CASE("memsched info --json agrees with the library on every test graph") {
  temp_dir dir;
  for (const auto& path : data_graphs()) {
    CAPTURE(path);
    (void)check_info(path, dir);
  }
}

TEST_CASE("memsched info gives the same numbers for the JSON, GraphML and DOT files of a graph") {
  temp_dir dir;
  const auto source = std::filesystem::path(MEMSCHED_TEST_DATA_DIR) / "moccasin" / "random_layered_n100.json";
  const dataflow_graph g = read_graph(source);
  write_graph(dir / "g.graphml", g);
  write_graph(dir / "g.dot", g);
  json a = check_info(source, dir), b = check_info(dir / "g.graphml", dir), c = check_info(dir / "g.dot", dir);
  a.erase("file");
  b.erase("file");
  c.erase("file");
  CHECK(a == b);
  CHECK(a == c);
  // A hand-checked graph: 1 -> 2 -> 3, 1 -> 3; bytes 10, 20, 5, workspace 7 on 3.
  const auto small = dir.write("small.json", R"({"name": "s", "nodes": [{"id": 1, "bytes": 10}, {"id": 2, "bytes": 20},
      {"id": 3, "bytes": 5, "workspace": 7}], "edges": [[1, 2], [2, 3], [1, 3]]})");
  const json s = check_info(small, dir);
  CHECK(s["nodes"] == 3);
  CHECK(s["edges"] == 3);
  CHECK(s["sources"] == 1);
  CHECK(s["sinks"] == 1);
  CHECK(s["outputs"] == 1);
  CHECK(s["total_bytes"] == 35);
  CHECK(s["total_workspace"] == 7);
  CHECK(s["lower_bound"] == 42);        // running 3: 10 + 20 + 5 + 7
  CHECK(s["baselines"]["kahn"] == 42);  // the only order
}

TEST_CASE("memsched info: readable summary, --help, and errors on stderr with a non-zero exit") {
  temp_dir dir;
  const auto good = dir.write("g.json", R"({"name": "two", "nodes": [{"id": 1, "bytes": 1000}, {"id": 2, "bytes": 3000}], "edges": [[1, 2]]})");
  const tool_run text = run_tool("info " + good.string(), dir);
  CHECK(text.exit_code == 0);
  CHECK(contains(text.out, "two"));
  CHECK(contains(text.out, "nodes"));
  CHECK(contains(text.out, "4,000"));  // total bytes
  CHECK(contains(text.out, "kahn"));

  const tool_run help = run_tool("info --help", dir);
  CHECK(help.exit_code == 0);
  CHECK(contains(help.out, "usage: memsched info GRAPH"));

  const auto bad = dir.write("bad.json", R"({"nodes": [{"id": 1, "bytes": 1}, {"id": 2}]})");
  const tool_run r = run_tool("info " + bad.string() + " --json", dir);
  CHECK(r.exit_code == 1);
  CHECK(r.out.empty());
  CHECK(contains(r.err, bad.string() + ": node 2: missing field 'bytes'"));

  const auto cyclic = dir.write("cyclic.dot", "digraph { 1 [bytes=1]; 2 [bytes=1]; 1 -> 2 -> 1 }");
  const tool_run cycle = run_tool("info " + cyclic.string(), dir);
  CHECK(cycle.exit_code == 1);
  CHECK(contains(cycle.err, cyclic.string() + ": the graph has a cycle through node "));

  const auto missing = dir / "missing.graphml";
  const tool_run m = run_tool("info " + missing.string(), dir);
  CHECK(m.exit_code == 1);
  CHECK(contains(m.err, missing.string() + ": cannot open"));

  const auto unknown = dir.write("g.txt", "{}");
  const tool_run u = run_tool("info " + unknown.string(), dir);
  CHECK(u.exit_code == 1);
  CHECK(contains(u.err, "unknown graph file extension"));

  CHECK(run_tool("info", dir).exit_code == 2);
  CHECK(run_tool("info " + good.string() + " " + good.string(), dir).exit_code == 2);
  const tool_run option = run_tool("info " + good.string() + " --frobnicate", dir);
  CHECK(option.exit_code == 2);
  CHECK(contains(option.err, "unknown option --frobnicate"));
}
