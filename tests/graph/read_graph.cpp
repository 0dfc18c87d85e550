#include <memsched/graph/read_graph.hpp>
#include <memsched/graph/detail/utf8.hpp>
#include <memsched/order/kahn.hpp>

#include "io_test_support.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <span>
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

namespace {

std::string repeat(const std::string& s, std::size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (std::size_t i = 0; i < n; ++i) out += s;
  return out;
}

const std::string graphml_head = R"(<graphml><key id="b" for="node" attr.name="bytes" attr.type="long"/>
<graph edgedefault="directed">
)";  // <graphml> and <graph> are 2 levels; a <node> is the 3rd, its <data> the 4th

}  // namespace

TEST_CASE("deep nesting (100,000 levels) is a file_error naming the line in every format, not a stack overflow") {
  constexpr std::size_t deep = 100'000;
  const std::string node = R"(<node id="a"><data key="b">1</data></node>)";
  struct hostile {
    std::string name, text, what;
  };
  const std::vector<hostile> cases = {
      // GraphML: well-formed elements in a <data>, nested <graph>s, unclosed elements, after a comment and CDATA holding '<'.
      {"g1.graphml", graphml_head + R"(<node id="a"><data key="b">)" + repeat("<x>", deep) + repeat("</x>", deep) + "1</data></node></graph></graphml>",
       "line 3: XML elements nested deeper than 256 levels"},
      {"g2.graphml", graphml_head + node + "\n" + repeat("<graph>", deep) + repeat("</graph>", deep) + "</graph></graphml>",
       "line 4: XML elements nested deeper than 256 levels"},
      {"g3.graphml", repeat("<a>", deep), "line 1: XML elements nested deeper than 256 levels"},
      {"g4.graphml", "<!-- <<<< --><graphml><![CDATA[ <a> ]]>\n" + repeat("<a x='>'>", deep), "line 2: XML elements"},
      // Not a DOCTYPE for rapidxml (no blank after the word): its [...] does not hide the elements after the first '>'.
      {"g5.graphml", "<!DOCTYPEx [ >\n" + repeat("<a>", deep) + "]>", "line 2: XML elements"},
      // DOT: nested subgraphs, anonymous braces, an edge into nested subgraphs, unclosed braces.
      {"d1.dot", "digraph {\n1 [bytes=1]\n" + repeat("subgraph {", deep) + repeat("}", deep) + "}", "line 3: DOT subgraphs nested deeper than 256 levels"},
      {"d2.dot", "digraph { 1 [bytes=1]; " + repeat("{", deep) + repeat("}", deep) + " }", "line 1: DOT subgraphs"},
      {"d3.dot", "digraph { 1 [bytes=1]; 1 -> " + repeat("subgraph s {", deep), "line 1: DOT subgraphs"},
      // JSON: nlohmann parses iteratively, but messages dump values recursively.
      {"j1.json", "{\"nodes\": [{\"id\": 1, \"bytes\": 1}],\n\"x\": " + repeat("[", deep) + repeat("]", deep) + "}", "line 2: arrays and objects nested"},
      {"j2.json", "{\"nodes\": [{\"id\": " + repeat("[", deep) + repeat("]", deep) + ", \"bytes\": 1}]}", "line 1: arrays and objects nested"},
      {"j3.json", repeat("{\"a\":", deep), "line 1: arrays and objects nested"},
  };
  temp_dir dir;
  for (const auto& c : cases) {
    CAPTURE(c.name);
    const auto file = dir.write(c.name, c.text);
    const std::string message = error_of([&] { return read_graph(file); });
    CHECK_MESSAGE(starts_with(message, file.string() + ": line "), message);
    CHECK_MESSAGE(contains(message, c.what), message);
  }
}

TEST_CASE("nesting up to 256 levels reads; one more is rejected; brackets in strings and comments do not count") {
  // GraphML: <graphml><graph><node><data> + k levels inside the data.
  auto graphml_at = [](std::size_t depth) {
    const std::size_t k = depth - 4;
    return graphml_head + R"(<node id="a"><data key="b">)" + repeat("<x>", k) + repeat("</x>", k) + "7</data></node></graph></graphml>";
  };
  CHECK(parse_graphml_graph(graphml_at(256))[0].bytes == 7);
  CHECK(contains(error_of([&] { return parse_graphml_graph(graphml_at(257)); }), "nested deeper than 256"));
  // The text of an element only counts: '<' in attribute values, comments, CDATA and DOCTYPE is not an element.
  const std::string noise = repeat("<!-- <x> --><![CDATA[<x>]]><?pi <x>?>", 300);
  CHECK(parse_graphml_graph("<!DOCTYPE graphml [ <!ELEMENT x ANY> " + repeat("<!-- <x> -->", 300) + " ]>" + graphml_head + noise +
                            R"(<node id="a" name="<x><x>"><data key="b">3</data></node></graph></graphml>)")[0]
            .bytes == 3);

  // DOT: the root graph's braces are level 1.
  auto dot_at = [](std::size_t depth) {
    const std::size_t k = depth - 1;
    return "digraph { 5 [bytes=2]; " + repeat("subgraph { ", k) + "5" + repeat(" }", k) + " }";
  };
  CHECK(parse_dot_graph(dot_at(256))[0].bytes == 2);
  CHECK(contains(error_of([&] { return parse_dot_graph(dot_at(257)); }), "line 1: DOT subgraphs nested deeper than 256 levels"));
  const std::string braces = repeat("{", 1000);
  const dataflow_graph quoted = parse_dot_graph("digraph {\n// " + braces + "\n/* " + braces + " */\n#" + braces + "\n5 [bytes=4, name=\"" + braces +
                                                "\", label=<b>" + braces + "</b>] }");
  CHECK(quoted[0].bytes == 4);
  CHECK(quoted[0].name == braces);

  // JSON: the top-level object is level 1.
  auto json_at = [](std::size_t depth) {
    return R"({"nodes": [{"id": 1, "bytes": 9}], "x": )" + repeat("[", depth - 1) + repeat("]", depth - 1) + "}";
  };
  CHECK(parse_json_graph(json_at(256))[0].bytes == 9);
  CHECK(contains(error_of([&] { return parse_json_graph(json_at(257)); }), "nested deeper than 256"));
  CHECK(parse_json_graph(R"({"nodes": [{"id": 1, "bytes": 9, "name": ")" + braces + "\\\"" + braces + R"("}]})")[0].name ==
        braces + "\"" + braces);
}

TEST_CASE("two nodes with the same id are an error naming the id, in every format") {
  // GraphML: Boost's reader maps both <node id="x"> to one vertex, the later data winning.
  const std::string twice = graphml_head + R"(<node id="x"><data key="b">1</data></node><node id="y"><data key="b">2</data></node>
<node id="x"><data key="b">5</data></node><edge source="x" target="y"/></graph></graphml>)";
  CHECK(error_of([&] { return parse_graphml_graph(twice, "t.graphml"); }) ==
        "t.graphml: <node id=\"x\"> appears twice (<node> elements 1 and 3 in file order): node ids must be unique");
  const std::string bare = graphml_head + R"(<node id="x"><data key="b">1</data></node><node id="x"/></graph></graphml>)";
  CHECK(contains(error_of([&] { return parse_graphml_graph(bare); }), "<node id=\"x\"> appears twice"));
  // Nested graphs are read into the same graph: their ids are checked too.
  const std::string nested = graphml_head + R"(<node id="x"><data key="b">1</data></node><graph edgedefault="directed"><node id="x"/></graph></graph></graphml>)";
  CHECK(contains(error_of([&] { return parse_graphml_graph(nested); }), "<node id=\"x\"> appears twice"));
  // Different XML ids with the same memsched id attribute: the id check of every format.
  const std::string ids = R"(<graphml><key id="b" for="node" attr.name="bytes" attr.type="long"/><key id="i" for="node" attr.name="id" attr.type="long"/>
<graph edgedefault="directed"><node id="p"><data key="i">4</data><data key="b">1</data></node><node id="q"><data key="i">4</data><data key="b">1</data></node></graph></graphml>)";
  CHECK(contains(error_of([&] { return parse_graphml_graph(ids); }), "duplicate node id 4"));
  // A second graph in a document is an error (read_graphml would drop it), not a duplicate.
  const std::string two_graphs = graphml_head + R"(<node id="x"><data key="b">1</data></node></graph><graph><node id="x"/></graph></graphml>)";
  CHECK(error_of([&] { return parse_graphml_graph(two_graphs, "two.graphml"); }) ==
        "two.graphml: a second <graph> in <graphml>: memsched reads one graph per file");

  // JSON.
  CHECK(contains(error_of([&] { return parse_json_graph(R"({"nodes": [{"id": 3, "bytes": 1}, {"id": 3, "bytes": 2}]})", "t.json"); }),
                 "t.json: nodes[1]: duplicate node id 3"));
  // JSON objects: nlohmann would keep the later of two equal keys.
  CHECK(error_of([&] { return parse_json_graph(R"({"nodes": [{"id": 3, "bytes": 1, "cost": 2, "bytes": 2}]})", "k.json"); }) ==
        "k.json: node 3: key \"bytes\" appears twice");
  CHECK(error_of([&] { return parse_json_graph(R"({"nodes": [{"id": 3, "bytes": 1}], "nodes": []})", "k.json"); }) ==
        "k.json: the top-level object: key \"nodes\" appears twice");
  CHECK(error_of([&] { return parse_json_graph(R"({"nodes": [{"id": 3, "bytes": 1}], "meta": {"a": {"a": 1, "b": 2}, "b": 1, "a": 0}})", "k.json"); }) ==
        "k.json: an object: key \"a\" appears twice");
  CHECK(parse_json_graph(R"({"nodes": [{"id": 3, "bytes": 1, "x": {"bytes": 1}}], "x": {"nodes": 1}})")[0].bytes == 1);
  // DOT: two names for one id; the same name twice is Graphviz's attribute update (documented).
  CHECK(contains(error_of([&] { return parse_dot_graph("digraph { 3 [bytes=1]; 03 [bytes=2] }", "t.dot"); }), "duplicate node id 3"));
  CHECK(contains(error_of([&] { return parse_dot_graph("digraph { 3 [bytes=1]; \" 3\" [bytes=2] }", "t.dot"); }), "duplicate node id 3"));
  const dataflow_graph updated = parse_dot_graph("digraph { 3 [bytes=1, cost=2]; 3 [bytes=5] }");
  CHECK(num_vertices(updated) == 1);
  CHECK(updated[0].bytes == 5);
  CHECK(updated[0].cost == 2);
}

TEST_CASE("costs whose sum is not finite are rejected naming the node, in every format and in memory_graph") {
  CHECK(parse_json_graph(R"({"nodes": [{"id": 1, "bytes": 1, "cost": 1.7e308}]})")[0].cost == 1.7e308);
  const std::string message =
      error_of([&] { return parse_json_graph(R"({"nodes": [{"id": 1, "bytes": 1, "cost": 1e308}, {"id": 7, "bytes": 1, "cost": 1e308}]})", "c.json"); });
  CHECK(message == "c.json: the sum of costs over all vertices overflows to infinity at node 7 (vertex 1): scale the costs down");
  CHECK(contains(error_of([&] { return parse_dot_graph(R"(digraph { 1 [bytes=1, cost="1e308"]; 2 [bytes=1, cost="1e308"] })", "c.dot"); }),
                 "c.dot: the sum of costs over all vertices overflows to infinity at node 2"));
  CHECK(contains(error_of([&] {
                   return parse_graphml_graph(R"(<graphml><key id="b" for="node" attr.name="bytes" attr.type="long"/>
<key id="c" for="node" attr.name="cost" attr.type="double"/><graph edgedefault="directed">
<node id="p"><data key="b">1</data><data key="c">1e308</data></node><node id="q"><data key="b">1</data><data key="c">9e307</data></node>
</graph></graphml>)",
                                              "c.graphml");
                 }),
                 "c.graphml: the sum of costs over all vertices overflows to infinity at node 1"));
  memory_graph_data d{.num_nodes = 3, .edges = {{0, 1}}, .bytes = {1, 1, 1}, .cost = {1e308, 1, 1e308}};
  CHECK_THROWS_WITH_AS(memory_graph(d, "ctx"), "ctx: the sum of costs over all vertices overflows to infinity at node 2: scale the costs down",
                       graph_error);
  d.cost = {1e308, 1, 7e307};
  CHECK(memory_graph(d).total_cost() == doctest::Approx(1.7e308));
}

TEST_CASE("names, ops and kinds must be valid UTF-8 in every format (found by fuzz_graphml_graph)") {
  // Accepted by GraphML and DOT, such a graph could not be written as JSON (nlohmann's dump throws).
  const std::string bad = "ab\x90";
  const std::string named = R"(<graphml><key id="b" for="node" attr.name="bytes" attr.type="long"/><key id="n" for="node" attr.name="name" attr.type="string"/>
<graph edgedefault="directed"><node id="a"><data key="b">1</data><data key="n">)";
  CHECK(error_of([&] { return parse_graphml_graph(named + bad + "</data></node></graph></graphml>", "u.graphml"); }) ==
        "u.graphml: node 0: name is not valid UTF-8");
  CHECK(error_of([&] { return parse_dot_graph("digraph { 4 [bytes=1, op=\"" + bad + "\"] }", "u.dot"); }) == "u.dot: node 4: op is not valid UTF-8");
  CHECK(error_of([&] { return parse_dot_graph("digraph { kind=\"\xC0\xAF\"; 4 [bytes=1] }", "u.dot"); }) == "u.dot: the graph kind is not valid UTF-8");
  CHECK(starts_with(error_of([&] { return parse_json_graph(R"({"nodes": [{"id": 1, "bytes": 1, "name": ")" + bad + "\"}]}", "u.json"); }),
                    "u.json: not valid JSON"));
  // Valid multi-byte text reads and round-trips; overlong forms, surrogates and truncated sequences do not.
  const dataflow_graph g = parse_dot_graph("digraph { 4 [bytes=1, name=\"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\"] }");
  CHECK(canonical(parse_json_graph(to_json(g).dump())) == canonical(g));
  for (const std::string s : {"\xC0\x80", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xE2\x82", "\xF8\x88\x80\x80\x80"}) {
    CAPTURE(s);
    CHECK_FALSE(detail::valid_utf8(s));
    dataflow_graph h = g;
    h[0].name = s;
    CHECK_THROWS_WITH_AS((void)to_json(h), "to_json: node 4: name is not valid UTF-8", graph_error);
  }
  CHECK(detail::valid_utf8("\xEF\xBF\xBF\xF4\x8F\xBF\xBF plain"));
}

TEST_CASE("a directory given as a graph file is reported with its name") {
  temp_dir dir;
  for (const char* name : {"x.json", "x.graphml", "x.dot"}) {
    CAPTURE(name);
    std::filesystem::create_directories(dir / name);
    CHECK(error_of([&] { return read_graph(dir / name); }) == (dir / name).string() + ": is a directory, not a file");
  }
  CHECK(error_of([&] { return read_json_graph(dir / "x.dot"); }) == (dir / "x.dot").string() + ": is a directory, not a file");
}

TEST_CASE("fuzz regression inputs (tests/data/fuzz/<format>/) read or fail with file_error, and what reads is a valid graph") {
  const std::filesystem::path root = std::filesystem::path(MEMSCHED_TEST_DATA_DIR) / "fuzz";
  std::size_t files = 0;
  for (const char* format : {"json", "graphml", "dot"}) {
    if (!std::filesystem::is_directory(root / format)) continue;
    for (const auto& entry : std::filesystem::directory_iterator(root / format)) {
      CAPTURE(entry.path());
      ++files;
      std::ifstream in(entry.path(), std::ios::binary);
      const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      const std::string f = format;
      try {
        const dataflow_graph g = f == "json" ? parse_json_graph(text) : f == "graphml" ? parse_graphml_graph(text) : parse_dot_graph(text);
        const memory_graph m = make_memory_graph(g);
        const order_result kahn = kahn_order(m);
        CHECK(kahn.order.size() == num_vertices(g));
        CHECK(simulate_order(m, std::span<const std::size_t>(kahn.order)).peak_bytes == kahn.peak_bytes);
        // Every writer either refuses the graph with graph_error (text the format cannot hold) or writes what reads back.
        temp_dir dir;
        for (const char* name : {"back.json", "back.graphml", "back.dot"}) {
          CAPTURE(name);
          try {
            write_graph(dir / name, g);
          } catch (const graph_error&) {
            continue;
          }
          CHECK(canonical(read_graph(dir / name)) == canonical(g));
        }
      } catch (const file_error& e) {
        CHECK(std::string(e.what()).rfind("<", 0) == 0);  // the default source name: "<json>: ...", "<dot>: ..."
      }
    }
  }
  CHECK(files > 0);
}
