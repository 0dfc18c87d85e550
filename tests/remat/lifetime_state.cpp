// detail::lifetime_state (remat/lifetime_search.hpp), the lifetime search's incremental memory:
// random moves and undos against the memory model. In its own TU because a test that calls the
// class directly compiles its members, and the linker then keeps that copy for the library's
// search too: at -O0 under the sanitizers (CI's second phase), where memsched::compiled is -O1.

#include <memsched/graph/memory_graph.hpp>
#include <memsched/remat/lifetime_search.hpp>
#include <memsched/sim/simulate_order.hpp>

#include "../support/random_dag.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <vector>

using namespace memsched;
using namespace memsched::testing;

TEST_CASE("lifetime_state: the incremental slot memory equals the simulated peak after random moves and undos") {
  // Lives built by hand through detail::lifetime_state: after every move the largest slot memory
  // must be the peak the memory model finds for the state's compute sequence (exact without
  // in-place outputs), and undo must restore the previous memory exactly.
  std::size_t moves = 0;
  for (std::uint64_t seed = 0; seed < 30; ++seed) {
    auto d = random_dag(8 + seed % 10, 0.3, seed + 900, 70, seed % 2 == 0);
    if (seed % 3 == 1) d = with_random_outputs(d, seed);
    const memory_graph g(d);
    const std::vector<std::size_t> order(g.topological_order().begin(), g.topological_order().end());
    const std::size_t n = g.size();
    const std::int64_t budget = order_peak(g, order) / 2;
    memsched::detail::lifetime_state st(g, order, budget);
    auto largest = [&] {
      std::int64_t m = 0, over = 0;
      for (std::size_t p = 0; p < n; ++p) {
        m = std::max(m, st.memory(p));
        over += std::max<std::int64_t>(0, st.memory(p) - budget);
      }
      CHECK(over == st.over());
      return m;
    };
    auto memories = [&] {
      std::vector<std::int64_t> m(n);
      for (std::size_t p = 0; p < n; ++p) m[p] = st.memory(p);
      return m;
    };
    CHECK(largest() == order_peak(g, order));
    std::mt19937_64 rng(seed);
    for (int step = 0; step < 40; ++step) {
      INFO("seed " << seed << " step " << step);
      const std::size_t v = rng() % n;
      const auto s = static_cast<memsched::detail::lifetime_state::slot>(rng() % n);
      const auto before = memories();
      const std::size_t m = st.mark();
      if (s > st.pos(v) && !st.has_start(v, s)) {
        st.add_start(v, s);
        for (auto x : g.predecessors(v)) st.add_demand(x, s);
      } else if (st.starts(v).size() > 1) {
        st.unrecompute(v, st.starts(v)[1 + rng() % (st.starts(v).size() - 1)]);
      } else {
        continue;
      }
      ++moves;
      CHECK(largest() == memsched::detail::sequence_peak_cost(g, st.sequence()).first);
      if (rng() % 4 == 0) {
        st.undo(m);
        CHECK(memories() == before);
      }
      st.commit();
    }
  }
  CHECK(moves > 300);
}
