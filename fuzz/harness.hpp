#pragma once
// Shared by the libFuzzer harnesses: what an input that a reader ACCEPTED must survive. A reader may
// reject an input only with file_error (its documented contract); anything else escaping a harness,
// a sanitizer report or a failed check below is a bug.

#include <memsched/graph/dataflow_graph.hpp>
#include <memsched/graph/dot_io.hpp>
#include <memsched/graph/graphml_io.hpp>
#include <memsched/graph/json_io.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/order/kahn.hpp>
#include <memsched/sim/simulate_order.hpp>

#include <nlohmann/json.hpp>  // to_json(g).dump() below (json_io.hpp declares to_json only)

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace memsched::fuzz {

/// Aborts (a libFuzzer crash, with the input saved) when `ok` is false.
inline void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "memsched fuzz: check failed: %s\n", what);
  std::abort();
}

/// True when two graphs have the same nodes (all fields), edges, outputs and order, matching
/// vertices by id (the DOT reader numbers vertices in id order, the others in file order).
inline bool same_graph(const dataflow_graph& a, const dataflow_graph& b) {
  if (num_vertices(a) != num_vertices(b) || num_edges(a) != num_edges(b)) return false;
  std::vector<std::size_t> in_a(num_vertices(a)), in_b(num_vertices(b));
  for (std::size_t v = 0; v < in_a.size(); ++v) in_a[v] = in_b[v] = v;
  std::sort(in_a.begin(), in_a.end(), [&](auto x, auto y) { return a[x].id < a[y].id; });
  std::sort(in_b.begin(), in_b.end(), [&](auto x, auto y) { return b[x].id < b[y].id; });
  std::vector<std::size_t> b_of(in_a.size());  // a's vertex -> b's vertex with the same id
  for (std::size_t k = 0; k < in_a.size(); ++k) {
    const node &x = a[in_a[k]], &y = b[in_b[k]];
    if (x.id != y.id || x.name != y.name || x.op != y.op || x.bytes != y.bytes || x.cost != y.cost || x.workspace != y.workspace ||
        x.role != y.role || x.grad_of != y.grad_of || x.inplace != y.inplace)
      return false;
    b_of[in_a[k]] = in_b[k];
  }
  for (auto [e, end] = edges(a); e != end; ++e)
    if (!edge(b_of[source(*e, a)], b_of[target(*e, a)], b).second) return false;
  const auto &ia = a[boost::graph_bundle], &ib = b[boost::graph_bundle];
  if (ia.name != ib.name || ia.kind != ib.kind || ia.outputs.has_value() != ib.outputs.has_value() || ia.order.size() != ib.order.size())
    return false;
  if (ia.outputs) {
    std::vector<std::int64_t> oa, ob;
    for (auto v : *ia.outputs) oa.push_back(a[v].id);
    for (auto v : *ib.outputs) ob.push_back(b[v].id);
    std::sort(oa.begin(), oa.end());
    std::sort(ob.begin(), ob.end());
    if (oa != ob) return false;
  }
  for (std::size_t k = 0; k < ia.order.size(); ++k)
    if (a[ia.order[k]].id != b[ib.order[k]].id) return false;
  return true;
}

/// Everything the tool does with a graph it read: the memory_graph, the simulator on the graph's
/// topological order and on its stored order, Kahn's order re-simulated, and a write + read back in
/// each format (writers may refuse text DOT cannot hold, with graph_error, and nothing else).
inline void exercise(const dataflow_graph& g) {
  const memory_graph m = make_memory_graph(g, "fuzz");  // the reader validated it: must not throw
  require(m.size() == num_vertices(g), "memory_graph size");
  const std::vector<std::size_t> topo(m.topological_order().begin(), m.topological_order().end());
  const order_simulation by_topo = simulate_order(m, std::span<const std::size_t>(topo));
  const order_result kahn = kahn_order(m);
  require(kahn.order.size() == m.size(), "kahn_order is complete");
  require(simulate_order(m, std::span<const std::size_t>(kahn.order)).peak_bytes == kahn.peak_bytes, "kahn_order peak re-simulated");
  require(kahn.lower_bound <= kahn.peak_bytes && kahn.lower_bound <= by_topo.peak_bytes, "lower bound below every peak");
  const auto& order = g[boost::graph_bundle].order;
  if (!order.empty()) require(simulate_order(m, std::span<const std::size_t>(order)).peak_bytes >= kahn.lower_bound, "stored order");

  require(same_graph(parse_json_graph(to_json(g).dump()), g), "JSON round trip");
  std::ostringstream graphml, dot;
  bool written = true;
  try {
    write_graphml_graph(graphml, g);
  } catch (const graph_error&) {
    written = false;  // a name GraphML cannot hold (documented)
  }
  if (written) require(same_graph(parse_graphml_graph(graphml.str()), g), "GraphML round trip");
  try {
    write_dot_graph(dot, g);
  } catch (const graph_error&) {
    return;  // a name DOT cannot hold (documented)
  }
  require(same_graph(parse_dot_graph(dot.str()), g), "DOT round trip");
}

/// Runs `read` on the input; file_error is the accepted way to refuse it, then the graph is
/// exercised. Every other exception escapes (libFuzzer reports it).
template <class Read>
int run_reader(const std::uint8_t* data, std::size_t size, Read read) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  dataflow_graph g;
  try {
    g = read(text);
  } catch (const file_error&) {
    return 0;
  }
  exercise(g);
  return 0;
}

}  // namespace memsched::fuzz
