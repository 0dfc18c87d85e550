#pragma once
// A hash combiner for the keys the searches remember (canonical forms of subgraphs, search
// states): one 64-bit word at a time, so a key of any length hashes in one pass without a
// hasher object per element type.

#include <cstdint>

namespace memsched::detail {

/// `h` with `x` mixed in (boost's hash_combine step, then a 64-bit finaliser so that nearby
/// words spread over every bit).
inline std::uint64_t mix_hash(std::uint64_t h, std::uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return h ^ (x ^ (x >> 31));
}

}  // namespace memsched::detail
