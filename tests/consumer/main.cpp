// Uses memsched as a dependency: orders a diamond graph and checks the peak by hand.
#include <memsched/memsched.hpp>

#include <iostream>

int main() {
  memsched::dataflow_graph g(4);
  const std::int64_t bytes[] = {10, 20, 30, 5};
  for (std::size_t v = 0; v < 4; ++v) {
    g[v].id = static_cast<std::int64_t>(v);
    g[v].bytes = bytes[v];
  }
  add_edge(0, 1, g);
  add_edge(0, 2, g);
  add_edge(1, 3, g);
  add_edge(2, 3, g);
  const auto result = memsched::kahn_order(g);
  // Order 0 1 2 3: running 2 holds 0, 1 and 2 (60); running 3 holds 1, 2 and 3 (55).
  std::cout << "peak " << result.peak_bytes << '\n';
  return result.peak_bytes == 60 ? 0 : 1;
}
