// Order your own Boost.Graph graph with Serenity and check the result with the simulator.
//
// The graph below is a user's type: an adjacency_list whose vertices carry the user's own struct.
// memsched reads what it needs (output bytes, here) through a property map, so nothing has to be
// converted by hand. The network is a small "inception" cell: four branches read the same input
// and a concat joins them; the order of the branches decides how many tensors are alive at once.
//
//   build: cmake --build build --target example_order_your_graph
//   run:   build/examples/example_order_your_graph

#include <memsched/graph/node_maps.hpp>
#include <memsched/order/kahn.hpp>
#include <memsched/order/serenity.hpp>
#include <memsched/sim/simulate_order.hpp>

#include <boost/graph/adjacency_list.hpp>

#include <chrono>
#include <cstdint>
#include <iostream>
#include <string>

// The user's own vertex data: memsched does not need to know this type.
struct layer {
  std::string name;
  std::int64_t output_bytes = 0;
};
using network = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, layer>;

int main() {
  network g;
  auto add = [&g](std::string name, std::int64_t kib) { return add_vertex(layer{std::move(name), kib * 1024}, g); };
  const auto input = add("input", 600);
  // Each branch first expands its input (big), then reduces it (small).
  const auto a1 = add("branch_a.expand", 2400), a2 = add("branch_a.reduce", 150);
  const auto b1 = add("branch_b.expand", 1800), b2 = add("branch_b.reduce", 150);
  const auto c1 = add("branch_c.expand", 1200), c2 = add("branch_c.reduce", 150);
  const auto d1 = add("branch_d.pool", 600), d2 = add("branch_d.project", 150);
  const auto concat = add("concat", 600);
  for (auto [x, y] : {std::pair{input, a1}, {a1, a2}, {input, b1}, {b1, b2}, {input, c1}, {c1, c2}, {input, d1},
                      {d1, d2}, {a2, concat}, {b2, concat}, {c2, concat}, {d2, concat}})
    add_edge(x, y, g);

  // The maps memsched reads: vertex index and output size (cost 1 and no workspace by default).
  const auto maps = memsched::make_node_maps(get(boost::vertex_index, g), get(&layer::output_bytes, g));

  // A plain topological order (Kahn's algorithm), as most frameworks run a graph.
  const memsched::order_result plain = memsched::kahn_order(g, maps);

  // Serenity's dynamic program: the order with the smallest peak, proven optimal unless a limit
  // stops it (then status is feasible and lower_bound says how far off it may be).
  const memsched::order_result best = memsched::serenity_order(g, {.time_limit = std::chrono::seconds(5)}, maps);

  // Never trust a schedule you have not simulated: the simulator recomputes the peak from scratch.
  const memsched::order_simulation sim = memsched::simulate_order(g, best.order, maps);
  if (sim.peak_bytes != best.peak_bytes) {
    std::cerr << "simulator disagrees: " << sim.peak_bytes << " != " << best.peak_bytes << "\n";
    return 1;
  }

  std::cout << "Kahn's order peaks at   " << plain.peak_bytes / 1024 << " KiB\n"
            << "Serenity's order peaks at " << best.peak_bytes / 1024 << " KiB (" << best.status
            << ", lower bound " << best.lower_bound / 1024 << " KiB)\n"
            << "order:";
  for (std::size_t v : best.order) std::cout << ' ' << g[v].name;
  std::cout << "\nat the peak (step " << sim.peak_step << ") these tensors are resident:";
  for (std::size_t v : sim.resident_at_peak) std::cout << ' ' << g[v].name;
  std::cout << '\n';
  return best.peak_bytes <= plain.peak_bytes ? 0 : 1;
}
