// The deadline clock of serenity_order's searches (order/detail/deadline_clock.hpp). Counted steps
// only: what happens with a deadline long past, none at all, and limits too large to add.

#include <memsched/order/detail/deadline_clock.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <limits>

using memsched::detail::deadline_after;
using memsched::detail::deadline_clock;
using clk = std::chrono::steady_clock;

TEST_CASE("deadline_clock without a deadline never expires") {
  deadline_clock c;
  CHECK(c.unlimited());
  bool any = false;
  for (int i = 0; i < 1'000'000; ++i) any |= c.expired(1000);
  CHECK_FALSE(any);
  CHECK_FALSE(c.read());
  CHECK_FALSE(c.resume());
}

TEST_CASE("deadline_clock reads the clock at the first step, so a past deadline stops at once") {
  deadline_clock c(clk::now() - std::chrono::seconds(1));
  CHECK(c.expired());
  deadline_clock d;
  d.set(clk::now() - std::chrono::seconds(1));  // a deadline set later is read at the next step too
  CHECK(d.expired(1));
  CHECK(d.resume());
  CHECK(d.read());
}

TEST_CASE("deadline_clock: a far deadline does not expire, whatever the step counts") {
  deadline_clock c(clk::now() + std::chrono::hours(1));
  CHECK_FALSE(c.unlimited());
  bool any = false;
  for (int i = 0; i < 100'000; ++i) any |= c.expired(static_cast<std::uint64_t>(i % 7));
  CHECK_FALSE(any);
  // The interval learned is kept across set(): a new past deadline is still seen within one
  // interval of steps (at most 2^24).
  c.set(clk::now() - std::chrono::seconds(1));
  bool seen = false;
  for (std::uint64_t i = 0; i <= (std::uint64_t{1} << 24) && !seen; ++i) seen = c.expired();
  CHECK(seen);
}

TEST_CASE("deadline_after saturates: huge and infinite limits mean no deadline") {
  const auto now = clk::now();
  CHECK(deadline_after(now, std::chrono::duration<double>(std::numeric_limits<double>::infinity())) == clk::time_point::max());
  CHECK(deadline_after(now, std::chrono::duration<double>(1e300)) == clk::time_point::max());
  CHECK(deadline_after(now, std::chrono::duration<double>(1e9)) == clk::time_point::max());
  CHECK(deadline_after(now, std::chrono::duration<double>(2.0)) == now + std::chrono::seconds(2));
  CHECK(deadline_after(now, std::chrono::duration<double>(0)) == now);
  CHECK(deadline_after(clk::time_point::max() - std::chrono::seconds(1), std::chrono::duration<double>(1e8)) == clk::time_point::max());
}
