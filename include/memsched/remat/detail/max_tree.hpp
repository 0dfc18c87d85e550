#pragma once
// A lazy segment tree over positions (range add, range max, point erase): the memory profile of a
// compute sequence in use_spare_memory (remat/detail/plan_builder.hpp).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace memsched::detail {

/// Range add / range max / point assign over positions (a lazy segment tree).
class max_tree {
 public:
  explicit max_tree(const std::vector<std::int64_t>& values) : n_(std::max<std::size_t>(values.size(), 1)) {
    size_ = 1;
    while (size_ < n_) size_ *= 2;
    max_.assign(2 * size_, lowest);
    add_.assign(2 * size_, 0);
    for (std::size_t i = 0; i < values.size(); ++i) max_[size_ + i] = values[i];
    for (std::size_t i = size_; i-- > 1;) max_[i] = std::max(max_[2 * i], max_[2 * i + 1]);
  }
  [[nodiscard]] std::int64_t max(std::size_t lo, std::size_t hi) { return query(1, 0, size_ - 1, lo, hi); }
  void add(std::size_t lo, std::size_t hi, std::int64_t d) { update(1, 0, size_ - 1, lo, hi, d); }
  void erase(std::size_t pos) { assign(1, 0, size_ - 1, pos); }

  static constexpr std::int64_t lowest = std::numeric_limits<std::int64_t>::min() / 4;

 private:
  std::int64_t query(std::size_t node, std::size_t l, std::size_t r, std::size_t lo, std::size_t hi) {
    if (hi < l || r < lo) return lowest;
    if (lo <= l && r <= hi) return max_[node];
    const std::size_t mid = (l + r) / 2;
    return add_[node] + std::max(query(2 * node, l, mid, lo, hi), query(2 * node + 1, mid + 1, r, lo, hi));
  }
  void update(std::size_t node, std::size_t l, std::size_t r, std::size_t lo, std::size_t hi, std::int64_t d) {
    if (hi < l || r < lo) return;
    if (lo <= l && r <= hi) {
      max_[node] += d;
      add_[node] += d;
      return;
    }
    const std::size_t mid = (l + r) / 2;
    update(2 * node, l, mid, lo, hi, d);
    update(2 * node + 1, mid + 1, r, lo, hi, d);
    max_[node] = add_[node] + std::max(max_[2 * node], max_[2 * node + 1]);
  }
  void assign(std::size_t node, std::size_t l, std::size_t r, std::size_t pos) {
    if (l == r) {
      max_[node] = lowest;
      add_[node] = 0;
      return;
    }
    const std::size_t mid = (l + r) / 2;
    if (pos <= mid) assign(2 * node, l, mid, pos);
    else assign(2 * node + 1, mid + 1, r, pos);
    max_[node] = add_[node] + std::max(max_[2 * node], max_[2 * node + 1]);
  }
  std::size_t n_, size_ = 1;
  std::vector<std::int64_t> max_, add_;
};

}  // namespace memsched::detail
