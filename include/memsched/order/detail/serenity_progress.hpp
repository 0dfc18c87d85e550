#pragma once
// Progress of serenity_order for its observer: the segments' incumbents and bounds combined into
// the whole graph's (the peak of the concatenated order is the largest base + segment peak; a
// bound is the largest of the whole graph's simple bound and base + segment bound), reported only
// when they improve, one report at a time. Internal.

#include <memsched/core/observer.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <mutex>
#include <vector>

namespace memsched::detail {

class serenity_progress {
 public:
  /// `bases`: the base of every segment; `whole_lb`: a proven bound of the whole graph.
  serenity_progress(observer_ref observer, std::chrono::steady_clock::time_point start, std::vector<std::int64_t> bases,
                    std::int64_t whole_lb)
      : observer_(observer), start_(start), base_(std::move(bases)), peak_(base_.size(), unknown),
        bound_(base_.size(), std::numeric_limits<std::int64_t>::min()), reported_bound_(whole_lb) {}

  /// False when nobody listens (callers skip the bookkeeping).
  [[nodiscard]] bool active() const noexcept { return static_cast<bool>(observer_); }

  /// Segment k's best peak and proven lower bound so far (either may stay the same).
  void update(std::size_t k, std::int64_t peak, std::int64_t bound) {
    if (!observer_) return;
    const std::lock_guard<std::mutex> lock(mutex_);
    peak_[k] = std::min(peak_[k], peak);
    bound_[k] = std::max(bound_[k], bound);
    std::int64_t whole_bound = reported_bound_, whole_peak = std::numeric_limits<std::int64_t>::min();
    for (std::size_t i = 0; i < base_.size(); ++i) {
      if (bound_[i] != std::numeric_limits<std::int64_t>::min()) whole_bound = std::max(whole_bound, base_[i] + bound_[i]);
      whole_peak = peak_[i] == unknown ? unknown : std::max(whole_peak, base_[i] + peak_[i]);
      if (whole_peak == unknown) break;
    }
    if (whole_peak != unknown) whole_bound = std::min(whole_bound, whole_peak);
    report(whole_peak, whole_bound);
  }

  /// The final answer (the reports end with it when it is better than the last one).
  void finish(std::int64_t peak, std::int64_t bound) {
    if (!observer_) return;
    const std::lock_guard<std::mutex> lock(mutex_);
    report(peak, bound);
  }


 private:
  static constexpr std::int64_t unknown = std::numeric_limits<std::int64_t>::max();

  void report(std::int64_t peak, std::int64_t bound) {
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (bound > reported_bound_ || !bound_sent_) {
      reported_bound_ = std::max(reported_bound_, bound);
      bound_sent_ = true;
      observer_.on_bound(t, static_cast<double>(reported_bound_));
    }
    if (peak != unknown && peak < reported_peak_) {
      reported_peak_ = peak;
      observer_.on_incumbent(t, static_cast<double>(peak), static_cast<double>(reported_bound_));
    }
  }

  observer_ref observer_;
  std::chrono::steady_clock::time_point start_;
  std::vector<std::int64_t> base_, peak_, bound_;
  std::int64_t reported_bound_;
  bool bound_sent_ = false;
  std::int64_t reported_peak_ = unknown;
  std::mutex mutex_;
};

}  // namespace memsched::detail
