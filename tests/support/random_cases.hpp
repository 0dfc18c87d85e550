// Test support: how many random graphs a brute-force cross-check runs. Under the sanitizers (CI's
// second phase) the program runs ~20x slower and the cross-checks' cost is in their solver calls,
// not in code the first graphs leave unexercised: they run the first half of their seeds there, and
// the Release phase runs all of them. Thresholds on what the seeds must show (how many were
// feasible, proven, ...) scale the same way.
#pragma once

#include <cstdint>

#ifndef MEMSCHED_TEST_UNDER_SANITIZERS
#define MEMSCHED_TEST_UNDER_SANITIZERS 0
#endif

namespace memsched::testing {

/// `n` in Release builds, the first half of it (rounded up) under the sanitizers.
constexpr std::uint64_t random_cases(std::uint64_t n) noexcept { return MEMSCHED_TEST_UNDER_SANITIZERS ? (n + 1) / 2 : n; }

}  // namespace memsched::testing
