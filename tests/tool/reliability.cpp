// Issue 11 at the tool level: budgets through one parser, failed writes (files and stdout), graph
// --out in the format of its extension, generator options the reader would reject, caps, flags of
// another algorithm and a DOT file that would expand to millions of edges. Each case checks the
// exit code and the message, through popen as a user would run the tool.

#include <memsched/graph/read_graph.hpp>
#include <memsched/order/kahn.hpp>
#include <memsched/remat/checkpoint_plan.hpp>

#include "../graph/io_test_support.hpp"
#include "../support/run_tool.hpp"
#include "tool_test_support.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

using namespace memsched;
using namespace memsched::testing;
using nlohmann::json;


TEST_CASE("memsched: budgets are bytes in [0, 2^63) or finite percentages > 0, one rule everywhere") {
  const temp_dir s;
  const std::int64_t peak = checkpoint_all_plan(read_graph(training), unlimited_budget).peak_bytes;
  REQUIRE(peak > 0);
  for (const char* bad : {"nan%", "inf%", "1e20%", "0x10%", "-5%", "0%", "%", "1e-400%", "+5%", " 5%", "5%%", "5 %", "1e999%", "infinity%",
                          "-1", "abc", "99999999999999999999", "9223372036854775808", "1.5", "0x10", "1e6", "+5", "''"}) {
    CAPTURE(bad);
    const tool_run r = run_tool("remat " + training + " --algo checkpoint-all --budget '" + std::string(bad) + "'", s);
    CAPTURE(r.err);
    CHECK(r.exit_code == 2);
    const std::string shown = std::string(bad) == "''" ? "" : bad;
    CHECK(contains(r.err, "--budget must be a number of bytes >= 0 or a percentage like 90%, got '" + shown + "'"));
    if (shown.empty()) continue;  // an empty item of a --budgets list is skipped
    const tool_run sweep = run_tool("sweep " + training + " --algos checkpoint-all --budgets '100%," + shown + "'", s);
    CHECK(sweep.exit_code == 2);
    CHECK(contains(sweep.err, "--budgets must be a number of bytes >= 0 or a percentage like 90%, got '" + shown + "'"));
  }
  // What percentages and bytes mean: floor(pct / 100 * the no-remat peak); bytes as written.
  for (const auto& [text, bytes] : std::vector<std::pair<std::string, std::int64_t>>{
           {"100%", peak}, {"1e2%", peak}, {"50%", static_cast<std::int64_t>(0.5 * static_cast<double>(peak))},
           {"12.5%", static_cast<std::int64_t>(0.125 * static_cast<double>(peak))}, {"250%", static_cast<std::int64_t>(2.5 * static_cast<double>(peak))},
           {"0", 0}, {"9223372036854775807", 9223372036854775807LL}, {std::to_string(peak), peak}}) {
    CAPTURE(text);
    const tool_run r = run_tool("remat " + training + " --algo checkpoint-all --json --budget " + text, s);
    CHECK(r.exit_code == (bytes >= peak ? 0 : 2));  // checkpoint-all fits only from its own peak
    REQUIRE(!r.out.empty());
    CHECK(json::parse(r.out).at("budget") == bytes);
  }
  // order --algo serenity --budget takes bytes only (there is no reference peak for a percentage).
  const std::string g = s.write("g.json", chain).string();
  for (const char* bad : {"5%", "-1", "nan", "99999999999999999999", "1e3"}) {
    CAPTURE(bad);
    const tool_run r = run_tool("order " + g + " --algo serenity --budget " + bad, s);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "--budget must be a number of bytes >= 0, got '" + std::string(bad) + "'"));
  }
  const json ok = run_tool_json("order " + g + " --algo serenity --json --budget 30", s);
  CHECK(ok.at("peak_bytes") == 30);
}

TEST_CASE("memsched: a failed write exits 1 naming the file, <stdout> for standard output") {
  const temp_dir s;
  REQUIRE(std::filesystem::exists("/dev/full"));
  const std::string g = s.write("g.json", chain).string();
  struct item {
    std::string args, file;
  };
  const std::vector<item> items{
      {"order " + g + " --algo kahn --out /dev/full", "/dev/full"},
      {"order " + g + " --algo kahn --json > /dev/full", "<stdout>"},
      {"order " + g + " --algo serenity > /dev/full", "<stdout>"},
      {"remat " + training + " --algo checkpoint-all --budget 100% --out /dev/full", "/dev/full"},
      {"remat " + training + " --algo checkpoint-all --budget 100% > /dev/full", "<stdout>"},
      {"sweep " + training + " --algos checkpoint-all --num-budgets 2 --csv /dev/full", "/dev/full"},
      {"sweep " + training + " --algos checkpoint-all --num-budgets 2 > /dev/full", "<stdout>"},
      {"info " + g + " > /dev/full", "<stdout>"},
      {"simulate " + g + " --order " + s.write("o.json", "[1, 2, 3]").string() + " > /dev/full", "<stdout>"},
      {"train " + g + " > /dev/full", "<stdout>"},
      {"revolve --steps 10 --snaps 2 > /dev/full", "<stdout>"},
      {"generate darts --cells 2 --out " + (s / "d.json").string() + " > /dev/full", "<stdout>"},
  };
  for (const auto& it : items) {
    CAPTURE(it.args);
    const tool_run r = run_tool(it.args, s);
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "error: " + it.file + ": cannot write the file"));
  }
  // The same runs to a real file succeed (the failures above are the device's).
  CHECK(run_tool("sweep " + training + " --algos checkpoint-all --num-budgets 2 --csv " + (s / "x.csv").string(), s).exit_code == 0);
  CHECK(file_text(s / "x.csv").rfind("budget,algorithm,status,", 0) == 0);
}

TEST_CASE("memsched: every graph --out is written in the format of its extension") {
  const temp_dir s;
  const std::string unet = (data_dir / "torch" / "unet.inference.json").string();
  const dataflow_graph expected_rewrite = [&] {
    const tool_run r = run_tool("rewrite " + unet + " --out " + (s / "rw.json").string(), s);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    return read_graph(s / "rw.json");
  }();
  for (const char* ext : {".graphml", ".dot", ".gv"}) {
    CAPTURE(ext);
    const auto out = s / (std::string("rw") + ext);
    const tool_run r = run_tool("rewrite " + unet + " --out " + out.string(), s);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    const std::string text = file_text(out);
    CHECK(text.front() != '{');  // not JSON under another name
    CHECK(contains(text, std::string(ext) == ".graphml" ? "<graphml" : "digraph"));
    CHECK(canonical(read_graph(out)) == canonical(expected_rewrite));

    const auto trained = s / (std::string("t") + ext);
    REQUIRE(run_tool("train " + unet + " --out " + trained.string(), s).exit_code == 0);
    CHECK(canonical(read_graph(trained)) == canonical(read_graph(data_dir / "torch" / "unet.training.json")));

    const auto generated = s / (std::string("g") + ext);
    REQUIRE(run_tool("generate random-layered --nodes 40 --seed 4 --out " + generated.string(), s).exit_code == 0);
    REQUIRE(run_tool("generate random-layered --nodes 40 --seed 4 --out " + (s / "g.json").string(), s).exit_code == 0);
    CHECK(canonical(read_graph(generated)) == canonical(read_graph(s / "g.json")));
  }
  for (const char* cmd : {"rewrite " , "train ", "generate darts --cells 2 "}) {
    CAPTURE(cmd);
    const std::string input = std::string(cmd).rfind("generate", 0) == 0 ? "" : unet + " ";
    const tool_run r = run_tool(std::string(cmd) + input + "--out " + (s / "x.txt").string(), s);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "--out " + (s / "x.txt").string() + ": unknown graph file extension (expected .json, .graphml or .dot)"));
    CHECK(!std::filesystem::exists(s / "x.txt"));
  }
}

TEST_CASE("memsched generate: options the reader would reject and sizes beyond the caps are usage errors") {
  const temp_dir s;
  const std::string out = " --out " + (s / "g.json").string();
  struct item {
    std::string args, message;
  };
  const std::vector<item> items{
      {"random-layered --nodes 100 --max-bytes 9000000000000000000", "the graph's bytes could sum beyond 2^63 - 1"},
      {"random-layered --nodes 1000000 --max-bytes 10000000000000", "the graph's bytes could sum beyond 2^63 - 1"},
      {"random-layered --nodes 10000001", "more than 10,000,000 nodes"},
      // Within the node limit, the edges are bounded too (1,000,000 default nodes: ~17M edges,
      // several GB), before anything is built.
      {"random-layered --nodes 1000000", "edges, more than 20,000,000 (the edge limit of memsched generate)"},
      {"random-layered --nodes 100000 --width 0.6 --edge-density 1", "--nodes, --width, --width-variation and --edge-density could give up to"},
      {"randwire --nodes 3000000 --stages 1", "more than 10,000,000 nodes"},
      {"randwire --channels 1000000000000 --resolution 1000000", "the graph's bytes could sum beyond 2^63 - 1"},
      {"randwire --stages 80", "the graph's bytes could sum beyond 2^63 - 1"},
      {"darts --cells 1000000", "more than 10,000,000 nodes"},
      {"darts --channels 4000000000 --resolution 100000", "the graph's bytes could sum beyond 2^63 - 1"},
      {"random-layered --width nan", "--width must be a finite number"},
      {"random-layered --edge-density inf", "--edge-density must be a finite number"},
      {"randwire --p nan", "--p must be a finite number"},
  };
  for (const auto& it : items) {
    CAPTURE(it.args);
    const tool_run r = run_tool("generate " + it.args + out, s);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, it.message));
    CHECK(!std::filesystem::exists(s / "g.json"));
  }
  // Within the limits: the graph is written and reads back (the largest byte sizes that fit).
  const tool_run big = run_tool("generate random-layered --nodes 1000 --min-bytes 9000000000000000 --max-bytes 9000000000000000 --byte-step 1" + out, s);
  REQUIRE_MESSAGE(big.exit_code == 0, big.err);
  const dataflow_graph g = read_graph(s / "g.json");
  CHECK(num_vertices(g) == 1000);
  CHECK(g[0].bytes == 9000000000000000LL);
}

TEST_CASE("memsched sweep --num-budgets is capped at 10,000") {
  const temp_dir s;
  for (const char* bad : {"0", "-3", "10001", "1000000000000"}) {
    CAPTURE(bad);
    const tool_run r = run_tool("sweep " + training + " --num-budgets " + bad, s);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "--num-budgets must be in [1, 10000], got " + std::string(bad)));
  }
  CHECK(contains(run_tool("sweep --help", s).out, "at most 10000"));
}

TEST_CASE("memsched order/remat: --algo is required and flags of another algorithm are usage errors") {
  const temp_dir s;
  const std::string g = s.write("g.json", chain).string();
  const tool_run none = run_tool("order " + g, s);
  CHECK(none.exit_code == 2);
  CHECK(contains(none.err, "--algo is required"));
  CHECK(contains(none.err, "usage: memsched order GRAPH --algo NAME"));
  struct item {
    std::string args, message;
  };
  const std::vector<item> items{
      {"order " + g + " --algo kahn --budget 10", "--budget is not an option of --algo kahn (its own options: none)"},
      {"order " + g + " --algo greedy --time-limit 5", "--time-limit is not an option of --algo greedy"},
      {"order " + g + " --algo dfs --progress", "--progress is not an option of --algo dfs"},
      {"remat " + training + " --algo checkpoint-all --budget 100% --time-limit 5", "--time-limit is not an option of --algo checkpoint-all"},
      {"remat " + training + " --algo chen-sqrtn --budget 100% --snapshots 3", "--snapshots is not an option of --algo chen-sqrtn"},
      {"remat " + training + " --algo revolve --budget 100% --segment-bytes 3",
       "--segment-bytes is not an option of --algo revolve (its own options: --snapshots)"},
      {"remat " + training + " --algo best-heuristic --budget 100% --max-intervals 3", "--max-intervals is not an option of --algo best-heuristic"},
      {"remat " + training + " --budget 100%", "--algo is required"},
  };
  for (const auto& it : items) {
    CAPTURE(it.args);
    const tool_run r = run_tool(it.args, s);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, it.message));
  }
  // Each algorithm's own options still work.
  CHECK(run_tool("order " + g + " --algo serenity --budget 30 --time-limit 5", s).exit_code == 0);
  CHECK(run_tool("remat " + training + " --algo revolve --budget 100% --snapshots 3", s).exit_code == 0);
  CHECK(run_tool("remat " + training + " --algo ap-greedy --budget 100% --segment-bytes 1000", s).exit_code == 0);
}

TEST_CASE("memsched: a small DOT file whose subgraph edges expand to millions is a file error naming it") {
  const temp_dir s;
  std::string text = "digraph g { node [bytes = 1];\nsubgraph {";
  for (int v = 1; v <= 1100; ++v) text += std::to_string(v) + ' ';
  text += "} -> subgraph {";
  for (int v = 1101; v <= 2200; ++v) text += std::to_string(v) + ' ';
  text += "}\n}\n";
  const std::string path = s.write("pairs.dot", text).string();
  const tool_run r = run_tool("info " + path, s);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "error: " + path + ": line 2: edges between subgraphs expand to more than"));
}
