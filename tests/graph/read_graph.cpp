#include <memsched/graph/read_graph.hpp>
#include <memsched/order/kahn.hpp>

#include "io_test_support.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace memsched;
using namespace memsched::testing;

TEST_CASE("read_graph and write_graph choose the format by extension") {
  temp_dir dir;
  const dataflow_graph g = read_graph(std::filesystem::path(MEMSCHED_TEST_DATA_DIR) / "torch" / "resnet18.inference.json");
  for (const char* name : {"g.json", "g.graphml", "g.dot", "g.gv"}) {
    CAPTURE(name);
    write_graph(dir / name, g);
    const dataflow_graph back = read_graph(dir / name);
    CHECK(canonical(back) == canonical(g));
  }
  // The files really are in their formats.
  CHECK(read_json_graph(dir / "g.json")[0].id == g[0].id);
  CHECK(num_vertices(read_graphml_graph(dir / "g.graphml")) == num_vertices(g));
  CHECK(num_vertices(read_dot_graph(dir / "g.dot")) == num_vertices(g));
  CHECK_THROWS_AS((void)read_json_graph(dir / "g.graphml"), file_error);
  CHECK_THROWS_AS((void)read_dot_graph(dir / "g.json"), file_error);

  for (const char* name : {"g.txt", "g", "g.JSON2"}) {
    CAPTURE(name);
    const auto p = dir / name;
    CHECK(starts_with(error_of([&] { return read_graph(p); }), p.string() + ": unknown graph file extension"));
    CHECK(starts_with(error_of([&] {
                        write_graph(p, g);
                        return 0;
                      }),
                      p.string() + ": unknown graph file extension"));
  }
}

TEST_CASE("JSON -> GraphML -> DOT -> JSON keeps nodes, edges, outputs and order of every test graph") {
  temp_dir dir;
  for (const auto& path : data_graphs()) {
    CAPTURE(path);
    const dataflow_graph g = read_graph(path);
    write_graph(dir / "a.graphml", g);
    const dataflow_graph from_graphml = read_graph(dir / "a.graphml");
    write_graph(dir / "b.dot", from_graphml);
    const dataflow_graph from_dot = read_graph(dir / "b.dot");
    write_graph(dir / "c.json", from_dot);
    const dataflow_graph back = read_graph(dir / "c.json");
    CHECK(canonical(from_graphml) == canonical(g));
    CHECK(canonical(from_dot) == canonical(g));
    CHECK(canonical(back) == canonical(g));
    // The memory model sees the same graph: same peak lower bound (the numbering may differ).
    CHECK(kahn_order(back).lower_bound == kahn_order(g).lower_bound);
    // And back the other way: JSON -> DOT -> GraphML -> JSON.
    write_graph(dir / "d.dot", g);
    write_graph(dir / "e.graphml", read_graph(dir / "d.dot"));
    write_graph(dir / "f.json", read_graph(dir / "e.graphml"));
    CHECK(canonical(read_graph(dir / "f.json")) == canonical(g));
  }
}

TEST_CASE("the same bad graph gives the same message in all three formats") {
  temp_dir dir;
  struct bad_graph {
    const char* json;
    const char* graphml_nodes;  // <node> elements; keys are declared below
    const char* graphml_edges;
    const char* dot;
    const char* expected;
  };
  const std::vector<bad_graph> cases = {
      {R"({"nodes": [{"id": 1}]})", R"(<node id="a"><data key="id">1</data></node>)", "", "digraph { 1 }",
       "node 1: missing "},
      {R"({"nodes": [{"id": 1, "bytes": -1}]})", R"(<node id="a"><data key="id">1</data><data key="bytes">-1</data></node>)", "",
       "digraph { 1 [bytes=-1] }", "node 1: bytes must be >= 0, got -1"},
      {R"({"nodes": [{"id": 1, "bytes": 2.5}]})", R"(<node id="a"><data key="id">1</data><data key="bytes">2.5</data></node>)", "",
       "digraph { 1 [bytes=2.5] }", "node 1: bytes must be an integer >= 0"},
      {R"({"nodes": [{"id": 1, "bytes": 1}, {"id": 1, "bytes": 1}]})",
       R"(<node id="a"><data key="id">1</data><data key="bytes">1</data></node><node id="b"><data key="id">1</data><data key="bytes">1</data></node>)",
       "", "digraph { 1 [bytes=1]; 001 [bytes=1] }", "duplicate node id 1"},
      {R"({"nodes": [{"id": 1, "bytes": 1}], "edges": [[1, 1]]})", R"(<node id="a"><data key="id">1</data><data key="bytes">1</data></node>)",
       R"(<edge source="a" target="a"/>)", "digraph { 1 [bytes=1]; 1 -> 1 }", "self loop on node 1"},
      {R"({"nodes": [{"id": 1, "bytes": 1}, {"id": 2, "bytes": 1}], "edges": [[1, 2], [2, 1]]})",
       R"(<node id="a"><data key="id">1</data><data key="bytes">1</data></node><node id="b"><data key="id">2</data><data key="bytes">1</data></node>)",
       R"(<edge source="a" target="b"/><edge source="b" target="a"/>)", "digraph { 1 [bytes=1]; 2 [bytes=1]; 1 -> 2 -> 1 }",
       "the graph has a cycle through node "},
      {R"({"nodes": [{"id": 1, "bytes": 1, "grad_of": 3}]})",
       R"(<node id="a"><data key="id">1</data><data key="bytes">1</data><data key="grad_of">3</data></node>)", "",
       "digraph { 1 [bytes=1, grad_of=3] }", "node 1: grad_of: unknown node id 3"},
      {R"({"nodes": [{"id": 1, "bytes": 1}, {"id": 2, "bytes": 1, "role": "forward", "grad_of": 1}]})",
       R"(<node id="a"><data key="id">1</data><data key="bytes">1</data></node><node id="b"><data key="id">2</data><data key="bytes">1</data><data key="role">forward</data><data key="grad_of">1</data></node>)",
       "", "digraph { 1 [bytes=1]; 2 [bytes=1, role=forward, grad_of=1] }", "node 2: role 'forward' conflicts with grad_of = 1"},
      {R"({"nodes": [{"id": 1, "bytes": 1, "op": "loss"}, {"id": 2, "bytes": 1, "grad_of": 1}]})",
       R"(<node id="a"><data key="id">1</data><data key="bytes">1</data><data key="op">loss</data></node><node id="b"><data key="id">2</data><data key="bytes">1</data><data key="grad_of">1</data></node>)",
       "", "digraph { 1 [bytes=1, op=loss]; 2 [bytes=1, grad_of=1] }", "node 2: grad_of = 1 names a loss node"},
      {R"({"nodes": [{"id": 1, "bytes": 1}, {"id": 2, "bytes": 1}], "edges": [[1, 2]], "order": [2, 1]})",
       R"(<node id="a"><data key="id">1</data><data key="bytes">1</data><data key="order_position">1</data></node><node id="b"><data key="id">2</data><data key="bytes">1</data><data key="order_position">0</data></node>)",
       R"(<edge source="a" target="b"/>)", "digraph { 1 [bytes=1, order_position=1]; 2 [bytes=1, order_position=0]; 1 -> 2 }",
       "node 2 comes before its input node 1"},
  };
  const std::string keys = R"(<key id="id" for="node" attr.name="id" attr.type="long"/>
    <key id="bytes" for="node" attr.name="bytes" attr.type="string"/>
    <key id="grad_of" for="node" attr.name="grad_of" attr.type="long"/>
    <key id="role" for="node" attr.name="role" attr.type="string"/>
    <key id="op" for="node" attr.name="op" attr.type="string"/>
    <key id="order_position" for="node" attr.name="order_position" attr.type="long"/>)";
  for (const auto& c : cases) {
    CAPTURE(c.expected);
    const auto json_file = dir.write("bad.json", c.json);
    const auto graphml_file = dir.write("bad.graphml", "<graphml>" + keys + "<graph edgedefault=\"directed\">" +
                                                           c.graphml_nodes + c.graphml_edges + "</graph></graphml>");
    const auto dot_file = dir.write("bad.dot", c.dot);
    for (const auto& file : {json_file, graphml_file, dot_file}) {
      CAPTURE(file);
      const std::string message = error_of([&] { return read_graph(file); });
      CHECK(starts_with(message, file.string() + ": "));
      CHECK_MESSAGE(contains(message, c.expected), message);
    }
  }
}
