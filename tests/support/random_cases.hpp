// Test support: how many random graphs a brute-force cross-check runs. Under the sanitizers (CI's
// second phase) the program runs ~20x slower (the tests' own brute force, at -O0, up to ~35x) and
// the cross-checks' cost is in their solver calls and enumerations, not in code the first graphs
// leave unexercised: they run the first quarter of their seeds there, and the Release phase runs
// all of them. Thresholds on what the seeds must show (how many were
// feasible, proven, ...) scale the same way.
#pragma once

#include <cstdint>

#ifndef MEMSCHED_TEST_UNDER_SANITIZERS
#define MEMSCHED_TEST_UNDER_SANITIZERS 0
#endif

namespace memsched::testing {

/// `n` in Release builds, the first quarter of it (rounded up) under the sanitizers.
constexpr std::uint64_t random_cases(std::uint64_t n) noexcept { return MEMSCHED_TEST_UNDER_SANITIZERS ? (n + 3) / 4 : n; }

}  // namespace memsched::testing
