#include <memsched/graph/graphml_io.hpp>
#include <memsched/graph/json_io.hpp>
#include <memsched/graph/memory_graph.hpp>

#include "../support/random_dag.hpp"
#include "io_test_support.hpp"

#include <doctest/doctest.h>

#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace memsched;
using namespace memsched::testing;

namespace {

using attributes = std::map<std::string, std::string>;

/// GraphML text: node i is "n<i>" with the given attributes (all declared as strings), edges by
/// node position.
std::string graphml(const std::vector<attributes>& nodes, const std::vector<std::pair<int, int>>& edges = {},
                    const attributes& graph_attributes = {}, const std::string& edgedefault = "directed") {
  std::ostringstream s;
  s << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n";
  std::map<std::string, int> keys;
  for (const auto& n : nodes)
    for (const auto& [k, v] : n) keys.emplace(k, 0);
  for (const auto& [k, v] : keys) s << "  <key id=\"k_" << k << "\" for=\"node\" attr.name=\"" << k << "\" attr.type=\"string\"/>\n";
  for (const auto& [k, v] : graph_attributes)
    s << "  <key id=\"g_" << k << "\" for=\"graph\" attr.name=\"" << k << "\" attr.type=\"string\"/>\n";
  s << "  <graph id=\"G\" edgedefault=\"" << edgedefault << "\">\n";
  for (const auto& [k, v] : graph_attributes) s << "    <data key=\"g_" << k << "\">" << v << "</data>\n";
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    s << "    <node id=\"n" << i << "\">";
    for (const auto& [k, v] : nodes[i]) s << "<data key=\"k_" << k << "\">" << v << "</data>";
    s << "</node>\n";
  }
  for (auto [u, v] : edges) s << "    <edge source=\"n" << u << "\" target=\"n" << v << "\"/>\n";
  s << "  </graph>\n</graphml>\n";
  return s.str();
}

std::string to_graphml(const dataflow_graph& g) {
  std::ostringstream s;
  write_graphml_graph(s, g);
  return s.str();
}

}  // namespace

TEST_CASE("a GraphML file from another tool: typed keys, defaults, unknown keys, no ids") {
  const std::string text = R"(<?xml version="1.0" encoding="UTF-8"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
  <key id="b" for="node" attr.name="bytes" attr.type="long"><default>64</default></key>
  <key id="c" for="node" attr.name="cost" attr.type="double"/>
  <key id="col" for="node" attr.name="color" attr.type="string"/>
  <key id="w" for="edge" attr.name="weight" attr.type="double"/>
  <key id="gn" for="graph" attr.name="name" attr.type="string"/>
  <graph id="G" edgedefault="directed">
    <data key="gn">foreign</data>
    <node id="input"><data key="b">1000</data><data key="c">0.25</data><data key="col">red</data></node>
    <node id="conv"><data key="b"> 2000 </data></node>
    <node id="out"/>
    <edge source="input" target="conv"><data key="w">3</data></edge>
    <edge source="conv" target="out"/>
    <edge source="input" target="out"/>
    <edge source="input" target="out"/>
  </graph>
</graphml>)";
  const dataflow_graph g = parse_graphml_graph(text, "foreign.graphml");
  REQUIRE(num_vertices(g) == 3);
  CHECK(num_edges(g) == 3);  // the parallel edge is merged
  CHECK(g[boost::graph_bundle].name == "foreign");
  CHECK(g[0].id == 0);  // no id attribute: numbered in file order
  CHECK(g[1].id == 1);
  CHECK(g[2].id == 2);
  CHECK(g[0].bytes == 1000);
  CHECK(g[0].cost == 0.25);
  CHECK(g[1].bytes == 2000);  // blanks around numbers are allowed
  CHECK(g[1].cost == 1.0);
  CHECK(g[2].bytes == 64);  // the key's default
  CHECK(!g[boost::graph_bundle].outputs);
  CHECK(g[boost::graph_bundle].order.empty());
}

TEST_CASE("GraphML round trip keeps every field exactly, with outputs and order") {
  const dataflow_graph original = parse_json_graph(R"({"name": "tricky <&> \"names\"", "kind": "training",
    "nodes": [
      {"id": -9223372036854775808, "name": "a & b <c> \"d\" 'e' \\ é ✓", "op": "input", "bytes": 9223300000000000000, "cost": 0.1},
      {"id": 42, "op": "relu", "bytes": 0, "cost": 0.3333333333333333, "workspace": 12345678901234, "backward": true, "grad_of": 7},
      {"id": 7, "bytes": 5, "cost": 5e300},
      {"id": 9223372036854775807, "bytes": 1, "cost": 1e-300, "grad_of": -9223372036854775808}],
    "edges": [[-9223372036854775808, 7], [7, 42], [-9223372036854775808, 42], [42, 9223372036854775807]],
    "outputs": [7, 9223372036854775807], "order": [-9223372036854775808, 7, 42, 9223372036854775807]})");
  const std::string text = to_graphml(original);
  CHECK(contains(text, "attr.name=\"bytes\" attr.type=\"long\""));
  CHECK(contains(text, "attr.name=\"cost\" attr.type=\"double\""));
  CHECK(contains(text, "attr.name=\"order_position\""));
  CHECK(contains(text, "attr.name=\"output\""));
  const dataflow_graph back = parse_graphml_graph(text);
  CHECK(canonical(back) == canonical(original));
  CHECK(to_json(back) == to_json(original));

  // Without explicit outputs, order or grad_of, those attributes are not written, and read back absent.
  const dataflow_graph plain = parse_json_graph(R"({"nodes": [{"id": 1, "bytes": 2}, {"id": 2, "bytes": 3}], "edges": [[1, 2]]})");
  const std::string plain_text = to_graphml(plain);
  CHECK(!contains(plain_text, "order_position"));
  CHECK(!contains(plain_text, "\"output\""));
  CHECK(!contains(plain_text, "grad_of"));
  const dataflow_graph plain_back = parse_graphml_graph(plain_text);
  CHECK(!plain_back[boost::graph_bundle].outputs);
  CHECK(plain_back[boost::graph_bundle].order.empty());
  CHECK(canonical(plain_back) == canonical(plain));

  // Explicit but empty outputs stay explicit and empty.
  dataflow_graph none = plain;
  none[boost::graph_bundle].outputs = std::vector<std::size_t>{};
  const dataflow_graph none_back = parse_graphml_graph(to_graphml(none));
  REQUIRE(none_back[boost::graph_bundle].outputs);
  CHECK(none_back[boost::graph_bundle].outputs->empty());
}

TEST_CASE("GraphML round trip of every test graph and of random graphs") {
  temp_dir dir;
  for (const auto& path : data_graphs()) {
    CAPTURE(path);
    const dataflow_graph g = read_json_graph(path);
    const auto file = dir / "g.graphml";
    write_graphml_graph(file, g);
    const dataflow_graph back = read_graphml_graph(file);
    CHECK(canonical(back) == canonical(g));
    CHECK(to_json(back) == to_json(g));
  }
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    const dataflow_graph g = round_trip_graph(seed);
    const dataflow_graph back = parse_graphml_graph(to_graphml(g));
    CHECK(canonical(back) == canonical(g));
  }
}

TEST_CASE("GraphML roles: the role attribute and the legacy forms; written as `role` only") {
  const dataflow_graph g = parse_graphml_graph(graphml({{{"id", "1"}, {"bytes", "1"}},
                                                         {{"id", "2"}, {"bytes", "1"}, {"op", "loss"}},
                                                         {{"id", "3"}, {"bytes", "1"}, {"backward", "true"}},
                                                         {{"id", "4"}, {"bytes", "1"}, {"grad_of", "1"}, {"backward", "0"}},
                                                         {{"id", "5"}, {"bytes", "1"}, {"role", "backward"}, {"grad_of", "1"}},
                                                         {{"id", "6"}, {"bytes", "1"}, {"role", "loss"}},
                                                         {{"id", "7"}, {"bytes", "1"}, {"role", "forward"}, {"op", "loss"}}}));
  const std::vector<node_role> expected{node_role::forward,  node_role::loss, node_role::backward, node_role::backward,
                                        node_role::backward, node_role::loss, node_role::forward};
  for (std::size_t v = 0; v < expected.size(); ++v) {
    CAPTURE(v);
    CHECK(g[v].role == expected[v]);
  }
  const std::string text = to_graphml(g);
  CHECK(contains(text, "attr.name=\"role\""));
  CHECK(!contains(text, "attr.name=\"backward\""));
  const dataflow_graph back = parse_graphml_graph(text);
  CHECK(canonical(back) == canonical(g));
  // A graph without roles writes no role attribute.
  CHECK(!contains(to_graphml(parse_graphml_graph(graphml({{{"id", "1"}, {"bytes", "1"}}}))), "role"));
}

TEST_CASE("GraphML inplace: a boolean key, written only when some node is in-place") {
  const dataflow_graph g = parse_graphml_graph(graphml({{{"id", "1"}, {"bytes", "4"}},
                                                         {{"id", "2"}, {"bytes", "4"}, {"inplace", "true"}},
                                                         {{"id", "3"}, {"bytes", "4"}, {"inplace", "0"}},
                                                         {{"id", "4"}, {"bytes", "4"}, {"inplace", "1"}}},
                                                        {{0, 1}, {1, 2}, {2, 3}}));
  CHECK(!g[0].inplace);
  CHECK(g[1].inplace);
  CHECK(!g[2].inplace);
  CHECK(g[3].inplace);
  const std::string text = to_graphml(g);
  CHECK(contains(text, "attr.name=\"inplace\" attr.type=\"boolean\""));
  CHECK(canonical(parse_graphml_graph(text)) == canonical(g));
  CHECK(!contains(to_graphml(parse_graphml_graph(graphml({{{"id", "1"}, {"bytes", "1"}, {"inplace", "false"}}}))), "inplace"));
}

TEST_CASE("every bad GraphML input gives one file_error naming the file and the node or attribute") {
  struct bad_case {
    std::string text;
    const char* expected;
  };
  const std::string half = std::to_string(std::numeric_limits<std::int64_t>::max() / 2 + 1);
  const attributes one{{"id", "1"}, {"bytes", "1"}};
  const std::vector<bad_case> cases = {
      {"garbage", "not valid GraphML"},
      {"<?xml version=\"1.0\"?><foo/>", "not valid GraphML"},
      {"<graphml><graph><node id=\"a\">", "not valid GraphML"},
      {graphml({one, {{"id", "2"}, {"bytes", "1"}}}, {{0, 1}}, {}, "undirected"), "not a directed GraphML graph"},
      {graphml({}, {}), "the graph has no nodes"},
      {graphml({{{"id", "1"}}}), "node 1: missing attribute 'bytes'"},
      {graphml({{{"id", "1"}, {"bytes", "-3"}}}), "node 1: bytes must be >= 0, got -3"},
      {graphml({{{"id", "1"}, {"bytes", "1.5"}}}), "node 1: bytes must be an integer >= 0, got '1.5'"},
      {graphml({{{"id", "1"}, {"bytes", "12abc"}}}), "node 1: bytes must be an integer >= 0, got '12abc'"},
      {graphml({{{"id", "1"}, {"bytes", "1e3"}}}), "node 1: bytes must be an integer >= 0, got '1e3'"},
      {graphml({{{"id", "1"}, {"bytes", "99999999999999999999"}}}), "node 1: bytes = 99999999999999999999 does not fit in 64 bits"},
      {graphml({{{"id", "1"}, {"bytes", half}}, {{"id", "2"}, {"bytes", half}}}), "node 2: the sum of bytes and workspace"},
      {graphml({{{"id", "1"}, {"bytes", "1"}, {"workspace", "-1"}}}), "node 1: workspace must be >= 0, got -1"},
      {graphml({{{"id", "1"}, {"bytes", "1"}, {"cost", "abc"}}}), "node 1: cost must be a number >= 0, got 'abc'"},
      {graphml({{{"id", "1"}, {"bytes", "1"}, {"cost", "-2"}}}), "node 1: cost must be a finite number >= 0"},
      {graphml({{{"id", "1"}, {"bytes", "1"}, {"cost", "inf"}}}), "node 1: cost must be a finite number >= 0"},
      {graphml({{{"id", "x"}, {"bytes", "1"}}}), "nodes[0] (in file order): id must be an integer, got 'x'"},
      {graphml({one, {{"bytes", "1"}}}), "nodes[1] (in file order): missing attribute 'id'"},
      {graphml({{{"id", "5"}, {"bytes", "1"}}, {{"id", "5"}, {"bytes", "2"}}}), "nodes[1] (in file order): duplicate node id 5"},
      {graphml({{{"id", "1"}, {"bytes", "1"}, {"backward", "maybe"}}}), "node 1: backward must be true/false or 1/0, got 'maybe'"},
      {graphml({{{"id", "1"}, {"bytes", "1"}, {"role", "Forward"}}}), "node 1: role must be forward, backward or loss, got 'Forward'"},
      {graphml({{{"id", "1"}, {"bytes", "1"}, {"role", "forward"}, {"backward", "1"}}}), "node 1: role 'forward' conflicts with backward = true"},
      {graphml({{{"id", "1"}, {"bytes", "1"}, {"role", "loss"}}, {{"id", "2"}, {"bytes", "1"}, {"role", "backward"}, {"grad_of", "1"}}}),
       "node 2: grad_of = 1 names a loss node"},
      {graphml({{{"id", "1"}, {"bytes", "1"}, {"grad_of", "9"}}}), "node 1: grad_of: unknown node id 9"},
      {graphml({{{"id", "1"}, {"bytes", "1"}, {"grad_of", "a"}}}), "node 1: grad_of must be an integer, got 'a'"},
      {graphml({{{"id", "1"}, {"bytes", "1"}, {"inplace", "3"}}}), "node 1: inplace must be true/false or 1/0, got '3'"},
      {graphml({one}, {{0, 0}}), "edge 1 -> 1: self loop on node 1"},
      {graphml({one, {{"id", "2"}, {"bytes", "1"}}, {{"id", "3"}, {"bytes", "1"}}}, {{0, 1}, {1, 2}, {2, 1}}), "cycle through node"},
      {graphml({one, {{"id", "2"}, {"bytes", "1"}, {"output", "2"}}}), "node 2: output must be true/false or 1/0, got '2'"},
      {graphml({{{"id", "1"}, {"bytes", "1"}, {"order_position", "x"}}}), "node 1: order_position must be an integer, got 'x'"},
      {graphml({{{"id", "1"}, {"bytes", "1"}, {"order_position", "1"}}}), "node 1: order_position 1 is not -1 or in 0..0"},
      {graphml({{{"id", "1"}, {"bytes", "1"}, {"order_position", "-2"}}}), "node 1: order_position -2 is not -1 or in 0..0"},
      {graphml({{{"id", "1"}, {"bytes", "1"}, {"order_position", "0"}}, {{"id", "2"}, {"bytes", "1"}, {"order_position", "0"}}}),
       "node 2: order_position 0 is also the position of node 1"},
      {graphml({{{"id", "1"}, {"bytes", "1"}, {"order_position", "0"}}, {{"id", "2"}, {"bytes", "1"}, {"order_position", "-1"}}}),
       "node 2: no order_position, but other nodes have one"},
      {graphml({{{"id", "1"}, {"bytes", "1"}, {"order_position", "0"}}, {{"id", "2"}, {"bytes", "1"}}}),
       "node 2: no order_position, but other nodes have one"},
      {graphml({{{"id", "1"}, {"bytes", "1"}, {"order_position", "1"}}, {{"id", "2"}, {"bytes", "1"}, {"order_position", "0"}}}, {{0, 1}}),
       "order_position 0: node 2 comes before its input node 1"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    const std::string message = error_of([&] { return parse_graphml_graph(c.text, "bad.graphml"); });
    CHECK(starts_with(message, "bad.graphml: "));
    CHECK_MESSAGE(contains(message, c.expected), message);
  }
  // An edge to a node that is not declared: Boost's parser creates the node, which has no bytes.
  const std::string dangling = R"(<graphml><key id="b" for="node" attr.name="bytes" attr.type="long"/>
    <graph edgedefault="directed"><node id="a"><data key="b">1</data></node><edge source="a" target="zz"/></graph></graphml>)";
  CHECK(error_of([&] { return parse_graphml_graph(dangling, "d.graphml"); }) == "d.graphml: node 1: missing attribute 'bytes'");
}

TEST_CASE("read_graphml_graph and write_graphml_graph name the path") {
  temp_dir dir;
  const auto missing = dir / "missing.graphml";
  CHECK(starts_with(error_of([&] { return read_graphml_graph(missing); }), missing.string() + ": cannot open"));
  const auto bad = dir.write("bad.graphml", graphml({{{"id", "3"}}}));
  CHECK(error_of([&] { return read_graphml_graph(bad); }) == bad.string() + ": node 3: missing attribute 'bytes'");
  const dataflow_graph g = parse_json_graph(R"({"nodes": [{"id": 1, "bytes": 2}]})");
  const auto unwritable = dir / "no_such_dir" / "g.graphml";
  CHECK(error_of([&] {
          write_graphml_graph(unwritable, g);
          return 0;
        }) == unwritable.string() + ": cannot open the file for writing");
}

TEST_CASE("write_graphml_graph refuses text that Boost's GraphML reader would normalize (found by fuzz_json_graph)") {
  // Boost reads GraphML with whitespace trimming and normalization: "co   atures" read back as "co atures".
  for (const std::string& name : std::vector<std::string>{"co   atures", " lead", "trail ", "tab\there", "line\nbreak", std::string("nul\0x", 5)}) {
    CAPTURE(name);
    dataflow_graph g = parse_json_graph(R"({"nodes": [{"id": 4, "bytes": 2}]})");
    g[0].name = name;
    std::ostringstream out;
    CHECK_THROWS_WITH_AS(write_graphml_graph(out, g),
                         doctest::Contains("write_graphml_graph: node 4: name has a tab, newline, NUL, or a leading, trailing or repeated space"),
                         graph_error);
    g[0].name = "ok";
    g[0].op = name;
    CHECK_THROWS_WITH_AS(write_graphml_graph(out, g), doctest::Contains("node 4: op has"), graph_error);
    g[0].op = "";
    g[boost::graph_bundle].kind = name;
    CHECK_THROWS_WITH_AS(write_graphml_graph(out, g), doctest::Contains("the graph kind has"), graph_error);
  }
  // What does read back is written: single inner spaces, punctuation, markup characters.
  dataflow_graph g = parse_json_graph(R"({"name": "a b", "nodes": [{"id": 4, "bytes": 2, "name": "x <y> & 'z' \"w\"", "op": "o p"}]})");
  CHECK(canonical(parse_graphml_graph(to_graphml(g))) == canonical(g));
}
