#pragma once
// The wall-clock budget of one call of a solver-based rematerialization algorithm (Checkmate,
// Moccasin): it runs from the call's entry to its return, so graph conversion, model building,
// start solutions, every backend call, decoding and repair all spend the same limit (issue 11).

#include <memsched/solver/solver_options.hpp>

#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>

namespace memsched::detail {

class call_deadline {
 public:
  using clock = std::chrono::steady_clock;

  /// No limit.
  call_deadline() : start_(clock::now()) {}
  /// `limit` counted from `start` (see effective_time_limit: huge limits are none, NaN is 0).
  call_deadline(clock::time_point start, const std::optional<std::chrono::duration<double>>& limit) : start_(start) {
    if (const auto l = effective_time_limit(limit)) {
      limit_ = l->count();
      deadline_ = start + std::chrono::duration_cast<clock::duration>(*l);
    }
  }

  [[nodiscard]] bool limited() const noexcept { return deadline_.has_value(); }
  [[nodiscard]] clock::time_point start() const noexcept { return start_; }
  /// The limit in seconds; infinity when there is none.
  [[nodiscard]] double limit() const noexcept { return limit_; }
  [[nodiscard]] double elapsed() const { return std::chrono::duration<double>(clock::now() - start_).count(); }
  /// Seconds left (<= 0 once passed); infinity when there is no limit.
  [[nodiscard]] double left() const {
    return deadline_ ? std::chrono::duration<double>(*deadline_ - clock::now()).count() : std::numeric_limits<double>::infinity();
  }
  [[nodiscard]] bool passed() const { return deadline_ && clock::now() >= *deadline_; }
  /// The time limit for a backend call: what is left, at most `at_most` seconds; nullopt without a
  /// limit (and at_most infinite).
  [[nodiscard]] std::optional<std::chrono::duration<double>> remaining(double at_most = std::numeric_limits<double>::infinity()) const {
    return call_deadline_limit(std::min(left(), at_most));
  }
  /// Keeps `seconds` of the time for the work after the last backend call (for_backend leaves
  /// them out). Freeing a model costs up to about what building it did, more right after a fork
  /// (a 225,000-row Checkmate model: built in 50-200 ms, freed in 36 ms, 70 ms while a killed
  /// child still shares its pages, on a loaded 2-core machine), so callers reserve 1.5 times the
  /// build's time.
  void reserve(double seconds) noexcept { reserve_ = std::max(seconds, 0.0); }

  /// The time limit for a backend call that must end by this deadline: what is left minus the
  /// reserve and minus what a backend may overrun (backend_overrun_allowance), at most `at_most` seconds; nullopt without
  /// a limit (and at_most infinite).
  [[nodiscard]] std::optional<std::chrono::duration<double>> for_backend(double at_most = std::numeric_limits<double>::infinity()) const {
    double l = left() - reserve_;
    if (l != std::numeric_limits<double>::infinity()) {
      // The largest x with x + backend_overrun_allowance(x) <= l (0.03 x + 0.03, capped at 1 s).
      l = std::max((l - 0.03) / 1.03, l - 1.0);
    }
    return call_deadline_limit(std::min(l, at_most));
  }
  /// False once for_backend() would give a backend no time (a call would still cost a check of
  /// the whole model: skip it).
  [[nodiscard]] bool backend_time_left() const {
    const auto l = for_backend();
    return !l || l->count() > 0;
  }
  /// A deadline `seconds` after the start, or this one if that is later.
  [[nodiscard]] call_deadline until(double seconds) const {
    call_deadline d = *this;
    if (seconds < d.limit_) {
      d.limit_ = std::max(seconds, 0.0);
      d.deadline_ = start_ + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(d.limit_));
    }
    return d;
  }

 private:
  static std::optional<std::chrono::duration<double>> call_deadline_limit(double seconds) {
    if (seconds == std::numeric_limits<double>::infinity()) return std::nullopt;
    return std::chrono::duration<double>(std::max(0.0, seconds));
  }

  clock::time_point start_;
  double limit_ = std::numeric_limits<double>::infinity();
  double reserve_ = 0;
  std::optional<clock::time_point> deadline_;
};

}  // namespace memsched::detail
