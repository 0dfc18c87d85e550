#pragma once
// What the solver-based rematerialization algorithms (Checkmate, Moccasin) share in talking to a
// backend: an observer that turns a backend's reports (model objective, seconds of
// one solve) into the caller's (total cost, seconds since the algorithm started).

#include <memsched/core/observer.hpp>

#include <chrono>
#include <cmath>
#include <string>

namespace memsched::detail {

/// Forwards a backend's on_incumbent / on_bound to `user`, with values multiplied by `scale` and
/// times counted from `t0`; an incumbent no better than `*last` (the best value the algorithm has
/// already reported) is dropped, so the user sees strictly improving values.
struct scaled_observer {
  observer_ref user;
  std::chrono::steady_clock::time_point t0;
  double scale = 1;
  double* last = nullptr;
  double* last_time = nullptr;  ///< When set, receives the time of each incumbent passed on.

  [[nodiscard]] double now() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }
  void on_incumbent(double, double value, double bound) const {
    const double v = value * scale;
    if (last && !(v < *last)) return;
    if (last) *last = v;
    const double t = now();
    if (last_time) *last_time = t;
    user.on_incumbent(t, v, bound * scale);
  }
  void on_bound(double, double bound) const { user.on_bound(now(), bound * scale); }
};

}  // namespace memsched::detail
