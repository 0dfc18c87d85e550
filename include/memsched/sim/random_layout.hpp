#pragma once
// Random layout instances of any size for solve_layout (sim/layout.hpp): buffers with random
// lifetimes and sizes on a time axis, in the shape of a network's tensors — many short-lived
// activations, a few long-lived ones (weights, skip connections), sizes spread over orders of
// magnitude. For scaling the layout search beyond the sizes of published instances.

#include <memsched/core/errors.hpp>
#include <memsched/graph/detail/generator_support.hpp>
#include <memsched/sim/layout.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace memsched {

/// Options of make_random_layout.
struct random_layout_options {
  std::size_t buffers = 10000;        ///< Buffers to draw (>= 1).
  std::int64_t horizon = 0;           ///< Time steps of the axis (0: buffers / 2, at least 1).
  double long_lived = 0.05;           ///< Share of buffers living a tenth of the horizon or more, in [0, 1].
  std::int64_t mean_short = 8;        ///< Mean lifetime of the other buffers, in steps (>= 1).
  std::int64_t min_size = 64;         ///< Sizes are log-uniform in [min_size, max_size] (1 <= min <= max).
  std::int64_t max_size = 1 << 20;
  std::int64_t alignment = 1;         ///< Every buffer's alignment; sizes are rounded up to it (>= 1).
  std::uint64_t seed = 0;
};

/// `options.buffers` buffers, each live over a half-open [first, last) inside [0, horizon]: starts
/// uniform; lifetimes 1 + geometric with mean `mean_short` - 1, or, for a `long_lived` share,
/// uniform in [horizon / 10, horizon]; sizes log-uniform in [min_size, max_size] rounded up to the
/// alignment. Deterministic for the same options, on every platform: the draws come from the
/// generators' portable_rng (graph/detail/generator_support.hpp), not from a standard engine or
/// distribution. O(buffers).
/// Throws option_error naming the field for an option out of range, or sizes whose sum could
/// pass 2^63.
[[nodiscard]] inline std::vector<layout_buffer> make_random_layout(const random_layout_options& o = {}) {
  auto fail = [](const char* field, const std::string& what) { throw option_error("make_random_layout", field, what); };
  if (o.buffers == 0) fail("buffers", "must be >= 1");
  if (o.horizon < 0) fail("horizon", "must be >= 0");
  if (!(o.long_lived >= 0 && o.long_lived <= 1)) fail("long_lived", "must be in [0, 1]");
  if (o.mean_short < 1) fail("mean_short", "must be >= 1");
  if (o.min_size < 1 || o.max_size < o.min_size) fail("min_size", "must be >= 1 and <= max_size");
  if (o.alignment < 1) fail("alignment", "must be >= 1");
  const long double most = static_cast<long double>(o.max_size) + static_cast<long double>(o.alignment);
  if (!(most * 2 * static_cast<long double>(o.buffers) < 9.2e18L)) fail("max_size", "times buffers could sum past 2^63 bytes");
  const std::int64_t horizon = o.horizon > 0 ? o.horizon : std::max<std::int64_t>(1, static_cast<std::int64_t>(o.buffers / 2));
  detail::portable_rng rng(o.seed);
  const double log_min = std::log(static_cast<double>(o.min_size)), log_max = std::log(static_cast<double>(o.max_size));
  std::vector<layout_buffer> out(o.buffers);
  for (auto& b : out) {
    std::int64_t length = 1;
    if (rng.uniform01() < o.long_lived) {
      length = rng.between(std::max<std::int64_t>(1, horizon / 10), horizon);
    } else {
      // Geometric by inversion: each further step with probability 1 - 1 / mean_short.
      const double go_on = 1.0 - 1.0 / static_cast<double>(o.mean_short);
      if (go_on > 0) {
        const double extra = std::floor(std::log1p(-rng.uniform01()) / std::log(go_on));
        length += extra < static_cast<double>(horizon) ? static_cast<std::int64_t>(extra) : horizon;
      }
    }
    length = std::min(length, horizon);
    b.first = rng.between(0, horizon - length);
    b.last = b.first + length;
    const auto raw = static_cast<std::int64_t>(std::llround(std::exp(log_min + (log_max - log_min) * rng.uniform01())));
    const std::int64_t size = std::clamp(raw, o.min_size, o.max_size);
    b.size = (size + o.alignment - 1) / o.alignment * o.alignment;
    b.alignment = o.alignment;
  }
  return out;
}

}  // namespace memsched
