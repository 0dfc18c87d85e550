#pragma once
// UTF-8 well-formedness (RFC 3629), shared by the JSON reader (strings) and the graph checks
// (names, ops and kinds of every reader). Internal.

#include <cstddef>
#include <string_view>

namespace memsched::detail {

/// The length (2-4) of the well-formed multi-byte UTF-8 sequence that starts at p[0] (a byte >= 0x80),
/// with `left` bytes available from p; 0 when it is not one (RFC 3629: no overlong forms, no
/// surrogates, nothing above U+10FFFF, no truncated sequence). O(1).
[[nodiscard]] inline std::size_t utf8_sequence_length(const unsigned char* p, std::size_t left) noexcept {
  const auto cont = [&](std::size_t k, unsigned char lo = 0x80, unsigned char hi = 0xBF) { return k < left && p[k] >= lo && p[k] <= hi; };
  const unsigned char c = p[0];
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    const unsigned char lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    return cont(1, lo, hi) && cont(2) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    const unsigned char lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    return cont(1, lo, hi) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

/// True when `text` is well-formed UTF-8: what JSON requires, so what every reader requires of
/// names, ops and kinds (a GraphML or DOT name that is not would make the graph impossible to
/// write as JSON). O(size).
[[nodiscard]] inline bool valid_utf8(std::string_view text) noexcept {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  for (std::size_t i = 0; i < n;) {
    if (p[i] < 0x80) {
      ++i;
      continue;
    }
    const std::size_t len = utf8_sequence_length(p + i, n - i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

}  // namespace memsched::detail
