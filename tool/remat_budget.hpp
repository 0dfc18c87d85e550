// Budget arguments of the remat and sweep subcommands: bytes ("123456") or a percentage of the
// no-remat (checkpoint-all) peak ("90%").
#pragma once

#include "cli.hpp"

#include <memsched/remat/checkpoint_plan.hpp>

#include <charconv>
#include <cstdint>
#include <string>

namespace memsched_cli {

/// Parses a budget; `no_remat_peak` is only called for percentages.
template <class PeakFn>
std::int64_t parse_budget(const std::string& text, PeakFn&& no_remat_peak, const std::string& option) {
  if (!text.empty() && text.back() == '%') {
    double pct = 0;
    try {
      std::size_t used = 0;
      pct = std::stod(text.substr(0, text.size() - 1), &used);
      if (used != text.size() - 1) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
      throw usage_error("--" + option + ": bad percentage '" + text + "'");
    }
    if (pct < 0) throw usage_error("--" + option + " must not be negative");
    return static_cast<std::int64_t>(pct / 100.0 * static_cast<double>(no_remat_peak()));
  }
  long long v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 0)
    throw usage_error("--" + option + " must be a number of bytes >= 0 or a percentage like 90%, got '" + text + "'");
  return v;
}

}  // namespace memsched_cli
