#pragma once
// Memory accounting of serenity_order's searches: one pool shared by every search that runs at the
// same time (one per thread), and the per-search accountant that reserves in it before every
// growth of a container, so that serenity_options::max_bytes is a hard cap. Internal.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <new>
#include <vector>

namespace memsched::detail {

/// A memory pool shared by the searches that run at the same time (one per thread).
struct serenity_memory_pool {
  std::atomic<std::int64_t> used{0};
  std::atomic<std::int64_t> peak{0};
  std::int64_t cap = std::numeric_limits<std::int64_t>::max();

  /// Reserves `bytes` (may be negative to release); false (and nothing reserved) when over the cap.
  bool reserve(std::int64_t bytes) {
    if (bytes <= 0) {
      used.fetch_add(bytes, std::memory_order_relaxed);
      return true;
    }
    std::int64_t now = used.load(std::memory_order_relaxed);
    do {
      if (now + bytes > cap) return false;
    } while (!used.compare_exchange_weak(now, now + bytes, std::memory_order_relaxed));
    std::int64_t p = peak.load(std::memory_order_relaxed);
    while (now + bytes > p && !peak.compare_exchange_weak(p, now + bytes, std::memory_order_relaxed)) {
    }
    return true;
  }
};

/// The bytes one search holds, reserved in the shared pool before every growth of a container.
class pool_accountant {
 public:
  explicit pool_accountant(serenity_memory_pool& pool) : pool_(pool) {}
  ~pool_accountant() { pool_.reserve(-mine_); }
  pool_accountant(const pool_accountant&) = delete;
  pool_accountant& operator=(const pool_accountant&) = delete;

  /// Reserves `delta` bytes (negative: releases); false when the pool refuses.
  bool account(std::int64_t delta) {
    if (!pool_.reserve(delta)) return false;
    mine_ += delta;
    peak_ = std::max(peak_, mine_);
    return true;
  }
  /// capacity >= want, doubling (at least `least` elements); false when the pool refuses.
  template <class V>
  bool grow(V& v, std::size_t want, std::size_t least = 16) {
    if (v.capacity() >= want) return true;
    const std::size_t cap = std::max(want, std::max(least, v.capacity() * 2));
    const auto delta = static_cast<std::int64_t>((cap - v.capacity()) * sizeof(typename V::value_type));
    if (!account(delta)) return false;
    try {
      v.reserve(cap);
    } catch (const std::bad_alloc&) {
      account(-delta);
      return false;
    }
    return true;
  }
  /// Frees v and its reservation.
  template <class V>
  void release(V& v) {
    account(-static_cast<std::int64_t>(v.capacity() * sizeof(typename V::value_type)));
    V().swap(v);
  }
  /// A vector of `count` copies of `value`, reserved first; false (v untouched) when refused.
  template <class T>
  bool assign_fresh(std::vector<T>& v, std::size_t count, const T& value) {
    const auto bytes = static_cast<std::int64_t>(count * sizeof(T));
    if (!account(bytes)) return false;
    std::vector<T> t;
    try {
      t.assign(count, value);
    } catch (const std::bad_alloc&) {
      account(-bytes);
      return false;
    }
    release(v);
    v.swap(t);
    return true;
  }
  [[nodiscard]] std::int64_t held() const noexcept { return mine_; }
  [[nodiscard]] std::int64_t peak() const noexcept { return peak_; }

 private:
  serenity_memory_pool& pool_;
  std::int64_t mine_ = 0, peak_ = 0;
};

}  // namespace memsched::detail
