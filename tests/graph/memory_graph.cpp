#include <memsched/graph/memory_graph.hpp>

#include <doctest/doctest.h>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/compressed_sparse_row_graph.hpp>

using namespace memsched;

TEST_CASE("memory_graph merges duplicate edges and builds both adjacency directions") {
  memory_graph g(memory_graph_data{.num_nodes = 3, .edges = {{0, 1}, {0, 1}, {1, 2}, {0, 2}}, .bytes = {1, 2, 3}});
  CHECK(g.num_edges() == 3);
  CHECK(g.successors(0).size() == 2);
  CHECK(g.predecessors(2).size() == 2);
  CHECK(g.predecessors(2)[0] == 0);
  CHECK(g.predecessors(2)[1] == 1);
  CHECK(g.is_output(2));
  CHECK_FALSE(g.is_output(1));
  CHECK(g.total_bytes() == 6);
  CHECK(g.topological_order() == std::vector<memory_graph::vertex>{0, 1, 2});
}

TEST_CASE("memory_graph rejects bad data with a message naming the node") {
  CHECK_THROWS_WITH_AS(memory_graph(memory_graph_data{.num_nodes = 2, .edges = {{1, 1}}, .bytes = {1, 2}}, "f"),
                       "f: node 1: self loop", graph_error);
  CHECK_THROWS_WITH_AS(memory_graph(memory_graph_data{.num_nodes = 2, .edges = {}, .bytes = {1, -2}}, "f"),
                       "f: node 1: negative bytes (-2)", graph_error);
  CHECK_THROWS_AS(memory_graph(memory_graph_data{.num_nodes = 2, .edges = {{0, 5}}, .bytes = {1, 2}}), graph_error);
  CHECK_THROWS_AS(memory_graph(memory_graph_data{.num_nodes = 2, .bytes = {INT64_MAX, 1}}), graph_error);
  try {
    (void)memory_graph(memory_graph_data{.num_nodes = 4, .edges = {{0, 1}, {1, 2}, {2, 3}, {3, 1}}, .bytes = {1, 1, 1, 1}});
    FAIL("no exception");
  } catch (const boost::not_a_dag& e) {
    const auto& c = dynamic_cast<const cycle_error&>(e);
    CHECK(c.node() >= 1);
    CHECK(std::string(c.what()).find("cycle") != std::string::npos);
  }
}

using vec_graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, node>;
using list_graph = boost::adjacency_list<boost::listS, boost::listS, boost::bidirectionalS,
                                         boost::property<boost::vertex_index_t, std::size_t, node>>;

TEST_CASE("make_memory_graph reads bundled nodes from vecS, listS and CSR graphs alike") {
  const std::vector<std::int64_t> bytes{5, 7, 11};
  const std::vector<std::pair<std::size_t, std::size_t>> edges{{0, 1}, {1, 2}, {0, 2}};

  vec_graph vg(3);
  for (std::size_t v = 0; v < 3; ++v) vg[v].bytes = bytes[v];
  for (auto [u, v] : edges) add_edge(u, v, vg);
  const memory_graph a = make_memory_graph(vg);

  using csr = boost::compressed_sparse_row_graph<boost::directedS, node>;
  csr cg(boost::edges_are_unsorted_multi_pass, edges.begin(), edges.end(), 3);
  for (std::size_t v = 0; v < 3; ++v) cg[v].bytes = bytes[v];
  const memory_graph b = make_memory_graph(cg);

  list_graph lg;
  std::vector<list_graph::vertex_descriptor> vs;
  for (std::size_t v = 0; v < 3; ++v) {
    vs.push_back(add_vertex(lg));
    put(boost::vertex_index, lg, vs.back(), v);
    lg[vs.back()].bytes = bytes[v];
  }
  for (auto [u, v] : edges) add_edge(vs[u], vs[v], lg);
  const memory_graph c = make_memory_graph(lg, default_node_maps(lg, get(boost::vertex_index, lg)));

  for (const memory_graph* g : {&a, &b, &c}) {
    CHECK(g->all_bytes() == bytes);
    CHECK(g->num_edges() == 3);
    CHECK(g->outputs().size() == 1);
    CHECK(g->outputs()[0] == 2);
  }
}

// Compile-time checks (a failure stops the build): the generic entry points accept exactly what
// they document, and asking about a memory_graph with maps (or about a non-graph) is a clean
// "no", not a compile error.
using bundled_vecs = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, node>;
static_assert(memory_graph_source<memory_graph>);
static_assert(memory_graph_source<bundled_vecs>);
static_assert(!graph<memory_graph>);
static_assert(!memory_graph_source<memory_graph, decltype(get(&node::bytes, std::declval<bundled_vecs&>()))>);
static_assert(!memory_graph_source<int>);

