#include <memsched/graph/dataflow_graph.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/graph/node_maps.hpp>
#include <memsched/graph/node_role.hpp>

#include "../support/random_dag.hpp"

#include <doctest/doctest.h>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/compressed_sparse_row_graph.hpp>

#include <algorithm>

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

TEST_CASE("node_role spellings") {
  static_assert(to_string(node_role::forward) == "forward");
  static_assert(parse_node_role("loss") == node_role::loss);
  for (node_role r : {node_role::forward, node_role::backward, node_role::loss}) CHECK(parse_node_role(to_string(r)) == r);
  CHECK(!parse_node_role("Forward"));
  CHECK(!parse_node_role(""));
}

TEST_CASE("memory_graph keeps training roles and grad_of; data() gives them back") {
  // 0 -> 1 (forward), 1 -> 2 (loss), 2 -> 3 = grad of 1, reading 1 and 0; 3 -> 4 = grad of 0 (in index order).
  memory_graph_data d{.num_nodes = 5,
                      .edges = {{0, 1}, {1, 2}, {2, 3}, {1, 3}, {0, 3}, {3, 4}, {0, 4}},
                      .bytes = {1, 2, 3, 4, 5},
                      .roles = {node_role::forward, node_role::forward, node_role::loss, node_role::backward, node_role::backward},
                      .grad_of = {std::nullopt, std::nullopt, std::nullopt, 1, 0}};
  const memory_graph g(d);
  CHECK(g.has_training_roles());
  CHECK(g.all_roles() == d.roles);
  CHECK(g.is_forward(0));
  CHECK(g.is_forward(1));
  CHECK(!g.is_forward(2));
  CHECK(g.role(2) == node_role::loss);
  CHECK(g.role(3) == node_role::backward);
  CHECK(g.grad_of(3) == std::optional<std::size_t>(1));
  CHECK(g.grad_of(4) == std::optional<std::size_t>(0));
  CHECK(!g.grad_of(0));
  CHECK(!g.grad_of(2));
  const memory_graph_data back = g.data();
  CHECK(back.roles == d.roles);
  CHECK(back.grad_of == d.grad_of);
  const memory_graph again(back);
  CHECK(again.all_roles() == g.all_roles());

  // Without roles: all forward, nothing in data().
  const memory_graph plain(memory_graph_data{.num_nodes = 2, .edges = {{0, 1}}, .bytes = {1, 1}});
  CHECK(!plain.has_training_roles());
  CHECK(plain.is_forward(0));
  CHECK(plain.is_forward(1));
  CHECK(!plain.grad_of(1));
  CHECK(plain.data().roles.empty());
  CHECK(plain.data().grad_of.empty());
  // All-forward roles given explicitly are the same graph.
  const memory_graph explicit_forward(memory_graph_data{.num_nodes = 2, .edges = {{0, 1}}, .bytes = {1, 1}, .roles = {node_role::forward, node_role::forward}});
  CHECK(!explicit_forward.has_training_roles());
  CHECK(explicit_forward.data().roles.empty());
}

TEST_CASE("memory_graph keeps inplace; data() gives it back; all-false is no inplace") {
  const memory_graph g(memory_graph_data{.num_nodes = 3, .edges = {{0, 1}, {1, 2}}, .bytes = {4, 4, 4}, .inplace = {0, 1, 5}});
  CHECK(g.has_inplace());
  CHECK(!g.inplace(0));
  CHECK(g.inplace(1));
  CHECK(g.inplace(2));
  CHECK(g.data().inplace == std::vector<char>{0, 1, 1});
  CHECK(memory_graph(g.data()).data().inplace == std::vector<char>{0, 1, 1});
  const memory_graph none(memory_graph_data{.num_nodes = 2, .edges = {{0, 1}}, .bytes = {1, 1}, .inplace = {0, 0}});
  CHECK(!none.has_inplace());
  CHECK(!none.inplace(1));
  CHECK(none.data().inplace.empty());
  const memory_graph plain(memory_graph_data{.num_nodes = 2, .edges = {{0, 1}}, .bytes = {1, 1}});
  CHECK(!plain.has_inplace());
  CHECK_THROWS_WITH_AS(memory_graph(memory_graph_data{.num_nodes = 2, .edges = {{0, 1}}, .bytes = {1, 1}, .inplace = {1}}, "f"),
                       "f: inplace has 1 entries for 2 vertices", graph_error);
}

TEST_CASE("memory_graph rejects bad roles and grad_of, naming the vertex") {
  auto build = [](std::vector<node_role> roles, std::vector<std::optional<std::size_t>> grad_of) {
    return memory_graph(memory_graph_data{.num_nodes = 3, .edges = {{0, 1}, {1, 2}}, .bytes = {1, 1, 1}, .ids = {10, 11, 12},
                                          .roles = std::move(roles), .grad_of = std::move(grad_of)},
                        "f");
  };
  const auto F = node_role::forward, B = node_role::backward, L = node_role::loss;
  CHECK_THROWS_WITH_AS(build({F, B}, {}), "f: roles has 2 entries for 3 vertices", graph_error);
  CHECK_THROWS_WITH_AS(build({}, {std::nullopt}), "f: grad_of has 1 entries for 3 vertices", graph_error);
  CHECK_THROWS_WITH_AS(build({F, F, B}, {std::nullopt, std::nullopt, 7}), "f: node 12 (vertex 2): grad_of names vertex 7, not below 3",
                       graph_error);
  CHECK_THROWS_WITH_AS(build({F, F, F}, {std::nullopt, std::nullopt, 0}),
                       "f: node 12 (vertex 2): has a grad_of (node 10 (vertex 0)) but its role is forward", graph_error);
  CHECK_THROWS_WITH_AS(build({F, L, B}, {std::nullopt, std::nullopt, 1}),
                       "f: node 12 (vertex 2): grad_of names node 11 (vertex 1), whose role is loss, not forward", graph_error);
  CHECK_THROWS_AS(build({F, static_cast<node_role>(9), F}, {}), graph_error);
  CHECK_NOTHROW(build({F, L, B}, {std::nullopt, std::nullopt, 0}));
}

namespace {
using plain_vecs = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;

// A training graph as a memory_graph built from each graph type (bundles or explicit maps).
template <class G>
memory_graph via(const memory_graph_data& d) {
  testing::typed_graph<G> t(d);
  return make_memory_graph(t.graph, t.maps());
}
}  // namespace

TEST_CASE("roles, grad_of and inplace reach memory_graph the same way from every graph type") {
  std::size_t inplace_vertices = 0;
  for (std::uint64_t seed = 0; seed < 30; ++seed) {
    CAPTURE(seed);
    const memory_graph_data d = testing::with_random_inplace(testing::random_training_dag(4 + seed % 9, 0.35, seed), seed);
    const memory_graph expected(d);
    REQUIRE(expected.has_training_roles());
    std::size_t gradients = 0;
    for (std::size_t v = 0; v < expected.size(); ++v) gradients += expected.grad_of(v).has_value();
    CHECK(gradients > 0);
    REQUIRE(d.inplace.size() == d.num_nodes);
    CHECK(expected.has_inplace() == std::any_of(d.inplace.begin(), d.inplace.end(), [](char c) { return c != 0; }));
    for (std::size_t v = 0; v < d.num_nodes; ++v) {
      CHECK(expected.inplace(v) == (d.inplace[v] != 0));
      inplace_vertices += expected.inplace(v) ? 1 : 0;
    }

    const memory_graph from_dataflow = make_memory_graph(testing::to_dataflow_graph(d));
    const memory_graph from_vecs = via<testing::vecs_graph>(d);
    const memory_graph from_lists = via<testing::lists_graph>(d);
    const memory_graph from_csr = via<testing::csr_graph>(d);

    // Explicit maps over vectors on a graph without bundles (ids = index); the inplace map (the
    // 8th) reads chars: any value convertible to bool.
    plain_vecs pg(d.num_nodes);
    for (auto [u, v] : d.edges) add_edge(u, v, pg);
    std::vector<std::optional<std::int64_t>> grad_ids(d.num_nodes);
    for (std::size_t v = 0; v < d.num_nodes; ++v)
      if (d.grad_of[v]) grad_ids[v] = static_cast<std::int64_t>(*d.grad_of[v]);
    const auto index = get(boost::vertex_index, pg);
    const auto bytes = boost::make_iterator_property_map(d.bytes.begin(), index);
    const auto cost = boost::make_iterator_property_map(d.cost.begin(), index);
    const auto workspace = boost::make_iterator_property_map(d.workspace.begin(), index);
    const auto role = boost::make_iterator_property_map(d.roles.begin(), index);
    const auto grad_of = boost::make_iterator_property_map(grad_ids.begin(), index);
    const auto inplace = boost::make_iterator_property_map(d.inplace.begin(), index);
    const node_maps<decltype(index), decltype(index), decltype(bytes), decltype(cost), decltype(workspace), decltype(role),
                    decltype(grad_of), decltype(inplace)>
        maps{.index = index,
             .id = index,
             .bytes = bytes,
             .cost = cost,
             .workspace = workspace,
             .role = role,
             .grad_of = grad_of,
             .inplace = inplace};
    const memory_graph from_maps = make_memory_graph(pg, maps);
    // The training maps without an inplace map (make_node_maps' 6-map overload): no vertex is in-place.
    const memory_graph no_inplace_map = make_memory_graph(pg, make_node_maps(index, bytes, cost, workspace, role, grad_of));
    CHECK(no_inplace_map.all_roles() == expected.all_roles());
    CHECK(!no_inplace_map.has_inplace());

    for (const memory_graph* g : {&from_dataflow, &from_vecs, &from_lists, &from_csr, &from_maps}) {
      CHECK(g->all_roles() == expected.all_roles());
      CHECK(g->data().grad_of == expected.data().grad_of);
      CHECK(g->all_bytes() == expected.all_bytes());
      CHECK(g->data().inplace == expected.data().inplace);
    }
    // Maps without roles (the 4-map overload) still give an all-forward graph, without in-place.
    const memory_graph untrained = make_memory_graph(pg, make_node_maps(index, bytes));
    CHECK(!untrained.has_training_roles());
    CHECK(!untrained.has_inplace());
  }
  CHECK(inplace_vertices > 50);  // the flags were exercised
}

TEST_CASE("make_memory_graph: a grad_of naming an unknown id is an error naming the vertex") {
  dataflow_graph g(2);
  g[0].id = 5;
  g[1].id = 6;
  g[1].role = node_role::backward;
  g[1].grad_of = 99;
  add_edge(0, 1, g);
  CHECK_THROWS_WITH_AS((void)make_memory_graph(g, "ctx"), "ctx: node 6 (vertex 1): grad_of names id 99, which no vertex has", graph_error);
  g[1].grad_of = 5;
  const memory_graph m = make_memory_graph(g);
  CHECK(m.grad_of(1) == std::optional<std::size_t>(0));
  g[1].role = node_role::forward;  // a gradient marked forward: refused, not silently recomputed
  CHECK_THROWS_AS((void)make_memory_graph(g), graph_error);
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


TEST_CASE("topological_order is the smallest-index-first order, numbered in order or not") {
  // The reference: Kahn's algorithm taking the smallest ready vertex each time.
  const auto smallest_first = [](const memory_graph& g) {
    std::vector<std::size_t> indegree(g.size());
    std::vector<memory_graph::vertex> order, ready;
    for (std::size_t v = 0; v < g.size(); ++v)
      if ((indegree[v] = g.in_degree(v)) == 0) ready.push_back(static_cast<memory_graph::vertex>(v));
    while (!ready.empty()) {
      const auto it = std::min_element(ready.begin(), ready.end());
      const auto u = *it;
      ready.erase(it);
      order.push_back(u);
      for (auto s : g.successors(u))
        if (--indegree[s] == 0) ready.push_back(s);
    }
    return order;
  };
  std::size_t numbered_in_order = 0, not_in_order = 0;
  for (std::uint64_t seed = 0; seed < 60; ++seed) {
    const std::size_t n = 1 + seed % 17;
    memory_graph_data d = testing::random_dag(n, 0.1 + 0.1 * static_cast<double>(seed % 5), seed);
    if (seed % 2 == 0) d = testing::numbered_in_topological_order(std::move(d));
    const memory_graph g(d);
    const bool in_order = std::all_of(d.edges.begin(), d.edges.end(), [](auto e) { return e.first < e.second; });
    (in_order ? numbered_in_order : not_in_order) += 1;
    CHECK(g.topological_order() == smallest_first(g));
    if (in_order) {
      std::vector<memory_graph::vertex> identity(n);
      for (std::size_t v = 0; v < n; ++v) identity[v] = static_cast<memory_graph::vertex>(v);
      CHECK(g.topological_order() == identity);
    }
  }
  CHECK(numbered_in_order >= 30);
  CHECK(not_in_order >= 20);
}
