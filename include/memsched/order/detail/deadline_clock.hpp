#pragma once
// Deadlines of serenity_order's searches, checked after an amount of work that adapts to the cost
// of a step. Internal; see docs/serenity.md ("Time limits").
//
// Why adaptive: a fixed "read the clock every 1,024 steps" is right for cheap steps and wrong for
// dear ones. On a dense 1,000-vertex graph one expansion schedules ~1,000 ready vertices, so 1,024
// of them took ~1.2 s and a 1 s limit stopped after 1.2-1.5 s. The clock is read every
// `interval` steps and the interval is rescaled at each reading so that readings come about every
// check_period of work whatever a step costs (a reading costs ~20 ns: never more than a small
// fraction of the work between two).

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace memsched::detail {

/// start + limit without overflow: limits beyond ~30 years mean "no limit" (time_point::max()).
/// Precondition: limit >= 0 and not NaN (checked by the public function).
inline std::chrono::steady_clock::time_point deadline_after(std::chrono::steady_clock::time_point start,
                                                            std::chrono::duration<double> limit) {
  using clock = std::chrono::steady_clock;
  if (!(limit.count() < 1e9)) return clock::time_point::max();
  const auto d = std::chrono::duration_cast<clock::duration>(limit);
  return start > clock::time_point::max() - d ? clock::time_point::max() : start + d;
}

/// A deadline that counts steps of work and reads the clock every `interval` steps, the interval
/// chosen so that a reading comes about every check_period of work. Without a deadline
/// (time_point::max()) the clock is never read.
class deadline_clock {
 public:
  using clock = std::chrono::steady_clock;
  /// The work between two readings of the clock the interval aims at.
  static constexpr std::chrono::nanoseconds check_period = std::chrono::milliseconds(10);

  explicit deadline_clock(clock::time_point deadline = clock::time_point::max()) { set(deadline); }

  /// A new deadline; the interval learned so far is kept (the cost of a step does not change).
  void set(clock::time_point deadline) {
    deadline_ = deadline;
    left_ = unlimited() ? never : std::min(left_, interval_);
    if (!unlimited()) last_ = clock::now();
  }

  [[nodiscard]] bool unlimited() const noexcept { return deadline_ == clock::time_point::max(); }
  [[nodiscard]] clock::time_point deadline() const noexcept { return deadline_; }

  /// Counts `steps` steps of work; true when the deadline has passed (found at a reading).
  [[nodiscard]] bool expired(std::uint64_t steps = 1) {
    if (left_ > steps) {
      left_ -= steps;
      return false;
    }
    return read();
  }

  /// Steps until the next reading. A hot loop may count down a local copy (a member it would
  /// reload after every store through a uint64_t pointer) and call read() when it runs out.
  [[nodiscard]] std::uint64_t steps_left() const noexcept { return left_; }

  /// Reads the clock when work resumes after a pause (another search ran meanwhile): true when the
  /// deadline has passed; the pause does not count as work of this clock's steps.
  [[nodiscard]] bool resume() {
    if (unlimited()) return false;
    const auto now = clock::now();
    if (now >= deadline_) return true;
    last_ = now;
    left_ = interval_;
    return false;
  }

  /// Reads the clock now, whatever the count: true when the deadline has passed.
  [[nodiscard]] bool read() {
    if (unlimited()) {
      left_ = never;
      return false;
    }
    const auto now = clock::now();
    if (now >= deadline_) return true;
    // Rescale: interval * check_period / (time since the last reading), at most x4 up (a run of
    // cheap steps must not hide a later dear one for long) and at least 1.
    const auto spent = std::max<std::int64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(now - last_).count(), 1);
    const double scaled = static_cast<double>(interval_) * static_cast<double>(check_period.count()) / static_cast<double>(spent);
    interval_ = static_cast<std::uint64_t>(std::clamp(scaled, 1.0, static_cast<double>(std::min(interval_ * 4, max_interval))));
    // Never past the deadline by more than one period at the current rate.
    const auto to_go = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline_ - now).count();
    if (to_go < check_period.count())
      interval_ = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(static_cast<double>(interval_) * static_cast<double>(to_go) /
                                                                         static_cast<double>(check_period.count())));
    left_ = interval_;
    last_ = now;
    return false;
  }

 private:
  static constexpr std::uint64_t never = ~std::uint64_t{0};
  static constexpr std::uint64_t max_interval = std::uint64_t{1} << 24;
  clock::time_point deadline_ = clock::time_point::max();
  clock::time_point last_{};
  std::uint64_t interval_ = 1;
  std::uint64_t left_ = 1;
};

}  // namespace memsched::detail
