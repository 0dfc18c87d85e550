// make_random_layout: the buffers it promises, the same for the same options, option errors; and
// solve_layout on an instance past the exact search's memory cap (valid, no worse than greedy by size).

#include <memsched/core/errors.hpp>
#include <memsched/sim/arena.hpp>
#include <memsched/sim/layout.hpp>
#include <memsched/sim/random_layout.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

using namespace memsched;

TEST_CASE("make_random_layout: lifetimes inside the horizon, sizes in range and aligned, deterministic per seed") {
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    CAPTURE(seed);
    const random_layout_options o{.buffers = 500 + seed * 37, .horizon = seed % 2 ? 0 : 200, .long_lived = 0.1, .mean_short = 1 + seed % 9,
                                  .min_size = 16, .max_size = 4096, .alignment = seed % 3 ? 1 : 64, .seed = seed};
    const auto a = make_random_layout(o), b = make_random_layout(o);
    REQUIRE(a.size() == o.buffers);
    const std::int64_t horizon = o.horizon > 0 ? o.horizon : static_cast<std::int64_t>(o.buffers / 2);
    std::size_t long_lived = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      const auto& x = a[i];
      CHECK(x.first >= 0);
      CHECK(x.first < x.last);
      CHECK(x.last <= horizon);
      CHECK(x.size >= o.min_size);
      CHECK(x.size <= (o.max_size + o.alignment - 1) / o.alignment * o.alignment);
      CHECK(x.size % o.alignment == 0);
      CHECK(x.alignment == o.alignment);
      CHECK_FALSE(x.offset.has_value());
      CHECK((x.first == b[i].first && x.last == b[i].last && x.size == b[i].size));
      long_lived += x.last - x.first >= std::max<std::int64_t>(1, horizon / 10) && horizon >= 100;
    }
    if (horizon >= 100) CHECK(long_lived >= o.buffers / 40);  // a tenth asked; a quarter of it at least
    random_layout_options other = o;
    other.seed += 1000;
    const auto c = make_random_layout(other);
    CHECK_FALSE(std::equal(a.begin(), a.end(), c.begin(), [](const layout_buffer& x, const layout_buffer& y) {
      return x.first == y.first && x.last == y.last && x.size == y.size;
    }));
  }
}

TEST_CASE("make_random_layout: options out of range name the field") {
  CHECK_THROWS_WITH_AS((void)make_random_layout({.buffers = 0}), doctest::Contains("buffers"), option_error);
  CHECK_THROWS_WITH_AS((void)make_random_layout({.long_lived = 1.5}), doctest::Contains("long_lived"), option_error);
  CHECK_THROWS_WITH_AS((void)make_random_layout({.mean_short = 0}), doctest::Contains("mean_short"), option_error);
  CHECK_THROWS_WITH_AS((void)make_random_layout({.min_size = 10, .max_size = 5}), doctest::Contains("min_size"), option_error);
  CHECK_THROWS_WITH_AS((void)make_random_layout({.alignment = 0}), doctest::Contains("alignment"), option_error);
  CHECK_THROWS_WITH_AS((void)make_random_layout({.buffers = 1000000, .max_size = std::int64_t{1} << 60}), doctest::Contains("max_size"),
                       option_error);
}

TEST_CASE("solve_layout on 10,000 random buffers (past the exact search's memory cap): valid, no worse than greedy by size, bound = the load") {
  const auto buffers = make_random_layout({.buffers = 10000, .seed = 3});
  const layout_result r = solve_layout(buffers, {.node_limit = 20000});
  REQUIRE(check_layout(buffers, r.offsets).valid);
  // Greedy by size of the same buffers, by plan_arena's placement, as the reference.
  std::vector<detail::arena_buffer> steps;
  for (std::size_t i = 0; i < buffers.size(); ++i)
    steps.push_back({i, false, buffers[i].size, static_cast<std::size_t>(buffers[i].first), static_cast<std::size_t>(buffers[i].last - 1)});
  std::stable_sort(steps.begin(), steps.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::int64_t> offsets;
  detail::place_greedy_by_size(steps, offsets);
  std::int64_t greedy = 0;
  for (std::size_t k = 0; k < steps.size(); ++k) greedy = std::max(greedy, offsets[k] + steps[k].size);
  CHECK(r.arena_bytes <= greedy);
  CHECK_FALSE(r.stats.searched);  // the case this covers: greedy layouts only, still valid and bounded
  CHECK(r.lower_bound == r.stats.max_load);
  CHECK(r.lower_bound <= r.arena_bytes);
  CHECK((r.status == solve_status::optimal) == (r.arena_bytes == r.lower_bound));
}
