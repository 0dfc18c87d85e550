#pragma once
// The wall-clock budget of one call of a solver-based rematerialization algorithm (Checkmate,
// Moccasin): it runs from the call's entry to its return, so graph conversion, model building,
// start solutions, every backend call, decoding and repair all spend the same limit.

#include <memsched/core/status.hpp>
#include <memsched/solver/solver_options.hpp>

#include <algorithm>
#include <chrono>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace memsched::detail {

class call_deadline {
 public:
  using clock = std::chrono::steady_clock;

  /// `limit` counted from `start` (see effective_time_limit: huge limits are none, NaN is 0).
  call_deadline(clock::time_point start, const std::optional<std::chrono::duration<double>>& limit) : start_(start) {
    if (const auto l = effective_time_limit(limit)) {
      limit_ = l->count();
      deadline_ = start + std::chrono::duration_cast<clock::duration>(*l);
    }
  }

  /// A deadline that passes at its `checks`-th passed() query instead of at a time (its copies
  /// count together): a counted, clock-free limit for tests of how much work a search does
  /// between two checks. left() is infinite before it passes and 0 after.
  [[nodiscard]] static call_deadline after_checks(std::size_t checks) {
    call_deadline d(clock::now(), std::nullopt);
    d.checks_left_ = std::make_shared<std::size_t>(checks);
    return d;
  }
  /// The part of what is left that ends after `fraction` of it (a sub-search's share); a counted
  /// deadline shares its count.
  [[nodiscard]] call_deadline share(double fraction) const {
    if (checks_left_ || !deadline_) return *this;
    return call_deadline(start_, std::chrono::duration<double>(elapsed() + std::max(0.0, left()) * fraction));
  }

  [[nodiscard]] bool limited() const noexcept { return deadline_.has_value() || checks_left_ != nullptr; }
  /// When the call started (for observers that report seconds since then).
  [[nodiscard]] clock::time_point start() const noexcept { return start_; }
  /// The limit in seconds; infinity when there is none.
  [[nodiscard]] double limit() const noexcept { return limit_; }
  [[nodiscard]] double elapsed() const { return std::chrono::duration<double>(clock::now() - start_).count(); }
  /// Seconds left (<= 0 once passed); infinity when there is no limit.
  [[nodiscard]] double left() const {
    if (checks_left_) return *checks_left_ == 0 ? 0.0 : std::numeric_limits<double>::infinity();
    return deadline_ ? std::chrono::duration<double>(*deadline_ - clock::now()).count() : std::numeric_limits<double>::infinity();
  }
  [[nodiscard]] bool passed() const {
    if (checks_left_) {
      if (*checks_left_ > 0) --*checks_left_;
      return *checks_left_ == 0;
    }
    return deadline_ && clock::now() >= *deadline_;
  }
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
  /// Reserves `factor` times the time since `build_start` (an elapsed() taken before building a
  /// model) for freeing it.
  void reserve_for_build(double build_start, double factor) { reserve(factor * (elapsed() - build_start)); }

  /// The time limit for a backend call that must end by this deadline: what is left minus the
  /// reserve and minus what a backend may overrun (backend_overrun_allowance), at most `at_most` seconds; nullopt without
  /// a limit (and at_most infinite).
  [[nodiscard]] std::optional<std::chrono::duration<double>> for_backend(double at_most = std::numeric_limits<double>::infinity()) const {
    double l = left() - reserve_;
    if (l != std::numeric_limits<double>::infinity()) l = backend_limit_within(l);
    return call_deadline_limit(std::min(l, at_most));
  }
  /// False once for_backend() would give a backend no time (a call would still cost a check of
  /// the whole model: skip it).
  [[nodiscard]] bool backend_time_left() const {
    const auto l = for_backend();
    return !l || l->count() > 0;
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
  std::shared_ptr<std::size_t> checks_left_;  // a counted deadline (after_checks); one thread only
};

/// Calls `solve(options)` (a backend call) with options.time_limit = deadline.for_backend(at_most);
/// returns a time_limit result with message `no_time` instead when deadline.backend_time_left() is
/// false (a call would still cost a check of the whole model).
template <class Solve>
[[nodiscard]] solver_result solve_in_time_left(const call_deadline& deadline, solver_options options, Solve&& solve,
                                               double at_most = std::numeric_limits<double>::infinity(), std::string no_time = {}) {
  if (!deadline.backend_time_left()) {
    solver_result r;
    r.status = solve_status::time_limit;
    r.message = std::move(no_time);
    return r;
  }
  options.time_limit = deadline.for_backend(at_most);
  return solve(static_cast<const solver_options&>(options));
}

}  // namespace memsched::detail
