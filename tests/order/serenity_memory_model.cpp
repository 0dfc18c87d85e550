// Serenity's searches keep a fast copy of the memory model on signatures (forward_step and
// backward_step, detail/signature_tables.hpp: the layered DP and both decision searches call
// them). Here every step of random orders of random graphs is compared with the one model,
// sim/memory_model.hpp, and with the rule as the tests write it out (support/memory_rule.hpp):
// forward from every down-set, backward from every up-set, with and without in-place vertices
// (issue 12).

#include <memsched/order/detail/signature_tables.hpp>
#include <memsched/sim/memory_model.hpp>

#include "../support/memory_rule.hpp"
#include "../support/random_dag.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <vector>

using namespace memsched;
using namespace memsched::testing;

namespace {

// A random topological order (ready vertices picked at random).
std::vector<std::size_t> random_order(const memory_graph& g, std::mt19937_64& rng) {
  std::vector<std::size_t> indegree(g.size()), ready, order;
  for (std::size_t v = 0; v < g.size(); ++v)
    if ((indegree[v] = g.in_degree(v)) == 0) ready.push_back(v);
  while (!ready.empty()) {
    const std::size_t k = rng() % ready.size();
    const std::size_t v = ready[k];
    ready.erase(ready.begin() + static_cast<std::ptrdiff_t>(k));
    order.push_back(v);
    for (auto w : g.successors(v))
      if (--indegree[w] == 0) ready.push_back(w);
  }
  return order;
}

// Compares forward_step<W> and backward_step<W> with `steps` (the steps along `order`, by default
// memory_model's); returns the steps checked.
template <std::size_t W>
std::size_t check_order(const memory_graph& g, const detail::signature_tables& t, const std::vector<std::size_t>& order,
                        std::vector<memory_step> steps = {}) {
  if (steps.empty()) steps = walk(g, order);
  const std::size_t n = g.size();
  std::vector<std::uint64_t> sig(t.words, 0);
  std::int64_t live = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t v = order[k];
    CAPTURE(k);
    CAPTURE(v);
    REQUIRE(live == steps[k].live_before);
    detail::set_bit(sig.data(), v);
    const detail::search_step s = detail::forward_step<W>(g, t, v, sig.data(), live);
    CHECK(s.transient == steps[k].transient);
    CHECK(s.live == steps[k].live_after);
    live = s.live;
  }
  // Backward from the end: the up-set grows by the vertex just stepped over.
  std::vector<std::uint64_t> later(t.words, 0);
  live = n > 0 ? steps[n - 1].live_after : 0;
  std::int64_t outputs = 0;
  for (std::size_t v = 0; v < n; ++v) outputs += g.is_output(v) ? g.bytes(v) : 0;
  CHECK(live == outputs);  // where the backward search starts
  for (std::size_t k = n; k-- > 0;) {
    const std::size_t v = order[k];
    CAPTURE(k);
    const detail::search_step s = detail::backward_step<W>(g, t, v, later.data(), live);
    CHECK(s.transient == steps[k].transient);
    CHECK(s.live == steps[k].live_before);
    live = s.live;
    detail::set_bit(later.data(), v);
  }
  return 2 * n;
}

// check_order at the run-time width (W = 0) and at the width the searches pick for t.words
// (detail::with_small_width: 1, 2 or 4 words, 0 beyond).
std::size_t check_both_widths(const memory_graph& g, const detail::signature_tables& t, const std::vector<std::size_t>& order,
                              const std::vector<memory_step>& steps) {
  std::size_t checked = check_order<0>(g, t, order, steps);
  detail::with_small_width(t.words, [&]<std::size_t W>() {
    if constexpr (W != 0) checked += check_order<W>(g, t, order, steps);
  });
  return checked;
}

struct random_run {
  std::size_t checked = 0;  // steps compared, forward and backward, over all widths
  std::size_t reusing = 0;  // steps at which a vertex took over an input's buffer
};

// 300 random graphs, 3 random orders each; sizes across the word boundaries the searches
// specialise (1-4 words) and beyond. The steps are the rule's (rule_steps), checked equal to the
// model's (walk), then to the fast copies. `inplace`: sizes 1-3 (so that many inputs have the size
// of their consumer) and half the vertices in-place; otherwise sizes 1-100 and no in-place vertex.
random_run check_random_graphs(bool inplace, std::uint64_t order_seed) {
  std::mt19937_64 rng(order_seed);
  random_run run;
  for (std::uint64_t seed = 0; seed < 300; ++seed) {
    CAPTURE(seed);
    const std::size_t n = std::vector<std::size_t>{5, 12, 40, 63, 64, 65, 130, 200, 257, 330}[seed % 10];
    memory_graph_data d = random_dag(n, 6.0 / static_cast<double>(n), seed, inplace ? 3 : 100, seed % 2 == 1);
    if (seed % 3 == 0) d = with_random_outputs(std::move(d), seed);
    const memory_graph g(inplace ? with_random_inplace(std::move(d), seed) : std::move(d));
    const detail::signature_tables t(g);
    REQUIRE(t.words == ((n + 63) / 64 == 3 ? 4 : (n + 63) / 64));  // 3 words padded to 4 (search_words)
    for (int rep = 0; rep < 3; ++rep) {
      const auto order = random_order(g, rng);
      REQUIRE(order.size() == n);
      const std::vector<memory_step> steps = rule_steps(g, order);
      CHECK(walk(g, order) == steps);  // the one model honours the rule (issue 12)
      for (const memory_step& s : steps) run.reusing += s.reused != memory_step::none ? 1 : 0;
      run.checked += check_both_widths(g, t, order, steps);
    }
  }
  return run;
}

}  // namespace

TEST_CASE("forward_step and backward_step agree with memory_model on random graphs") {
  const random_run run = check_random_graphs(false, 12345);
  CHECK(run.checked > 100000);
  CHECK(run.reusing == 0);
}

TEST_CASE("forward_step and backward_step agree with the in-place rule on random graphs") {
  const random_run run = check_random_graphs(true, 777);
  CHECK(run.checked > 100000);
  CHECK(run.reusing > 5000);  // the rule did apply, often
}

TEST_CASE("the tables hold the model's per-vertex numbers") {
  // a -> b -> c, a -> c; d is an unread sink (freed at once), c an output; workspaces.
  memory_graph_data d;
  d.num_nodes = 4;
  d.edges = {{0, 1}, {1, 2}, {0, 2}};
  d.bytes = {10, 20, 30, 40};
  d.workspace = {1, 2, 3, 4};
  d.cost = {1, 1, 1, 1};
  d.outputs = std::vector<std::size_t>{2};
  const memory_graph g(std::move(d));
  const detail::signature_tables t(g);
  CHECK(t.tadd == std::vector<std::int64_t>{11, 22, 33, 44});
  CHECK(t.alloc == std::vector<std::int64_t>{10, 20, 30, 0});  // d: nobody reads it
  // Order a, b, d, c: hand-computed steps.
  const std::vector<std::size_t> order{0, 1, 3, 2};
  const auto steps = walk(g, order);
  CHECK(steps[0].transient == 11);
  CHECK(steps[1].transient == 10 + 22);
  CHECK(steps[2].transient == 30 + 44);
  CHECK(steps[3].transient == 30 + 33);
  CHECK(steps[3].live_after == 30);  // only the output c
  CHECK(check_order<0>(g, t, order) == 8);
}

TEST_CASE("the tables of an in-place graph: candidate inputs, saving and the smallest step") {
  // x -> r (in-place, same size: candidate), x -> s, r -> c, (c, s) -> y (in-place, both inputs
  // of its size: candidates), y an output; o -> z with o a graph output (never a candidate).
  memory_graph_data d;
  d.num_nodes = 7;
  d.edges = {{0, 1}, {0, 2}, {1, 3}, {3, 4}, {2, 4}, {5, 6}};
  d.bytes = {8, 8, 2, 2, 2, 5, 5};
  d.workspace = {0, 1, 0, 0, 0, 0, 0};
  d.cost.assign(7, 1);
  d.outputs = std::vector<std::size_t>{4, 5, 6};
  d.inplace = {0, 1, 0, 0, 1, 0, 1};
  const memory_graph g(std::move(d));
  const detail::signature_tables t(g);
  CHECK(t.saving == std::vector<std::int64_t>{0, 8, 0, 0, 2, 0, 0});
  CHECK(t.tmin == std::vector<std::int64_t>{8, 1, 2, 2, 0, 5, 5});
  CHECK(std::vector<std::uint32_t>(t.reuse_inputs(1).begin(), t.reuse_inputs(1).end()) == std::vector<std::uint32_t>{0});
  CHECK(std::vector<std::uint32_t>(t.reuse_inputs(4).begin(), t.reuse_inputs(4).end()) == std::vector<std::uint32_t>{2, 3});
  // r before s: x does not die at r (s still reads it), so r needs its own bytes.
  std::vector<std::uint64_t> sig(t.words, 0);
  detail::set_bit(sig.data(), 0);
  detail::set_bit(sig.data(), 1);
  CHECK(detail::forward_step<0>(g, t, 1, sig.data(), 8).transient == 8 + 8 + 1);
  // s before r: x dies at r, whose output takes over x's buffer.
  detail::set_bit(sig.data(), 2);
  CHECK(detail::forward_step<0>(g, t, 1, sig.data(), 10).transient == 10 + 1);
  CHECK(detail::forward_step<0>(g, t, 1, sig.data(), 10).live == 10);  // x freed, r resident: net 0
  CHECK(check_order<0>(g, t, {5, 6, 0, 2, 1, 3, 4}, rule_steps(g, std::vector<std::size_t>{5, 6, 0, 2, 1, 3, 4})) == 14);
  CHECK(check_order<0>(g, t, {0, 1, 2, 3, 4, 5, 6}, rule_steps(g, std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6})) == 14);
}

TEST_CASE("a graph without in-place vertices has no candidate lists and saves nothing") {
  const memory_graph g(random_dag(40, 0.15, 5, 3));
  const detail::signature_tables t(g);
  CHECK(t.reuse_offsets.empty());
  CHECK(t.reuse_list.empty());
  CHECK(std::all_of(t.saving.begin(), t.saving.end(), [](std::int64_t x) { return x == 0; }));
  CHECK(t.tmin == t.tadd);
}
