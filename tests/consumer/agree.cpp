// Built twice by tests/consumer: header-only (memsched::memsched) and with the separately compiled
// library (memsched::compiled, MEMSCHED_SEPARATE_COMPILATION). Both print the same lines or run.sh
// fails: every serenity_order result (order, peak, bound, status, state counts) on random DAGs of
// 6 to 300 vertices (bitset widths 1 to 5 words) under several option sets, each order re-checked
// by the simulator, and the message of a rejected option. Work is bounded by counted limits
// (max_states), so the output is deterministic.
#include <memsched/graph/dataflow_graph.hpp>
#include <memsched/order/serenity.hpp>
#include <memsched/sim/simulate_order.hpp>

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <vector>

namespace {

// A DAG shaped like a network: each vertex reads 1 to 3 of the `window` vertices before it.
memsched::dataflow_graph random_dag(std::size_t n, std::size_t window, std::uint64_t seed) {
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  auto next = [&](std::uint64_t bound) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x % bound;
  };
  memsched::dataflow_graph g(n);
  for (std::size_t v = 0; v < n; ++v) {
    g[v].id = static_cast<std::int64_t>(v);
    g[v].bytes = static_cast<std::int64_t>(1 + next(100));
    g[v].workspace = next(4) == 0 ? static_cast<std::int64_t>(next(50)) : 0;
    if (v == 0) continue;
    const std::size_t lo = v > window ? v - window : 0;
    const std::size_t preds = 1 + next(3);
    for (std::size_t k = 0; k < preds; ++k) {
      const std::size_t u = lo + next(v - lo);
      if (!boost::edge(u, v, g).second) boost::add_edge(u, v, g);
    }
  }
  return g;
}

}  // namespace

int main() {
  int bad = 0;
  const std::size_t sizes[] = {6, 12, 40, 70, 150, 200, 300};
  for (std::size_t n : sizes)
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      const auto g = random_dag(n, n < 40 ? n : 8, seed);
      const memsched::serenity_options opts[] = {
          {.max_states = 20000},
          {.divide = false, .max_states = 20000, .decision_budget = 0},
          {.divide = false, .max_states = 20000, .free_moves = false, .beam_width = 0},
          {.budget = 150, .max_states = 20000},
      };
      for (std::size_t k = 0; k < std::size(opts); ++k) {
        const auto r = memsched::serenity_order(g, opts[k]);
        std::printf("n=%zu seed=%llu options=%zu status=%s peak=%lld lb=%lld expanded=%llu stored=%llu order=", n,
                    static_cast<unsigned long long>(seed), k, std::string(memsched::to_string(r.status)).c_str(),
                    static_cast<long long>(r.peak_bytes), static_cast<long long>(r.lower_bound),
                    static_cast<unsigned long long>(r.stats.states_expanded),
                    static_cast<unsigned long long>(r.stats.states_stored));
        for (auto v : r.order) std::printf("%zu ", v);
        std::printf("\n");
        if (r.order.size() != n || memsched::order_peak(g, r.order) != r.peak_bytes || r.lower_bound > r.peak_bytes) {
          std::printf("  ^ wrong: the simulator disagrees or the bound exceeds the peak\n");
          ++bad;
        }
      }
    }
  try {
    (void)memsched::serenity_order(random_dag(5, 5, 1), memsched::serenity_options{.max_states = 0});
    std::printf("max_states = 0 accepted\n");
    ++bad;
  } catch (const std::invalid_argument& e) {
    std::printf("rejected: %s\n", e.what());
  }
  return bad == 0 ? 0 : 1;
}
