// write_graph: the format by extension, a round trip through each format (dataflow graphs and
// generic graphs with maps), the unknown extension and the failed write named.

#include <memsched/graph/read_graph.hpp>
#include <memsched/graph/write_graph.hpp>
#include <memsched/order/kahn.hpp>

#include "io_test_support.hpp"

#include <doctest/doctest.h>

#include <boost/graph/adjacency_list.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using namespace memsched;
using namespace memsched::testing;

namespace {
std::string file_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
}  // namespace

TEST_CASE("write_graph: each extension writes its format and reads back the same graph") {
  temp_dir dir;
  for (std::uint64_t seed = 0; seed < 12; ++seed) {
    CAPTURE(seed);
    const dataflow_graph g = to_dataflow_graph(random_training_dag(3 + seed % 8, 0.4, seed));
    for (const char* name : {"g.json", "g.graphml", "g.dot", "g.gv"}) {
      CAPTURE(name);
      write_graph(dir / name, g);
      CHECK(canonical(read_graph(dir / name)) == canonical(g));
    }
    // The files are in their formats, not JSON under another name.
    CHECK(file_text(dir / "g.json").front() == '{');
    CHECK(file_text(dir / "g.graphml").find("<graphml") != std::string::npos);
    CHECK(file_text(dir / "g.dot").rfind("digraph", 0) == 0);
  }
}

TEST_CASE("write_graph: a memory_graph and a generic graph with maps are written with their data") {
  temp_dir dir;
  using lists = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS>;
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    CAPTURE(seed);
    const memory_graph_data d = random_training_dag(4 + seed % 7, 0.35, seed);
    const memory_graph expected(d);
    lists pg(d.num_nodes);
    for (auto [u, v] : d.edges) add_edge(u, v, pg);
    std::vector<std::optional<std::int64_t>> grad_ids(d.num_nodes);
    for (std::size_t v = 0; v < d.num_nodes; ++v)
      if (!d.grad_of.empty() && d.grad_of[v]) grad_ids[v] = static_cast<std::int64_t>(*d.grad_of[v]);
    std::vector<node_role> roles = d.roles;
    roles.resize(d.num_nodes, node_role::forward);
    const auto index = get(boost::vertex_index, pg);
    const auto maps = make_node_maps(index, boost::make_iterator_property_map(d.bytes.begin(), index),
                                     boost::make_iterator_property_map(d.cost.begin(), index),
                                     boost::make_iterator_property_map(d.workspace.begin(), index),
                                     boost::make_iterator_property_map(roles.begin(), index),
                                     boost::make_iterator_property_map(grad_ids.begin(), index));
    for (const char* name : {"m.json", "m.graphml", "m.dot"}) {
      CAPTURE(name);
      write_graph(dir / name, pg, maps);
      const memory_graph back = make_memory_graph(read_graph(dir / name));
      CHECK(back.all_bytes() == expected.all_bytes());
      CHECK(back.all_costs() == expected.all_costs());
      CHECK(back.all_workspace() == expected.all_workspace());
      CHECK(back.all_roles() == expected.all_roles());
      CHECK(back.data().grad_of == expected.data().grad_of);
      CHECK(std::vector<std::size_t>(back.outputs().begin(), back.outputs().end()) ==
            std::vector<std::size_t>(expected.outputs().begin(), expected.outputs().end()));
      CHECK(back.num_edges() == expected.num_edges());
      CHECK(kahn_order(back).peak_bytes == kahn_order(expected).peak_bytes);
      write_graph(dir / name, expected);  // the memory_graph itself
      CHECK(make_memory_graph(read_graph(dir / name)).all_bytes() == expected.all_bytes());
    }
  }
}

TEST_CASE("write_graph: an unknown extension and a failed write are errors naming the path") {
  temp_dir dir;
  const dataflow_graph g = to_dataflow_graph(random_training_dag(5, 0.4, 1));
  for (const char* name : {"g.txt", "g", "g.JSON", "g.onnx"}) {
    CAPTURE(name);
    const auto p = dir / name;
    CHECK(error_of([&] {
            write_graph(p, g);
            return 0;
          }) == p.string() + ": unknown graph file extension '" + p.extension().string() + "' (expected .json, .graphml or .dot)");
    CHECK(!std::filesystem::exists(p));  // nothing written
  }
  // A directory named like a graph file: a file that cannot be written.
  std::filesystem::create_directory(dir / "d.graphml");
  CHECK(error_of([&] {
          write_graph(dir / "d.graphml", g);
          return 0;
        }) == (dir / "d.graphml").string() + ": cannot open the file for writing");
}

TEST_CASE("write_graph: a file that opens but cannot be written (a full disk) is an error naming the path") {
  const std::filesystem::path full = "/dev/full";  // Linux: every write fails with ENOSPC
  REQUIRE(std::filesystem::exists(full));  // as tests/tool/reliability.cpp: the tests run on Linux
  const dataflow_graph g = to_dataflow_graph(random_training_dag(5, 0.4, 1));
  const std::string expected = "/dev/full: cannot write the file";
  CHECK(error_of([&] {
          write_json_graph(full, g);
          return 0;
        }) == expected);
  CHECK(error_of([&] {
          write_graphml_graph(full, g);
          return 0;
        }) == expected);
  CHECK(error_of([&] {
          write_dot_graph(full, g);
          return 0;
        }) == expected);
}
