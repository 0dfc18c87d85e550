#pragma once
// Progress reports of long-running algorithms: one observer mechanism for Serenity, the
// rematerialization solvers (Checkmate, Moccasin, hierarchical) and the solver backends.
//
// An observer is any object with some of these hooks (each optional, detected with `requires`, as
// graph-v2's visitors are):
//
//   void on_incumbent(double seconds, double value, double bound);  // a better answer was found
//   void on_bound(double seconds, double bound);                     // a better proven bound
//   void on_phase(double seconds, std::string_view phase);           // a new phase of the search
//
// `seconds` count from the start of the algorithm's call; `value` is what the algorithm minimises
// (peak bytes for orders, total compute cost for plans, the objective for a backend); `bound` is
// the best proven lower bound so far (NaN when none). Options hold an `observer_ref` to it, so they
// stay plain aggregates: an algorithm calls the hooks through one pointer test, which costs nothing
// measurable (incumbents are rare), and an option struct without an observer reports nothing.
// Hooks are called from the thread that runs the algorithm, one at a time (algorithms that search
// in parallel serialise their reports); they must not throw.

#include <cmath>
#include <limits>
#include <memory>
#include <string_view>
#include <type_traits>

namespace memsched {

/// An observer with no hooks (the default): nothing is reported.
struct null_observer {};

template <class O>
concept observes_incumbents = requires(O& o, double s, double v, double b) { o.on_incumbent(s, v, b); };
template <class O>
concept observes_bounds = requires(O& o, double s, double b) { o.on_bound(s, b); };
template <class O>
concept observes_phases = requires(O& o, double s, std::string_view p) { o.on_phase(s, p); };

/// A non-owning reference to an observer (any object with some of the hooks above). The observer
/// must outlive every call that reports to it. Copying is cheap (four pointers); a
/// default-constructed observer_ref reports nothing.
class observer_ref {
 public:
  constexpr observer_ref() noexcept = default;

  /// Refers to `o`; its hooks are detected here, once. O(1), never throws.
  template <class O>
    requires(!std::is_same_v<std::remove_cv_t<O>, observer_ref>)
  observer_ref(O& o) noexcept  // NOLINT(google-explicit-constructor): options take any observer
      : object_(const_cast<void*>(static_cast<const void*>(std::addressof(o)))) {
    if constexpr (observes_incumbents<O>)
      incumbent_ = [](void* p, double s, double v, double b) { static_cast<O*>(p)->on_incumbent(s, v, b); };
    if constexpr (observes_bounds<O>) bound_ = [](void* p, double s, double b) { static_cast<O*>(p)->on_bound(s, b); };
    if constexpr (observes_phases<O>)
      phase_ = [](void* p, double s, std::string_view ph) { static_cast<O*>(p)->on_phase(s, ph); };
  }

  /// A temporary would dangle: bind a named object.
  template <class O>
    requires(!std::is_lvalue_reference_v<O> && !std::is_same_v<std::remove_cvref_t<O>, observer_ref>)
  observer_ref(O&&) = delete;

  /// True when the observer has at least one hook.
  [[nodiscard]] explicit operator bool() const noexcept { return incumbent_ || bound_ || phase_; }
  [[nodiscard]] bool wants_incumbents() const noexcept { return incumbent_ != nullptr; }

  void on_incumbent(double seconds, double value, double bound = std::numeric_limits<double>::quiet_NaN()) const {
    if (incumbent_) incumbent_(object_, seconds, value, bound);
  }
  void on_bound(double seconds, double bound) const {
    if (bound_) bound_(object_, seconds, bound);
  }
  void on_phase(double seconds, std::string_view phase) const {
    if (phase_) phase_(object_, seconds, phase);
  }

 private:
  void* object_ = nullptr;
  void (*incumbent_)(void*, double, double, double) = nullptr;
  void (*bound_)(void*, double, double) = nullptr;
  void (*phase_)(void*, double, std::string_view) = nullptr;
};

}  // namespace memsched
