// A hostile user's inputs, second round: endless files, values a file cannot hold, silently dropped
// GraphML content, DOT names that do not read back, misleading messages and numbers, flags given
// twice, graphs that mix the passes, and a killed tool that must take its solver child with it and
// leave no partial file (write_file's own cases: tests/core/write_file.cpp). Each case runs the tool
// (through popen, as a user would) or the library function behind it and checks the exit code,
// the message and the files left.

#include <memsched/graph/detail/input_limits.hpp>
#include <memsched/graph/dot_io.hpp>
#include <memsched/graph/json_io.hpp>
#include <memsched/order/kahn.hpp>
#include <memsched/sim/simulate_order.hpp>

#include "../support/run_tool.hpp"
#include "tool_test_support.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using namespace memsched;
using namespace memsched::testing;
using nlohmann::json;

namespace {

/// A GraphML file of `body` (nodes and edges of one graph) with the bytes key.
std::string graphml(const std::string& graph_attributes, const std::string& body, const std::string& after = "") {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n"
         "<key id=\"b\" for=\"node\" attr.name=\"bytes\" attr.type=\"long\"/>\n"
         "<key id=\"c\" for=\"node\" attr.name=\"cost\" attr.type=\"double\"/>\n<graph" +
         graph_attributes + ">\n" + body + "</graph>\n" + after + "</graphml>\n";
}

}  // namespace

TEST_CASE("endless inputs: a device as a graph, order or plan path is refused at once; a pipe is read up to a cap") {
  const temp_dir s;
  const std::string g = s.write("g.json", chain).string();
  for (const std::string device : {"/dev/zero", "/dev/urandom"}) {
    CAPTURE(device);
    if (!std::filesystem::exists(device)) continue;
    // A graph path needs a graph extension: a link named like a graph file.
    const std::string json_link = (s / "endless.json").string(), dot_link = (s / "endless.dot").string();
    std::filesystem::remove(json_link);
    std::filesystem::remove(dot_link);
    std::filesystem::create_symlink(device, json_link);
    std::filesystem::create_symlink(device, dot_link);
    const std::vector<std::pair<std::string, std::string>> commands = {
        {"info " + json_link, json_link},
        {"order " + dot_link + " --algo kahn", dot_link},
        {"simulate " + g + " --order " + device, device},
        {"simulate " + g + " --plan " + device, device},
        {"remat " + g + " --algo dtr --budget 100% --order " + device, device}};
    for (const auto& [command, named] : commands) {
      CAPTURE(command);
      const tool_run r = run_tool(command, s);
      CHECK(r.exit_code == 1);
      CHECK(contains(r.err, named + ": is a device, not a regular file"));
    }
  }
  // A pipe (a shell's <(...)): read whole below the cap, refused past it, naming the file and the cap.
  ::signal(SIGPIPE, SIG_IGN);  // the writer below sees EPIPE when the reader stops at the cap
  const auto fifo = s / "pipe.json";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  auto feed = [&](std::size_t bytes) {
    return std::thread([&fifo, bytes] {
      const int fd = ::open(fifo.c_str(), O_WRONLY);
      if (fd < 0) return;
      const std::string block(4096, 'x');
      for (std::size_t left = bytes; left > 0;) {
        const ssize_t w = ::write(fd, block.data(), std::min(left, block.size()));
        if (w <= 0) break;
        left -= static_cast<std::size_t>(w);
      }
      ::close(fd);
    });
  };
  {
    std::thread writer = feed(50'000);
    const std::string text = detail::read_text_file(fifo, 100'000);
    writer.join();
    CHECK(text == std::string(50'000, 'x'));
  }
  {
    std::thread writer = feed(300'000);
    std::string message;
    try {
      (void)detail::read_text_file(fifo, 100'000);
    } catch (const file_error& e) {
      message = e.what();
    }
    writer.join();
    CHECK(message == fifo.string() + ": longer than 100000 bytes, the most read from a pipe or stream");
  }
}

TEST_CASE("train refuses what it cannot represent, a training graph, and writes nothing then; null is not a value") {
  const temp_dir s;
  const auto out = s / "t.json";
  // A gradient cost that overflows: 1e10 x 1e300.
  const std::string huge_cost = s.write("c.json", R"({"nodes": [{"id": 0, "bytes": 8, "cost": 1e300, "op": "input"},
    {"id": 1, "bytes": 8, "cost": 1e300}], "edges": [[0, 1]]})").string();
  const tool_run overflow = run_tool("train " + huge_cost + " --grad-cost-factor 1e10 --out " + out.string(), s);
  CHECK(overflow.exit_code == 1);
  CHECK(contains(overflow.err, "make_training_graph: the gradient of node 1 would cost 1e+10 x 1e+300, beyond the range of double"));
  CHECK(!std::filesystem::exists(out));
  const tool_run overflow_stdout = run_tool("train " + huge_cost + " --grad-cost-factor 1e10", s);
  CHECK(overflow_stdout.exit_code == 1);
  CHECK(!contains(overflow_stdout.out, "null"));
  // Factors that are not finite numbers >= 0 are usage errors.
  for (const char* bad : {"inf", "nan", "-1", "1e400", "-inf", "0x10", "+2"}) {
    CAPTURE(bad);
    const tool_run r = run_tool("train " + huge_cost + " --grad-cost-factor " + bad, s);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "--grad-cost-factor must be"));
  }
  // A factor of 1e308 on a cost of 1: finite gradients, but their sum overflows.
  const std::string small = s.write("s.json", R"({"nodes": [{"id": 1, "bytes": 8, "cost": 1, "op": "input"},
    {"id": 2, "bytes": 8, "cost": 1}, {"id": 3, "bytes": 8, "cost": 1}], "edges": [[1, 2], [2, 3]]})").string();
  const tool_run big_factor = run_tool("train " + small + " --grad-cost-factor 1e308 --out " + out.string(), s);
  CHECK(big_factor.exit_code == 1);
  CHECK(contains(big_factor.err, "the sum of costs over all vertices overflows to infinity"));
  CHECK(!std::filesystem::exists(out));
  // A node of 2^63 - 1 bytes: its gradient doubles the sum of bytes.
  const std::string huge_bytes = s.write("b.json", R"({"nodes": [{"id": 1, "bytes": 1, "op": "input"},
    {"id": 2, "bytes": 9223372036854775000}], "edges": [[1, 2]]})").string();
  const tool_run bytes = run_tool("train " + huge_bytes + " --out " + out.string(), s);
  CHECK(bytes.exit_code == 1);
  CHECK(contains(bytes.err, "the sum of bytes and workspace overflows 64 bits"));
  CHECK(!std::filesystem::exists(out));
  // What train writes, memsched reads: a plain graph round-trips through train and info.
  REQUIRE(run_tool("train " + small + " --out " + out.string(), s).exit_code == 0);
  CHECK(run_tool("info " + out.string(), s).exit_code == 0);
  // A training graph already has a loss and gradients: no second backward pass.
  const tool_run twice = run_tool("train " + out.string(), s);
  CHECK(twice.exit_code == 1);
  CHECK(contains(twice.err, "make_training_graph: the graph already has training roles"));
  const tool_run resnet = run_tool("train " + training, s);
  CHECK(resnet.exit_code == 1);
  CHECK(contains(resnet.err, "already has training roles"));
  // null where a value belongs is an error naming the node and the field, not "absent".
  for (const std::string field : {"cost", "workspace", "grad_of", "role", "name", "op", "inplace", "backward"}) {
    CAPTURE(field);
    const std::string g = s.write("null.json", R"({"nodes": [{"id": 1, "bytes": 8}, {"id": 2, "bytes": 8, ")" + field +
                                                   R"(": null}], "edges": [[1, 2]]})").string();
    const tool_run r = run_tool("info " + g, s);
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, g + ": node 2: " + field + " is null: give a value or leave the field out"));
  }
  for (const std::string field : {"edges", "outputs", "order", "name", "kind"}) {
    CAPTURE(field);
    const std::string g = s.write("null.json", R"({"nodes": [{"id": 1, "bytes": 8}], ")" + field + R"(": null})").string();
    const tool_run r = run_tool("info " + g, s);
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, g + ": " + field + " is null"));
  }
}

TEST_CASE("forward vertices that read the loss or a backward vertex: one error when the graph is read") {
  const temp_dir s;
  const std::string g = s.write("mixed.json", R"({"nodes": [{"id": 0, "bytes": 8}, {"id": 1, "bytes": 4, "op": "loss"},
    {"id": 2, "bytes": 8, "grad_of": 0}, {"id": 3, "bytes": 8}], "edges": [[0, 1], [1, 2], [2, 3]]})").string();
  for (const std::string command : {"info " + g, "remat " + g + " --algo checkpoint-all --budget 100%", "remat " + g + " --algo dtr --budget 100%",
                                    "order " + g + " --algo kahn", "train " + g}) {
    CAPTURE(command);
    const tool_run r = run_tool(command, s);
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, g + ": forward node 3 reads backward node 2; forward vertices must not depend on the loss or on backward vertices"));
  }
  const std::string loss = s.write("loss.json", R"({"nodes": [{"id": 0, "bytes": 8}, {"id": 1, "bytes": 4, "op": "loss"},
    {"id": 2, "bytes": 8}], "edges": [[0, 1], [1, 2]]})").string();
  const tool_run r = run_tool("info " + loss, s);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "forward node 2 reads loss node 1"));
  // The library's own graphs: the same rule wherever a memory_graph is built.
  memory_graph_data d{.num_nodes = 3, .edges = {{0, 1}, {1, 2}}, .bytes = {8, 4, 8}};
  d.roles = {node_role::forward, node_role::loss, node_role::forward};
  CHECK_THROWS_WITH_AS((void)memory_graph(d, "here"), "here: forward node 2 reads loss node 1; forward vertices must not depend on the loss or on backward vertices",
                       graph_error);
  d.roles[2] = node_role::backward;
  CHECK(memory_graph(d).has_training_roles());
}

TEST_CASE("rewrite refuses new node ids past 2^63 - 1 instead of wrapping onto existing ids") {
  const temp_dir s;
  auto graph_with_top_id = [](std::int64_t top) {
    // s -> x1, x2 -> concat -> conv2d y -> relu z: the concat -> conv rewrite adds partial convs.
    const std::int64_t b = top - 6;
    return R"({"nodes": [{"id": )" + std::to_string(b) + R"(, "bytes": 1, "op": "input"},
      {"id": )" + std::to_string(b + 1) + R"(, "bytes": 10, "cost": 100, "op": "conv2d"},
      {"id": )" + std::to_string(b + 2) + R"(, "bytes": 20, "cost": 100, "op": "conv2d"},
      {"id": )" + std::to_string(b + 3) + R"(, "bytes": 30, "cost": 6, "op": "concat"},
      {"id": )" + std::to_string(b + 4) + R"(, "bytes": 5, "cost": 600, "op": "conv2d"},
      {"id": )" + std::to_string(top) + R"(, "bytes": 5, "cost": 1, "op": "relu"}],
      "edges": [[)" + std::to_string(b) + "," + std::to_string(b + 1) + "], [" + std::to_string(b) + "," + std::to_string(b + 2) + "], [" +
           std::to_string(b + 1) + "," + std::to_string(b + 3) + "], [" + std::to_string(b + 2) + "," + std::to_string(b + 3) + "], [" +
           std::to_string(b + 3) + "," + std::to_string(b + 4) + "], [" + std::to_string(b + 4) + "," + std::to_string(top) + "]]}";
  };
  const auto out = s / "r.json";
  const std::string at_top = s.write("top.json", graph_with_top_id(9223372036854775807LL)).string();
  const tool_run r = run_tool("rewrite " + at_top + " --out " + out.string(), s);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "rewrite_identities: the new nodes need ids above the largest id 9223372036854775807, beyond 2^63 - 1"));
  CHECK(!std::filesystem::exists(out));
  // Room for the new ids: they follow the largest (the reader refuses duplicates).
  const std::int64_t top = 9223372036854775807LL - 100;
  const std::string below = s.write("below.json", graph_with_top_id(top)).string();
  const json doc = run_tool_json("rewrite " + below + " --out " + out.string() + " --json", s);
  CHECK(doc.at("concat_conv_rewrites") == 1);
  const dataflow_graph g = read_json_graph(out);
  std::size_t fresh = 0;
  for (std::size_t v = 0; v < num_vertices(g); ++v) {
    CHECK(g[v].id >= top - 6);
    fresh += g[v].id > top;
  }
  CHECK(fresh == 2);  // the two partial convolutions
}

TEST_CASE("GraphML content memsched cannot hold is an error, not dropped") {
  const temp_dir s;
  const std::string node_a = R"(<node id="1"><data key="b">8</data></node>)";
  const std::string node_b = R"(<node id="2"><data key="b">8</data></node>)";
  struct hostile {
    std::string name, text, message;
  };
  const std::vector<hostile> cases = {
      {"second", graphml(" edgedefault=\"directed\"", node_a, "<graph edgedefault=\"directed\">" + node_b + "</graph>\n"),
       "a second <graph> in <graphml>: memsched reads one graph per file"},
      {"hyper", graphml(" edgedefault=\"directed\"", node_a + node_b + R"(<hyperedge><endpoint node="1"/><endpoint node="2"/></hyperedge>)"),
       "a <hyperedge>: memsched graphs have plain edges"},
      {"nested", graphml(" edgedefault=\"directed\"", R"(<node id="1"><data key="b">8</data><graph id="inner" edgedefault="directed">)" + node_b +
                                                         "</graph></node>"),
       "a <graph> nested in <node id=\"1\">: memsched graphs are flat"},
      {"no_edgedefault", graphml("", node_a + node_b + R"(<edge source="1" target="2"/>)"),
       "the <graph> has no edgedefault attribute: write <graph edgedefault=\"directed\">"},
      {"tiny_cost", graphml(" edgedefault=\"directed\"", R"(<node id="1"><data key="b">8</data><data key="c">1e-400</data></node>)"),
       "node 0: cost = 1e-400 is out of the range of double"},  // without an id key, the ids are the file order
      {"huge_bytes", graphml(" edgedefault=\"directed\"", R"(<node id="1"><data key="b">123456789012345678901234567890</data></node>)"),
       "node 0: bytes = 123456789012345678901234567890 does not fit in 64 bits"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    const std::string path = s.write(c.name + ".graphml", c.text).string();
    const tool_run r = run_tool("info " + path, s);
    CHECK(r.exit_code == 1);
    CHECK_MESSAGE(contains(r.err, path + ": " + c.message), r.err);
  }
  // The same graph with edgedefault reads.
  const std::string fine = s.write("fine.graphml", graphml(" edgedefault=\"directed\"", node_a + node_b + R"(<edge source="1" target="2"/>)")).string();
  CHECK(run_tool("info " + fine, s).exit_code == 0);
}

TEST_CASE("messages say what is wrong: nodes of the wrong type, numbers out of range, an empty attribute") {
  const temp_dir s;
  struct hostile {
    std::string name, text, message;
  };
  const std::vector<hostile> cases = {
      {"obj.json", R"({"nodes": {"id": 1, "bytes": 8}})", "'nodes' must be an array of node objects, got an object"},
      {"str.json", R"({"nodes": "1"})", "'nodes' must be an array of node objects, got a string"},
      {"none.json", R"({"edges": []})", "missing field 'nodes'"},
      // The same cost is refused by every reader: a double cannot hold it (it would read as 0).
      {"tiny.json", R"({"nodes": [{"id": 1, "bytes": 8, "cost": 1e-400}]})", "node 1: cost is out of the range of double"},
      {"tiny.dot", "digraph { 1 [bytes=8, cost=\"1e-400\"] }", "node 1: cost = 1e-400 is out of the range of double"},
      // 30 digits: out of range, not "not an integer".
      {"big.json", R"({"nodes": [{"id": 1, "bytes": 123456789012345678901234567890}]})", "node 1: bytes = 1.2345678901234568e+29 does not fit in 64 bits"},
      {"bigw.json", R"({"nodes": [{"id": 1, "bytes": 1, "workspace": -123456789012345678901234567890}]})",
       "node 1: workspace = -1.2345678901234568e+29 does not fit in 64 bits"},
      {"bigid.json", R"({"nodes": [{"id": 123456789012345678901234567890, "bytes": 1}]})",
       "nodes[0].id: node id 1.2345678901234568e+29 does not fit in 64 bits"},
      {"big.dot", "digraph { 1 [bytes=123456789012345678901234567890] }", "node 1: bytes = 123456789012345678901234567890 does not fit in 64 bits"},
      // bytes="" is present but empty; no attribute at all is missing.
      {"empty.dot", "digraph { 1 [bytes=\"\"] }", "node 1: bytes must be an integer >= 0, got ''"},
      {"missing.dot", "digraph { 1 [cost=1] }", "node 1: missing attribute 'bytes'"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    const std::string path = s.write(c.name, c.text).string();
    const tool_run r = run_tool("info " + path, s);
    CHECK(r.exit_code == 1);
    CHECK_MESSAGE(contains(r.err, path + ": " + c.message), r.err);
  }
  // A small cost a double holds (a subnormal) reads in every format.
  CHECK(run_tool("info " + s.write("sub.json", R"({"nodes": [{"id": 1, "bytes": 8, "cost": 1e-310}]})").string(), s).exit_code == 0);
  CHECK(run_tool("info " + s.write("zero.json", R"({"nodes": [{"id": 1, "bytes": 8, "cost": 0e-400}]})").string(), s).exit_code == 0);
  // hiremate on an inference graph: the tool's user needs `memsched train`.
  const std::string g = s.write("g.json", chain).string();
  const tool_run inference = run_tool("remat " + g + " --algo hiremate --budget 100%", s);
  CHECK(inference.exit_code == 1);
  CHECK(contains(inference.err, "make one with `memsched train GRAPH --out TRAINING.json`"));
}

TEST_CASE("flags: one checked parser for numbers (finite, in range, out of range said so); a repeated option is refused") {
  const temp_dir s;
  const std::string g = s.write("g.json", chain).string();
  const tool_run lp = run_tool("remat " + g + " --algo checkmate-lp --budget 100% --gap 0.1", s);
  CHECK(lp.exit_code == 2);
  CHECK(contains(lp.err, "--gap is not an option of --algo checkmate-lp"));
  for (const std::string algo : {"checkmate-milp", "auto"}) {
    for (const char* bad : {"nan", "-1", "inf", "2", "1e400", "0x1", "''"}) {
      CAPTURE(algo);
      CAPTURE(bad);
      const tool_run r = run_tool("remat " + g + " --algo " + algo + " --budget 100% --gap " + bad, s);
      CHECK(r.exit_code == 2);
      CHECK(contains(r.err, "--gap must be"));
    }
  }
  // Every --seed is an integer >= 0 (moccasin's too), and a 64-bit overflow says "out of range".
  const tool_run negative = run_tool("remat " + g + " --algo moccasin --budget 100% --seed -1", s);
  CHECK(negative.exit_code == 2);
  CHECK(contains(negative.err, "--seed must not be negative, got -1"));
  const tool_run wide = run_tool("remat " + g + " --algo moccasin --budget 100% --seed 18446744073709551615", s);
  CHECK(wide.exit_code == 2);
  CHECK(contains(wide.err, "--seed = 18446744073709551615 is out of range"));
  const tool_run onchip = run_tool("simulate " + g + " --order " + g + " --onchip 9223372036854775808", s);
  CHECK(onchip.exit_code == 2);
  CHECK(contains(onchip.err, "--onchip = 9223372036854775808 is out of range"));
  for (const char* bad : {"0", "-2", "99999999999999999999999"}) {
    CAPTURE(bad);
    const tool_run r = run_tool("remat " + g + " --algo dtr --budget 100% --max-computations " + bad, s);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "--max-computations"));
  }
  // Repeated options, values or flags, spelled apart or with '=': refused, naming the option.
  for (const std::string args : {"--algo dtr --algo kahn", "--budget 10 --budget=20", "--json --json", "--out a.json --out b.json"}) {
    CAPTURE(args);
    const tool_run r = run_tool("remat " + g + " --algo checkpoint-all --budget 100% " + args, s);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "is given twice"));
  }
  const tool_run twice = run_tool("order " + g + " --algo kahn --algo dfs", s);
  CHECK(twice.exit_code == 2);
  CHECK(contains(twice.err, "option --algo is given twice"));
}

TEST_CASE("remat --order FILE reports the order's peak, as --order-from kahn does") {
  const temp_dir s;
  const auto order = s / "kahn.json";
  REQUIRE(run_tool("order " + training + " --algo kahn --out " + order.string(), s).exit_code == 0);
  const json from_file = run_tool_json("remat " + training + " --algo dtr --budget 100% --json --order " + order.string(), s);
  const json from_kahn = run_tool_json("remat " + training + " --algo dtr --budget 100% --json --order-from kahn", s);
  const dataflow_graph g = read_json_graph(training);
  const std::int64_t peak = order_peak(g, kahn_order(g).order);
  CHECK(peak > 0);
  CHECK(from_kahn.at("order_peak") == peak);
  CHECK(from_file.at("order_peak") == peak);
}

TEST_CASE("a plan that computes each vertex once has overhead exactly 0 and costs the graph's total, in any order") {
  const temp_dir s;
  // Three independent outputs; 0.1 + 0.2 + 0.3 in file order is 0.6000000000000001, in the plan's
  // order (0.3 + 0.2) + 0.1 = 0.6.
  const std::string g = s.write("g.json", R"({"nodes": [{"id": 1, "bytes": 1, "cost": 0.1}, {"id": 2, "bytes": 1, "cost": 0.2},
    {"id": 3, "bytes": 1, "cost": 0.3}], "edges": []})").string();
  const std::string plan = s.write("p.json", R"({"steps": [{"op": "compute", "node": 3}, {"op": "compute", "node": 2},
    {"op": "compute", "node": 1}]})").string();
  const json doc = run_tool_json("simulate " + g + " --plan " + plan + " --json", s);
  CHECK(doc.at("overhead").get<double>() == 0.0);
  CHECK(doc.at("total_cost").get<double>() == 0.1 + 0.2 + 0.3);
  // A recomputation still counts: node 3 twice costs 0.3 more.
  const std::string again = s.write("q.json", R"({"steps": [{"op": "compute", "node": 3}, {"op": "free", "node": 3},
    {"op": "compute", "node": 3}, {"op": "compute", "node": 2}, {"op": "compute", "node": 1}]})").string();
  const json twice = run_tool_json("simulate " + g + " --plan " + again + " --json", s);
  CHECK(twice.at("overhead").get<double>() == doctest::Approx(0.5));
  CHECK(twice.at("total_cost").get<double>() == doctest::Approx(0.9));
}

TEST_CASE("DOT: every name either reads back exactly or is refused by the writer") {
  const std::vector<std::string> nasty = {
      "plain", "a b", "a\\\nb", "a\\\r\nb", "a\\\\\nb", "\\\n", "a\nb", "a\r\nb", "a\\b", "a\\\\b", "\\n", "tab\there", "quote\"x", "a\\\"b",
      "\\", "x\\", "", "{", "}", "->", "--", "node", "strict", "x;y", "[", "]", "=", ",", "\x01", "caf\xc3\xa9", ".", "-.", "1e5", "-1", "+1",
      "a\"", "\"", "\"\"", "//", "/*", "#", "<html>", "a\\\n\\\nb", "\n", "\\\\\\\n"};
  std::size_t refused = 0, round_trips = 0;
  for (const std::string& name : nasty) {
    CAPTURE(name);
    dataflow_graph g(1);
    g[0].id = 7;
    g[0].bytes = 3;
    g[0].name = name;
    g[0].op = name;
    g[boost::graph_bundle].name = name;
    std::ostringstream out;
    try {
      write_dot_graph(out, g);
    } catch (const graph_error& e) {
      CHECK(contains(e.what(), "DOT cannot hold it"));
      ++refused;
      continue;
    }
    const dataflow_graph back = parse_dot_graph(out.str(), "nasty.dot");
    REQUIRE(num_vertices(back) == 1);
    CHECK(back[0].name == name);
    CHECK(back[0].op == name);
    CHECK(back[boost::graph_bundle].name == name);
    ++round_trips;
  }
  CHECK(round_trips > refused);  // the writer refuses only what DOT cannot hold
}

namespace {

/// The process ids whose parent is `parent` (from /proc).
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(stat.substr(close + 2));
    char state = 0;
    long ppid = 0;
    fields >> state >> ppid;
    if (ppid == parent) out.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return out;
}

/// Whether process `pid` has ended (gone, or a zombie nobody has reaped yet).
bool ended(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  if (!in) return true;
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = stat.rfind(')');
  return close == std::string::npos || close + 2 >= stat.size() || stat[close + 2] == 'Z' || stat[close + 2] == 'X';
}

#ifdef MEMSCHED_HAVE_CBC
constexpr bool have_cbc = true;
#else
constexpr bool have_cbc = false;
#endif

}  // namespace

TEST_CASE("a killed tool takes its solver child with it" * doctest::skip(!have_cbc || !std::filesystem::exists("/proc/self/stat"))) {
  const temp_dir s;
  const auto plan = s / "plan.json";
  for (const int sig : {SIGTERM, SIGINT}) {
    CAPTURE(sig);
    const pid_t tool = ::fork();
    REQUIRE(tool >= 0);
    if (tool == 0) {
      const int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, 1);
      ::dup2(null, 2);
      // A MILP CBC works on far longer than this test waits: the child is still solving when the tool is killed.
      ::execl(MEMSCHED_TOOL_PATH, MEMSCHED_TOOL_PATH, "remat", training.c_str(), "--algo", "checkmate-milp", "--backend", "cbc", "--budget",
              "55%", "--order-from", "kahn", "--time-limit", "300", "--out", plan.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    // Counted waits (10 ms polls): the child appears once the model is built; it must be gone soon
    // after the tool is killed.
    std::vector<pid_t> solver;
    for (int poll = 0; poll < 6000 && solver.empty(); ++poll) {
      int status = 0;
      if (::waitpid(tool, &status, WNOHANG) == tool) FAIL("the tool exited before its solver child started");
      solver = children_of(tool);
      if (solver.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    REQUIRE_MESSAGE(solver.size() == 1, "no solver child appeared");
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // let the child settle into CBC
    REQUIRE(::kill(tool, sig) == 0);
    int status = 0;
    REQUIRE(::waitpid(tool, &status, 0) == tool);
    CHECK(WIFSIGNALED(status));
    bool gone = false;
    for (int poll = 0; poll < 500 && !gone; ++poll) {
      gone = ended(solver[0]);
      if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    CHECK_MESSAGE(gone, "the solver child " << solver[0] << " outlived the killed tool");
    if (!gone) ::kill(solver[0], SIGKILL);
    // Nothing written: no plan, and no temporary file of one left behind.
    CHECK(std::filesystem::is_empty(plan.parent_path()));
  }
}
