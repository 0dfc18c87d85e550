#include <memsched/graph/json_io.hpp>
#include <memsched/graph/detail/json_graph.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/graph/write_graph.hpp>

#include "io_test_support.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <limits>
#include <string>
#include <vector>

using namespace memsched;
using namespace memsched::testing;
using nlohmann::json;

namespace {

// Nodes 7 -> 3 -> 12, 7 -> 12, ids not in order, with every optional field somewhere.
const char* const good = R"({
  "format": "memsched-graph", "version": 1, "name": "g", "kind": "training", "source": "hand",
  "nodes": [
    {"id": 7, "name": "x", "op": "input", "bytes": 100, "cost": 0, "extra": [1, 2]},
    {"id": 3, "op": "relu", "bytes": 40, "cost": 2.5, "workspace": 8},
    {"id": 12, "bytes": 0, "backward": true, "grad_of": 3}
  ],
  "edges": [[7, 3], [3, 12], [7, 12], [7, 3]],
  "inputs": [7], "loss_id": 3
})";

}  // namespace

TEST_CASE("parse_json_graph reads every field; ids keep their file values; duplicates merge") {
  const dataflow_graph g = parse_json_graph(good, "good.json");
  REQUIRE(num_vertices(g) == 3);
  CHECK(num_edges(g) == 3);  // [7, 3] twice: merged
  CHECK(g[boost::graph_bundle].name == "g");
  CHECK(g[boost::graph_bundle].kind == "training");
  CHECK(!g[boost::graph_bundle].outputs);  // default: the sinks
  CHECK(g[boost::graph_bundle].order.empty());
  // Vertices are numbered in file order.
  CHECK(g[0].id == 7);
  CHECK(g[0].name == "x");
  CHECK(g[0].op == "input");
  CHECK(g[0].bytes == 100);
  CHECK(g[0].cost == 0.0);
  CHECK(g[1].id == 3);
  CHECK(g[1].cost == 2.5);
  CHECK(g[1].workspace == 8);
  CHECK(g[1].name.empty());
  CHECK(g[2].id == 12);
  CHECK(g[2].cost == 1.0);  // default cost
  CHECK(g[2].role == node_role::backward);
  CHECK(g[2].grad_of == std::optional<std::int64_t>(3));
  CHECK(g[0].role == node_role::forward);
  CHECK(!g[0].grad_of);
  CHECK(edge(0, 1, g).second);
  CHECK(edge(1, 2, g).second);
  CHECK(edge(0, 2, g).second);
  CHECK(!edge(1, 0, g).second);
  const memory_graph m = make_memory_graph(g);
  CHECK(m.outputs().size() == 1);
  CHECK(m.is_output(2));
}

TEST_CASE("outputs and order are read by id, outputs merged") {
  const dataflow_graph g = parse_json_graph(R"({"nodes": [{"id": -5, "bytes": 1}, {"id": 9, "bytes": 2}, {"id": 4, "bytes": 3}],
      "edges": [[-5, 9], [-5, 4]], "outputs": [4, -5, 4], "order": [-5, 4, 9]})");
  REQUIRE(g[boost::graph_bundle].outputs);
  CHECK(*g[boost::graph_bundle].outputs == std::vector<std::size_t>{0, 2});
  CHECK(g[boost::graph_bundle].order == std::vector<std::size_t>{0, 2, 1});
  const dataflow_graph empty_outputs = parse_json_graph(R"({"nodes": [{"id": 1, "bytes": 1}], "outputs": []})");
  REQUIRE(empty_outputs[boost::graph_bundle].outputs);
  CHECK(empty_outputs[boost::graph_bundle].outputs->empty());
}

TEST_CASE("extreme values are exact: int64 ids and sizes, doubles") {
  const std::int64_t big = std::numeric_limits<std::int64_t>::max() - 10;
  json doc = {{"nodes",
               {{{"id", std::numeric_limits<std::int64_t>::min()}, {"bytes", big}, {"cost", 0.1}},
                {{"id", std::numeric_limits<std::int64_t>::max()}, {"bytes", 10}, {"cost", 1e-300}, {"workspace", 0}}}},
              {"edges", {{std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()}}}};
  const dataflow_graph g = parse_json_graph(doc.dump());
  CHECK(g[0].id == std::numeric_limits<std::int64_t>::min());
  CHECK(g[0].bytes == big);
  CHECK(g[1].id == std::numeric_limits<std::int64_t>::max());
  CHECK(g[1].cost == 1e-300);
  const dataflow_graph back = parse_json_graph(to_json(g).dump());
  CHECK(canonical(back) == canonical(g));
  CHECK(back[0].cost == 0.1);
}

TEST_CASE("to_json and write_json_graph round-trip every test graph exactly") {
  temp_dir dir;
  for (const auto& path : data_graphs()) {
    CAPTURE(path);
    const dataflow_graph g = read_json_graph(path);
    std::ifstream in(path);
    const json raw = json::parse(in);
    CHECK(num_vertices(g) == raw["nodes"].size());
    CHECK(num_edges(g) <= raw["edges"].size());
    CHECK(g[boost::graph_bundle].outputs.has_value() == raw.contains("outputs"));
    CHECK(g[boost::graph_bundle].order.size() == (raw.contains("order") ? raw["order"].size() : 0));
    for (std::size_t i = 0; i < num_vertices(g); ++i) {
      CHECK(g[i].id == raw["nodes"][i]["id"].get<std::int64_t>());
      CHECK(g[i].bytes == raw["nodes"][i]["bytes"].get<std::int64_t>());
      CHECK(g[i].cost == raw["nodes"][i].value("cost", 1.0));
    }
    const auto copy = dir / "copy.json";
    write_json_graph(copy, g);
    const dataflow_graph back = read_json_graph(copy);
    CHECK(canonical(back) == canonical(g));
    CHECK(to_json(back) == to_json(g));  // same vertex numbering too
    // The own writer writes what nlohmann's dump(1) of to_json wrote before it, byte for byte.
    std::ifstream written(copy, std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(written)), std::istreambuf_iterator<char>());
    CHECK(text == to_json(g).dump(1) + "\n");
  }
}

TEST_CASE("the own writer formats doubles and strings as nlohmann does") {
  // Costs across the ranges of nlohmann's number format (fixed, ".0" for integers, small, exponent).
  const std::vector<double> costs{0.0, -0.0, 1.0, 0.1, 1.5, 100000.0, 123456789012345.0, 1e15, 1e16, 1e20, 1.5e200, 0.001, 1e-4,
                                  1e-5, 1.25e-7, 2.0 / 3.0, 5e-324, 1.7976931348623157e308, 4503599627370497.0, 0.30000000000000004};
  dataflow_graph g;
  for (std::size_t i = 0; i < costs.size(); ++i) {
    const auto v = add_vertex(g);
    g[v].id = static_cast<std::int64_t>(i);
    g[v].bytes = static_cast<std::int64_t>(i) * 1000;
    g[v].cost = costs[i];
    g[v].name = i % 2 ? "tab\there \"quoted\" back\\slash \x01 caf\xC3\xA9" : "";
  }
  add_edge(0, 1, g);
  temp_dir dir;
  write_json_graph(dir / "c.json", g);
  std::ifstream written(dir / "c.json", std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(written)), std::istreambuf_iterator<char>());
  CHECK(text == to_json(g).dump(1) + "\n");
  const dataflow_graph back = read_json_graph(dir / "c.json");
  for (std::size_t i = 0; i < costs.size(); ++i) {
    CAPTURE(costs[i]);
    CHECK(back[i].cost == costs[i]);
    CHECK(back[i].name == g[i].name);
  }
}

TEST_CASE("roles: the role field, the legacy forms, and what the writer writes") {
  const dataflow_graph g = parse_json_graph(R"({"nodes": [
    {"id": 1, "bytes": 1},
    {"id": 2, "bytes": 1, "role": "forward", "op": "loss"},
    {"id": 3, "bytes": 1, "op": "loss"},
    {"id": 4, "bytes": 1, "backward": true},
    {"id": 5, "bytes": 1, "grad_of": 1},
    {"id": 6, "bytes": 1, "backward": false, "grad_of": 1},
    {"id": 7, "bytes": 1, "role": "backward", "grad_of": 2},
    {"id": 8, "bytes": 1, "role": "loss", "op": "cross_entropy", "backward": true},
    {"id": 9, "bytes": 1, "role": "backward", "op": "loss"},
    {"id": 10, "bytes": 1, "backward": false}]})",
                                            "roles.json");
  const std::vector<node_role> expected{node_role::forward,  node_role::forward,  node_role::loss,
                                        node_role::backward, node_role::backward, node_role::backward,
                                        node_role::backward, node_role::loss,     node_role::backward,
                                        node_role::forward};
  REQUIRE(num_vertices(g) == expected.size());
  for (std::size_t v = 0; v < expected.size(); ++v) {
    CAPTURE(v);
    CHECK(g[v].role == expected[v]);
  }
  const memory_graph m = make_memory_graph(g);
  CHECK(m.all_roles() == expected);
  CHECK(m.grad_of(4) == std::optional<std::size_t>(0));
  CHECK(m.grad_of(6) == std::optional<std::size_t>(1));  // id 2 is forward: op "loss" does not override an explicit role

  // The writer spells the role out when it is not forward, and for the forward node whose op "loss"
  // would otherwise read as the loss; never the legacy `backward`.
  const json doc = to_json(g);
  for (std::size_t v = 0; v < expected.size(); ++v) {
    CAPTURE(v);
    const json& n = doc["nodes"][v];
    CHECK(!n.contains("backward"));
    if (expected[v] != node_role::forward || g[v].op == "loss") {
      REQUIRE(n.contains("role"));
      CHECK(n["role"] == std::string(to_string(expected[v])));
    } else {
      CHECK(!n.contains("role"));
    }
  }
  const dataflow_graph back = parse_json_graph(doc.dump());
  CHECK(canonical(back) == canonical(g));
  CHECK(to_json(back) == doc);
}

TEST_CASE("inplace: read when true or false (null: an error), written only when true, kept by memory_graph") {
  CHECK_THROWS_WITH_AS((void)parse_json_graph(R"({"nodes": [{"id": 4, "bytes": 8, "inplace": null}]})", "n.json"),
                       "n.json: node 4: inplace is null: give a value or leave the field out", file_error);
  const dataflow_graph g = parse_json_graph(R"({"nodes": [
    {"id": 1, "bytes": 8}, {"id": 2, "bytes": 8, "op": "relu", "inplace": true}, {"id": 3, "bytes": 8, "inplace": false},
    {"id": 4, "bytes": 8}], "edges": [[1, 2], [2, 3], [3, 4]]})");
  CHECK(!g[0].inplace);
  CHECK(g[1].inplace);
  CHECK(!g[2].inplace);
  CHECK(!g[3].inplace);
  const memory_graph m = make_memory_graph(g);
  CHECK(m.has_inplace());
  CHECK(m.inplace(1));
  CHECK(!m.inplace(0));
  CHECK(!m.inplace(2));
  const json doc = to_json(g);
  CHECK(doc["nodes"][1]["inplace"] == true);
  for (std::size_t i : {0, 2, 3}) CHECK(!doc["nodes"][i].contains("inplace"));
  temp_dir dir;
  write_json_graph(dir / "g.json", g);
  std::ifstream written(dir / "g.json", std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(written)), std::istreambuf_iterator<char>());
  CHECK(text == doc.dump(1) + "\n");  // the own writer puts the key where nlohmann sorts it
  const dataflow_graph back = parse_json_graph(text);
  CHECK(canonical(back) == canonical(g));
  // write_graph of a memory_graph (no bundles) keeps the flag too.
  write_graph(dir / "m.json", m);
  CHECK(make_memory_graph(read_json_graph(dir / "m.json")).data().inplace == m.data().inplace);
  // A graph without in-place nodes writes no key at all.
  CHECK(!contains(to_json(parse_json_graph(R"({"nodes": [{"id": 1, "bytes": 1, "inplace": false}]})")).dump(), "inplace"));
  for (std::uint64_t seed = 0; seed < 8; ++seed) {
    const dataflow_graph r = round_trip_graph(seed);
    CHECK(canonical(parse_json_graph(to_json(r).dump())) == canonical(r));
    CHECK(detail::json_graph_text(r) == to_json(r).dump(1));
  }
}

TEST_CASE("every test graph reads with the forward set of the legacy rule (not backward, no grad_of, op not loss)") {
  std::size_t training = 0;
  for (const auto& path : data_graphs()) {
    CAPTURE(path);
    const dataflow_graph g = read_json_graph(path);
    std::ifstream in(path);
    const json raw = json::parse(in);
    const memory_graph m = make_memory_graph(g);
    bool any_backward = false;
    for (std::size_t i = 0; i < num_vertices(g); ++i) {
      const json& n = raw["nodes"][i];
      const bool legacy_forward = !n.value("backward", false) && !n.contains("grad_of") && n.value("op", std::string()) != "loss";
      CHECK(m.is_forward(i) == legacy_forward);
      CHECK((g[i].role == node_role::forward) == legacy_forward);
      if (n.contains("grad_of")) CHECK(m.grad_of(i).has_value());
      any_backward = any_backward || !legacy_forward;
    }
    CHECK(m.has_training_roles() == any_backward);
    training += any_backward;
  }
  CHECK(training >= 5);
}

TEST_CASE("every bad JSON input gives one file_error naming the file and the field or node") {
  struct bad_case {
    const char* text;
    const char* expected;  // a fragment of the message
  };
  const std::string max = std::to_string(std::numeric_limits<std::int64_t>::max());
  const std::string half = std::to_string(std::numeric_limits<std::int64_t>::max() / 2 + 1);
  const std::vector<bad_case> cases = {
      {"", "not valid JSON"},
      {"{\"nodes\": [", "not valid JSON"},
      {"nodes: []", "not valid JSON"},
      {"[1, 2]", "top level must be a JSON object"},
      {"{}", "missing field 'nodes'"},
      {R"({"nodes": 3})", "'nodes' must be an array of node objects, got a number"},
      {R"({"nodes": []})", "no nodes"},
      {R"({"nodes": [5]})", "nodes[0] must be an object"},
      {R"({"nodes": [{"bytes": 1}]})", "nodes[0]: missing field 'id'"},
      {R"({"nodes": [{"id": "a", "bytes": 1}]})", "nodes[0].id: node id must be an integer, got \"a\""},
      {R"({"nodes": [{"id": 1.5, "bytes": 1}]})", "nodes[0].id: node id must be an integer"},
      {R"({"nodes": [{"id": 18446744073709551615, "bytes": 1}]})", "does not fit in 64 bits"},
      {R"({"nodes": [{"id": 1, "bytes": 1}, {"id": 1, "bytes": 2}]})", "nodes[1]: duplicate node id 1"},
      {R"({"nodes": [{"id": 1, "bytes": 1}, {"id": 2}]})", "node 2: missing field 'bytes'"},
      {R"({"nodes": [{"id": 1, "bytes": -1}]})", "node 1: bytes must be >= 0, got -1"},
      {R"({"nodes": [{"id": 1, "bytes": 1.5}]})", "node 1: bytes must be an integer >= 0, got 1.5"},
      {R"({"nodes": [{"id": 1, "bytes": 1e3}]})", "node 1: bytes must be an integer >= 0"},
      {R"({"nodes": [{"id": 1, "bytes": "12"}]})", "node 1: bytes must be an integer >= 0, got \"12\""},
      {R"({"nodes": [{"id": 1, "bytes": null}]})", "node 1: bytes must be an integer >= 0, got null"},
      {R"({"nodes": [{"id": 1, "bytes": 18446744073709551615}]})", "node 1: bytes = 18446744073709551615 does not fit in 64 bits"},
      {R"({"nodes": [{"id": 1, "bytes": 99999999999999999999}]})", "node 1: bytes = 1e+20 does not fit in 64 bits"},  // out of range, not "not an integer"
      {R"({"nodes": [{"id": 1, "bytes": 1, "cost": 1e-400}]})", "node 1: cost is out of the range of double (nonzero, but it would read as 0)"},
      {R"({"nodes": [{"id": 1, "bytes": 1, "cost": null}]})", "node 1: cost is null: give a value or leave the field out"},
      {R"({"nodes": [{"id": 1, "bytes": 1, "workspace": -4}]})", "node 1: workspace must be >= 0, got -4"},
      {R"({"nodes": [{"id": 1, "bytes": 1, "workspace": 0.5}]})", "node 1: workspace must be an integer >= 0"},
      {R"({"nodes": [{"id": 1, "bytes": 1, "cost": -1}]})", "node 1: cost must be a finite number >= 0"},
      {R"({"nodes": [{"id": 1, "bytes": 1, "cost": "fast"}]})", "node 1: cost must be a number >= 0, got \"fast\""},
      {R"({"nodes": [{"id": 1, "bytes": 1, "name": 5}]})", "node 1: name must be a string, got 5"},
      {R"({"nodes": [{"id": 1, "bytes": 1, "op": []}]})", "node 1: op must be a string, got []"},
      {R"({"nodes": [{"id": 1, "bytes": 1, "backward": "yes"}]})", "node 1: backward must be true or false"},
      {R"({"nodes": [{"id": 1, "bytes": 1, "role": "grad"}]})", "node 1: role must be \"forward\", \"backward\" or \"loss\", got \"grad\""},
      {R"({"nodes": [{"id": 1, "bytes": 1, "role": 1}]})", "node 1: role must be \"forward\", \"backward\" or \"loss\", got 1"},
      {R"({"nodes": [{"id": 1, "bytes": 1, "role": "forward", "backward": true}]})", "node 1: role 'forward' conflicts with backward = true"},
      {R"({"nodes": [{"id": 1, "bytes": 1}, {"id": 2, "bytes": 1, "role": "forward", "grad_of": 1}]})",
       "node 2: role 'forward' conflicts with grad_of = 1 (a gradient is not forward)"},
      {R"({"nodes": [{"id": 1, "bytes": 1, "role": "backward", "backward": false}]})", "node 1: role 'backward' conflicts with backward = false"},
      {R"({"nodes": [{"id": 1, "bytes": 1, "role": "loss", "backward": false}]})", "node 1: role 'loss' conflicts with backward = false"},
      {R"({"nodes": [{"id": 1, "bytes": 1, "op": "loss"}, {"id": 2, "bytes": 1, "grad_of": 1}]})",
       "node 2: grad_of = 1 names a loss node; a gradient is of a forward node"},
      {R"({"nodes": [{"id": 1, "bytes": 1, "backward": true}, {"id": 2, "bytes": 1, "grad_of": 1}]})",
       "node 2: grad_of = 1 names a backward node"},
      {R"({"nodes": [{"id": 1, "bytes": 1, "grad_of": 2}]})", "node 1: grad_of: unknown node id 2"},
      {R"({"nodes": [{"id": 1, "bytes": 1, "grad_of": "x"}]})", "node 1: grad_of: node id must be an integer"},
      {R"({"nodes": [{"id": 1, "bytes": 1, "inplace": 3}]})", "node 1: inplace must be true or false, got 3"},
      {R"({"nodes": [{"id": 1, "bytes": 1}, {"id": 2, "bytes": 1, "inplace": "yes"}]})",
       "node 2: inplace must be true or false, got \"yes\""},
      {R"({"name": 3, "nodes": [{"id": 1, "bytes": 1}]})", "name must be a string, got 3"},
      {R"({"nodes": [{"id": 1, "bytes": 1}], "edges": {}})", "'edges' must be an array"},
      {R"({"nodes": [{"id": 1, "bytes": 1}], "edges": [[1]]})", "edges[0] must be a [producer, consumer] pair, got [1]"},
      {R"({"nodes": [{"id": 1, "bytes": 1}], "edges": [[1, 2, 3]]})", "edges[0] must be a [producer, consumer] pair"},
      {R"({"nodes": [{"id": 1, "bytes": 1}, {"id": 2, "bytes": 1}], "edges": [[1, 2], [2, 9]]})", "edges[1]: unknown node id 9"},
      {R"({"nodes": [{"id": 1, "bytes": 1}], "edges": [[1, "2"]]})", "edges[0]: node id must be an integer, got \"2\""},
      {R"({"nodes": [{"id": 1, "bytes": 1}, {"id": 2, "bytes": 1}], "edges": [[1, 2], [2, 2]]})", "edges[1]: self loop on node 2"},
      {R"({"nodes": [{"id": 1, "bytes": 1}], "outputs": 1})", "'outputs' must be an array of node ids"},
      {R"({"nodes": [{"id": 1, "bytes": 1}], "outputs": [1, 5]})", "outputs[1]: unknown node id 5"},
      {R"({"nodes": [{"id": 1, "bytes": 1}], "outputs": [true]})", "outputs[0]: node id must be an integer"},
      {R"({"nodes": [{"id": 1, "bytes": 1}], "order": "1"})", "'order' must be an array of node ids"},
      {R"({"nodes": [{"id": 1, "bytes": 1}, {"id": 2, "bytes": 1}], "order": [1]})", "order lists 1 of the 2 nodes"},
      {R"({"nodes": [{"id": 1, "bytes": 1}, {"id": 2, "bytes": 1}], "order": []})", "order lists 0 of the 2 nodes"},
      {R"({"nodes": [{"id": 1, "bytes": 1}, {"id": 2, "bytes": 1}], "order": [1, 1, 2]})", "order[1]: node 1 appears twice"},
      {R"({"nodes": [{"id": 1, "bytes": 1}, {"id": 2, "bytes": 1}], "order": [1, 3]})", "order[1]: unknown node id 3"},
      {R"({"nodes": [{"id": 1, "bytes": 1}, {"id": 2, "bytes": 1}], "edges": [[1, 2]], "order": [2, 1]})",
       "order[0]: node 2 comes before its input node 1"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    const std::string message = error_of([&] { return parse_json_graph(c.text, "bad.json"); });
    CHECK(starts_with(message, "bad.json: "));
    CHECK_MESSAGE(contains(message, c.expected), message);
  }
  // The graph's own string fields are named without a node prefix.
  CHECK(error_of([] { return parse_json_graph(R"({"name": 3, "nodes": []})", "bad.json"); }) == "bad.json: name must be a string, got 3");
  CHECK(error_of([] { return parse_json_graph(R"({"kind": {}, "nodes": []})", "bad.json"); }) == "bad.json: kind must be a string, got {}");
  // Sizes whose sum overflows 64 bits: each fits, the total does not.
  const std::string overflow =
      R"({"nodes": [{"id": 1, "bytes": )" + half + R"(}, {"id": 2, "bytes": 1}, {"id": 3, "bytes": )" + half + "}]}";
  const std::string message = error_of([&] { return parse_json_graph(overflow, "sum.json"); });
  CHECK(starts_with(message, "sum.json: node 3: "));
  CHECK(contains(message, "overflows 64 bits"));
  CHECK(contains(error_of([&] {
                   return parse_json_graph(R"({"nodes": [{"id": 1, "bytes": )" + max + R"(, "workspace": 1}]})", "ws.json");
                 }),
                 "ws.json: node 1: the sum of bytes and workspace over all nodes overflows 64 bits"));
}

TEST_CASE("a cycle is reported with a node on it") {
  // 0 -> 10 -> 20 -> 30 -> 10, 30 -> 40: the cycle is 10, 20, 30.
  const char* text = R"({"nodes": [{"id": 0, "bytes": 1}, {"id": 10, "bytes": 1}, {"id": 20, "bytes": 1},
      {"id": 30, "bytes": 1}, {"id": 40, "bytes": 1}], "edges": [[0, 10], [10, 20], [20, 30], [30, 10], [30, 40]]})";
  const std::string message = error_of([&] { return parse_json_graph(text, "cycle.json"); });
  CHECK(starts_with(message, "cycle.json: "));
  CHECK(contains(message, "cycle"));
  CHECK((contains(message, "node 10") || contains(message, "node 20") || contains(message, "node 30")));
  CHECK(!contains(message, "node 0 "));
  CHECK(!contains(message, "node 40"));
}

TEST_CASE("read_json_graph names the path; write_json_graph reports unwritable paths") {
  temp_dir dir;
  const auto missing = dir / "missing.json";
  const std::string message = error_of([&] { return read_json_graph(missing); });
  CHECK(starts_with(message, missing.string() + ": "));
  CHECK(contains(message, "cannot open"));
  const auto bad = dir.write("bad.json", R"({"nodes": [{"id": 1}]})");
  CHECK(error_of([&] { return read_json_graph(bad); }) == bad.string() + ": node 1: missing field 'bytes'");
  const dataflow_graph g = parse_json_graph(good);
  const auto unwritable = dir / "no_such_dir" / "g.json";
  CHECK(error_of([&] {
          write_json_graph(unwritable, g);
          return 0;
        }) == unwritable.string() + ": cannot open the file for writing");
}

TEST_CASE("nesting deeper than 256 levels is an error naming the line, wherever it is; brackets in strings do not count") {
  const std::string deep = R"({"nodes": [{"id": 1, "bytes": 1}],)" "\n\n" R"("extra": )" + std::string(300, '[') + std::string(300, ']') + "}";
  CHECK(error_of([&] { return parse_json_graph(deep, "deep.json"); }) == "deep.json: line 3: arrays and objects nested deeper than 256 levels");
  const std::string ok = R"({"nodes": [{"id": 1, "bytes": 1, "name": ")" + std::string(300, '[') + R"("}], "extra": )" +
                         std::string(255, '[') + std::string(255, ']') + "}";
  CHECK(num_vertices(parse_json_graph(ok)) == 1);
}

TEST_CASE("write_json_graph names itself in its errors") {
  dataflow_graph g = parse_json_graph(good);
  g[0].name = "\xC0\xAF";
  temp_dir dir;
  CHECK_THROWS_WITH_AS(write_json_graph(dir / "g.json", g), "write_json_graph: node 7: name is not valid UTF-8", graph_error);
  CHECK_THROWS_WITH_AS((void)to_json(g), "to_json: node 7: name is not valid UTF-8", graph_error);
}

TEST_CASE("to_json refuses outputs or order that are not vertices") {
  dataflow_graph g = parse_json_graph(good);
  g[boost::graph_bundle].outputs = std::vector<std::size_t>{7};
  CHECK_THROWS_AS((void)to_json(g), graph_error);
  g[boost::graph_bundle].outputs.reset();
  g[boost::graph_bundle].order = {0, 1, 3};
  CHECK_THROWS_AS((void)to_json(g), graph_error);
}

TEST_CASE("the JSON reader is strict (RFC 8259) and reads what nlohmann read") {
  const auto error_of = [](std::string_view text) {
    try {
      (void)parse_json_graph(text, "s.json");
    } catch (const file_error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const auto not_json = [&](std::string_view text) { return error_of(text).rfind("s.json: not valid JSON (", 0) == 0; };
  CHECK(not_json(std::string_view("{\"nodes\": []}\0x", 15)));  // nlohmann stopped at the NUL and accepted this
  CHECK(not_json(R"({"nodes": [],})"));
  CHECK(not_json(R"({"nodes": [1,]})"));
  CHECK(not_json(R"({"nodes": [{"id": 01, "bytes": 1}]})"));
  CHECK(not_json(R"({"nodes": [{"id": 1, "bytes": 1, "cost": NaN}]})"));
  CHECK(not_json(R"({"nodes": [{"id": 1, "bytes": 1, "cost": 1e400}]})"));
  CHECK(not_json(R"({"nodes": [{"id": 1, "bytes": 1, "cost": .5}]})"));
  CHECK(not_json(R"({"nodes": [{"id": 1, "bytes": 1, "cost": 1.}]})"));
  CHECK(not_json(R"({"nodes": [{"id": 1, "bytes": 1, "cost": +1}]})"));
  CHECK(not_json(R"({"nodes": []} /* comment */)"));
  CHECK(not_json(R"({'nodes': []})"));
  CHECK(not_json(R"({"nodes": [{"id": 1, "bytes": 1, "name": "\ud800"}]})"));   // a lone high surrogate
  CHECK(not_json(R"({"nodes": [{"id": 1, "bytes": 1, "name": "\udc00x"}]})"));  // a lone low surrogate
  CHECK(not_json(R"({"nodes": [{"id": 1, "bytes": 1, "name": "\x"}]})"));
  CHECK(not_json("{\"nodes\": [{\"id\": 1, \"bytes\": 1, \"name\": \"a\tb\"}]}"));      // a raw control character
  CHECK(not_json("{\"nodes\": [{\"id\": 1, \"bytes\": 1, \"name\": \"\xC0\xAF\"}]}"));  // overlong UTF-8
  CHECK(not_json("{\"nodes\": [{\"id\": 1, \"bytes\": 1, \"name\": \"\xED\xA0\x80\"}]}"));  // a UTF-8 surrogate
  CHECK(not_json("{\"nodes\": [{\"id\": 1, \"bytes\": 1, \"name\": \"\xF4\x90\x80\x80\"}]}"));  // above U+10FFFF
  CHECK(error_of("{\"nodes\": [\n{\"id\": 1,\n \"bytes\": 1,,}]}").find("line 3") != std::string::npos);
  // Accepted: a byte order mark, escapes and surrogate pairs, a number below double's range (0) in
  // a field memsched ignores (a cost is refused: the graph readers' rule).
  const dataflow_graph g = parse_json_graph(
      "\xEF\xBB\xBF{\"nodes\": [{\"id\": -0, \"bytes\": 0, \"tiny\": 1e-400, \"cost\": 0e-400, \"name\": \"\\ud83d\\ude00 \\u00e9\\/\\\"\\n\", \"op\": \"\xE2\x82\xAC\"}]}");
  CHECK(g[0].id == 0);
  CHECK(g[0].cost == 0.0);
  CHECK(g[0].name == "\xF0\x9F\x98\x80 \xC3\xA9/\"\n");
  CHECK(g[0].op == "\xE2\x82\xAC");
  // Messages show values as nlohmann's dump() did.
  CHECK(error_of(R"({"nodes": [{"id": 1, "bytes": 1e3}]})") == "s.json: node 1: bytes must be an integer >= 0, got 1000.0");
  CHECK(error_of(R"({"nodes": [{"id": 1, "bytes": [1, {"b": true, "a": null}]}]})") ==
        R"(s.json: node 1: bytes must be an integer >= 0, got [1,{"a":null,"b":true}])");
}
