#pragma once
// The exact search of solve_layout (sim/layout.hpp): does a layout of the buffers fit a capacity?
// Internal. The buffers here are those that take room (size > 0, a non-empty lifetime), numbered
// 0..n-1.
//
// Time is cut into sections: the maximal sets of buffers live at one time (the maximal cliques of
// the interval graph; each buffer spans a contiguous range of them). Two buffers overlap in time
// if and only if they share a section.
//
// The search places buffers in non-decreasing order of offset (ties by a static preorder), each
// at its "minimum offset": the lowest offset, aligned, above every placed buffer it overlaps in
// time. Every layout can be pushed down, buffer by buffer from the lowest, into one of these
// canonical layouts, so searching them is complete. Pruning, each keeping at least one canonical
// layout when one fits:
// - section inference: the bytes still to place in a section sit above its floor (the least
//   minimum offset of its unplaced buffers, and at least the offset of the last placement), so
//   floor + remaining <= capacity;
// - dominance: a buffer is not placed at or above the top of another unplaced buffer at its
//   minimum offset: that one fits beneath and pushing it down gives a layout searched elsewhere;
// - a buffer that overlaps no unplaced buffer (nothing can go above it) is placed without
//   alternatives: if the rest fails with it at its lowest offset, it fails with it anywhere;
// - decomposition: once no unplaced buffer crosses the boundary between two sections, the two
//   sides are independent and are solved one after the other;
// - refuted states: a state (the unplaced buffers, their minimum offsets, the canonical position
//   of the last placement) searched through without a layout is not searched again at that
//   capacity or a smaller one: the same state comes back below other placements and in restarts.
// The search restarts with a doubled node budget over three static preorders in turn (a buffer
// that fits badly in one order is often placed early in another); the first one that finishes
// decides. Its nodes are frames of an explicit stack, one per buffer placed along the path, so
// that deep paths do not overflow the C++ stack.

#include <memsched/core/detail/hash.hpp>
#include <memsched/order/detail/deadline_clock.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <unordered_map>
#include <vector>

namespace memsched::detail {

/// The buffers that take room, with their sections and overlaps.
struct layout_instance {
  std::vector<std::int64_t> size, align, fixed;  // fixed: -1 when free
  std::vector<std::int64_t> first, last;         // half-open lifetimes
  std::vector<std::uint32_t> sec_lo, sec_hi;      // sections [sec_lo, sec_hi)
  std::vector<std::vector<std::uint32_t>> sections;   // members of each section
  std::vector<std::vector<std::uint32_t>> overlaps;   // buffers overlapping each buffer in time
  std::vector<std::int64_t> load;                      // bytes of each section
  std::vector<std::uint32_t> cuts;                     // per boundary s|s+1: buffers crossing it

  [[nodiscard]] std::size_t size_n() const noexcept { return size.size(); }

  /// Pairs of buffers live at the same time (each counted once), without building the lists.
  static std::uint64_t count_overlaps(std::span<const std::int64_t> first, std::span<const std::int64_t> last) {
    std::vector<std::int64_t> f(first.begin(), first.end()), l(last.begin(), last.end());
    std::sort(f.begin(), f.end());
    std::sort(l.begin(), l.end());
    std::uint64_t pairs = 0;
    std::size_t ended = 0;
    for (std::size_t i = 0; i < f.size(); ++i) {
      while (ended < l.size() && l[ended] <= f[i]) ++ended;
      pairs += i - ended;  // buffers started before this one and not yet ended
    }
    return pairs;
  }

  /// Sections, overlaps, loads and cuts from first/last. O(B log B + sum of sections + overlaps).
  void build() {
    const std::size_t n = size_n();
    std::vector<std::pair<std::int64_t, std::uint32_t>> events;  // (time, 2 * buffer + starts)
    events.reserve(2 * n);
    for (std::uint32_t i = 0; i < n; ++i) {
      events.emplace_back(first[i], 2 * i + 1);
      events.emplace_back(last[i], 2 * i);
    }
    // At equal times, ends (even) before starts (odd): lifetimes are half-open.
    std::sort(events.begin(), events.end(), [](const auto& x, const auto& y) {
      if (x.first != y.first) return x.first < y.first;
      if ((x.second & 1) != (y.second & 1)) return (x.second & 1) < (y.second & 1);
      return x.second < y.second;
    });
    std::vector<std::uint32_t> active, where(n, 0);
    sec_lo.assign(n, 0);
    sec_hi.assign(n, 0);
    overlaps.assign(n, {});
    bool grown = false;  // a buffer started since the last section was cut
    for (auto [t, e] : events) {
      const std::uint32_t i = e / 2;
      if (e & 1) {
        for (std::uint32_t j : active) {
          overlaps[i].push_back(j);
          overlaps[j].push_back(i);
        }
        sec_lo[i] = static_cast<std::uint32_t>(sections.size());
        where[i] = static_cast<std::uint32_t>(active.size());
        active.push_back(i);
        grown = true;
        continue;
      }
      if (grown) {
        sections.push_back(active);
        grown = false;
      }
      sec_hi[i] = static_cast<std::uint32_t>(sections.size());
      where[active.back()] = where[i];
      active[where[i]] = active.back();
      active.pop_back();
    }
    load.assign(sections.size(), 0);
    for (std::size_t s = 0; s < sections.size(); ++s)
      for (std::uint32_t i : sections[s]) load[s] += size[i];
    cuts.assign(sections.empty() ? 0 : sections.size() - 1, 0);
    for (std::size_t i = 0; i < n; ++i)
      for (std::uint32_t s = sec_lo[i]; s + 1 < sec_hi[i]; ++s) ++cuts[s];
  }
};

/// States of the search (sequences of non-negative integers), each with the largest capacity it
/// was refuted at. A state is looked up by a hash its caller maintains as the search moves (the
/// key is as long as the unplaced buffers), and its key is built and compared only when that hash
/// is already stored. Keys are kept whole, so a lookup never mistakes one state for another, but
/// packed 7 bits a byte (buffer numbers and offsets take a few bytes, not 8), end to end in one
/// array (hundreds of thousands of them are freed at once). Takes about `max_bytes` at most (the
/// arrays may hold up to twice what they use); past it, stores nothing.
class state_table {
 public:
  explicit state_table(std::uint64_t max_bytes) : bytes_left_(max_bytes) {}
  state_table(const state_table&) = delete;
  state_table& operator=(const state_table&) = delete;

  /// The capacity stored for the state hashed `hash` whose key `make_key()` returns, or -1.
  template <class MakeKey>
  std::int64_t find(std::uint64_t hash, MakeKey&& make_key) {
    if (slots_.empty()) return -1;
    bool packed = false;
    for (std::size_t k = hash & mask_;; k = (k + 1) & mask_) {
      const slot& s = slots_[k];
      if (s.size == 0) return -1;
      if (s.hash != hash) continue;
      if (!packed) pack(make_key()), packed = true;
      if (std::ranges::equal(bytes_of(s), packed_)) return s.capacity;
    }
  }

  void store(std::uint64_t hash, std::span<const std::int64_t> key, std::int64_t capacity) {
    pack(key);
    if (!slots_.empty())
      for (std::size_t k = hash & mask_; slots_[k].size != 0; k = (k + 1) & mask_)
        if (slot& s = slots_[k]; s.hash == hash && std::ranges::equal(bytes_of(s), packed_)) {
          s.capacity = std::max(s.capacity, capacity);
          return;
        }
    const std::uint64_t bytes = packed_.size() + 2 * sizeof(slot);  // the table is at most half full
    if (bytes > bytes_left_) return;
    bytes_left_ -= bytes;
    if (2 * (used_ + 1) > slots_.size()) grow();
    std::size_t k = hash & mask_;
    while (slots_[k].size != 0) k = (k + 1) & mask_;
    slots_[k] = {hash, pool_.size(), static_cast<std::uint32_t>(packed_.size()), capacity};
    pool_.insert(pool_.end(), packed_.begin(), packed_.end());
    ++used_;
  }

 private:
  struct slot {
    std::uint64_t hash = 0;
    std::uint64_t at = 0;    // the packed key is pool_[at, at + size)
    std::uint32_t size = 0;  // 0: empty (a key packs into a byte at least)
    std::int64_t capacity = 0;
  };

  std::span<const std::uint8_t> bytes_of(const slot& s) const noexcept { return {pool_.data() + s.at, s.size}; }

  // Each word low bits first, 7 a byte, the high bit set on every byte but its last.
  void pack(std::span<const std::int64_t> key) {
    packed_.clear();
    for (const std::int64_t w : key) {
      auto v = static_cast<std::uint64_t>(w);
      for (; v >= 0x80; v >>= 7) packed_.push_back(static_cast<std::uint8_t>(v | 0x80));
      packed_.push_back(static_cast<std::uint8_t>(v));
    }
  }

  // Open addressing at most half full: a missing state (most lookups) ends at an empty slot soon.
  void grow() {
    std::vector<slot> old(std::max<std::size_t>(16, 2 * slots_.size()));
    old.swap(slots_);
    mask_ = slots_.size() - 1;
    for (const slot& s : old)
      if (s.size != 0) {
        std::size_t k = s.hash & mask_;
        while (slots_[k].size != 0) k = (k + 1) & mask_;
        slots_[k] = s;
      }
  }

  std::vector<std::uint8_t> pool_, packed_;
  std::vector<slot> slots_;
  std::size_t mask_ = 0, used_ = 0;
  std::uint64_t bytes_left_;
};

/// How one decision search ended.
/// node_budget: one preorder's turn ran out (the next one goes on); call_budget: the nodes allowed
/// to this decision ran out; stopped: the caller's node or time limit.
enum class layout_outcome { found, exhausted, node_budget, call_budget, stopped };

/// The decision search: does a layout fit `capacity`? Restores its state after every run, so one
/// object answers several capacities.
class layout_search {
 public:
  layout_search(const layout_instance& in, deadline_clock& clock, std::uint64_t node_limit, std::uint64_t memo_bytes = 0)
      : in_(in), clock_(clock), node_limit_(node_limit), refuted_(memo_bytes) {
    const std::size_t n = in.size_n();
    offset_.assign(n, -1);
    solution_.assign(n, -1);
    min_off_.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i)
      if (in.fixed[i] >= 0) min_off_[i] = in.fixed[i];
    floor_.assign(in.sections.size(), 0);
    for (std::size_t k = 0; k < in.sections.size(); ++k) {  // the least minimum offset (fixed buffers)
      floor_[k] = std::numeric_limits<std::int64_t>::max();
      for (std::uint32_t i : in.sections[k]) floor_[k] = std::min(floor_[k], min_off_[i]);
    }
    total_ = in.load;
    cuts_ = in.cuts;
    witness_.resize(in.sections.size());
    for (std::size_t k = 0; k < in.sections.size(); ++k) witness_[k] = in.sections[k].front();
    index_members();
    // A node's children are one placement deeper: at most n placements, plus the leaf.
    frames_.resize(n + 2);
    splits_.resize(n + 2);
    fullest_.assign(n, 0);
  }

  [[nodiscard]] std::uint64_t nodes() const noexcept { return nodes_; }
  [[nodiscard]] const std::vector<std::int64_t>& solution() const noexcept { return solution_; }

  /// Searches for a layout within `capacity`, trying at most `max_nodes` nodes; on `found`,
  /// solution() holds it.
  layout_outcome decide(std::int64_t capacity, std::uint64_t max_nodes = std::numeric_limits<std::uint64_t>::max()) {
    capacity_ = capacity;
    call_limit_ = nodes_ > std::numeric_limits<std::uint64_t>::max() - max_nodes ? std::numeric_limits<std::uint64_t>::max()
                                                                                  : nodes_ + max_nodes;
    std::uint64_t budget = std::max<std::uint64_t>(in_.size_n(), 1);
    for (;;) {
      budget = budget > std::numeric_limits<std::uint64_t>::max() / 4 ? budget : budget * 2;
      for (heuristic_ = 0; heuristic_ < 3; ++heuristic_) {
        budget_left_ = budget;
        const layout_outcome r = solve_partitions();
        if (r != layout_outcome::node_budget) return r;
      }
    }
  }

 private:
  struct entry {
    std::int64_t offset;  // minimum offset of the buffer
    std::uint32_t pre;    // its position in the partition's preorder
  };
  struct partition {
    std::vector<std::uint32_t> buffers;
    std::uint32_t lo = 0, hi = 0;  // sections [lo, hi)
  };
  struct floor_change {
    std::uint32_t section;
    std::int64_t floor;
  };
  struct offset_change {
    std::uint32_t buffer;
    std::int64_t min_off;
  };
  /// A partition searched on its own, with its preorder and its start order (every buffer at
  /// offset 0, in preorder: the parent order of its first node).
  struct part {
    partition p;
    std::vector<std::uint32_t> pre;
    std::vector<entry> start;
  };
  /// A node of the search: its arguments, then what it keeps while a child is searched. The
  /// search runs on an explicit stack of these (frames_[d] is the node d placements deep), so
  /// that the C++ stack does not grow with the buffers placed.
  struct node_frame {
    const part* where = nullptr;     // the partition searched
    std::span<const entry> parent;   // the parent's order, or the part's start order
    std::int64_t min_offset = 0;     // the canonical position no placement may go below
    std::uint32_t min_pre = 0;
    std::uint64_t unplaced = 0;      // the sum of buffer_hash over the partition's unplaced buffers
    std::uint64_t hash = 0;          // the node's state_hash
    std::uint64_t nodes_before = 0;  // nodes_ when the node began branching
    std::vector<entry> order;        // the candidates: unplaced buffers at their minimum offsets
    std::int64_t min_height = 0;     // dominance: no candidate at or above it
    std::size_t k = 0;               // the candidate placed
    std::size_t floor_mark = 0, offset_mark = 0;  // the logs before it was placed
    std::uint32_t b = 0;             // its buffer
    bool hatless = false;            // b overlaps no unplaced buffer: no alternative to it
    bool split = false;              // placing b cut the partition: the children are its parts
  };
  /// The independent parts a placement cut its partition into, searched one after the other
  /// (splits_[d] for the node at depth d). The part being searched lives here while its nodes run.
  struct split_frame {
    std::vector<std::uint32_t> cutpoints;  // boundaries, the partition's ends included
    std::size_t next = 0;                  // cutpoints[next] ends the part to search next
    part sub;
  };

  layout_outcome solve_partitions() {
    const std::size_t n = in_.size_n(), sections = in_.sections.size();
    partition& p = top_.p;
    p.buffers.clear();
    p.lo = 0;
    std::vector<char> seen(n, 0);
    for (std::size_t s = 0; s < sections; ++s) {
      for (std::uint32_t i : in_.sections[s])
        if (!seen[i]) {
          seen[i] = 1;
          p.buffers.push_back(i);
        }
      if (s + 1 == sections || cuts_[s] == 0) {
        p.hi = static_cast<std::uint32_t>(s + 1);
        prepare_part(top_);
        if (const layout_outcome r = search_part(top_); r != layout_outcome::found) return r;
        p.buffers.clear();
        p.lo = p.hi;
      }
    }
    return layout_outcome::found;
  }

  /// The preorders, all descending, ties by index: width, area, then the fullest section's
  /// remaining bytes ("WAT"); then T, A, W; then T, W, A.
  bool precedes(std::uint32_t a, std::uint32_t b, const std::vector<std::int64_t>& total) const {
    const std::int64_t wa = in_.last[a] - in_.first[a], wb = in_.last[b] - in_.first[b];
    const auto aa = static_cast<__int128>(wa) * in_.size[a], ab = static_cast<__int128>(wb) * in_.size[b];
    const std::int64_t ta = total[a], tb = total[b];
    auto cmp = [&](char c) -> int {
      if (c == 'W') return wa == wb ? 0 : (wa > wb ? -1 : 1);
      if (c == 'A') return aa == ab ? 0 : (aa > ab ? -1 : 1);
      return ta == tb ? 0 : (ta > tb ? -1 : 1);
    };
    static constexpr const char* keys[3] = {"WAT", "TAW", "TWA"};
    for (const char* k = keys[heuristic_]; *k; ++k)
      if (const int c = cmp(*k); c != 0) return c < 0;
    return a < b;
  }

  /// The preorder (by the current heuristic) and the start order of s's buffers.
  void prepare_part(part& s) {
    const partition& p = s.p;
    for (std::uint32_t i : p.buffers) {  // fullest_ is read for p's buffers only
      fullest_[i] = 0;
      for (std::uint32_t k = in_.sec_lo[i]; k < in_.sec_hi[i]; ++k) fullest_[i] = std::max(fullest_[i], total_[k]);
    }
    s.pre.assign(p.buffers.begin(), p.buffers.end());
    std::sort(s.pre.begin(), s.pre.end(), [&](std::uint32_t a, std::uint32_t b) { return precedes(a, b, fullest_); });
    s.start.resize(s.pre.size());
    for (std::uint32_t k = 0; k < s.pre.size(); ++k) s.start[k] = {0, k};
  }

  bool check(const partition& p, std::int64_t offset) const {
    for (std::uint32_t s = p.lo; s < p.hi; ++s)
      if (std::max(offset, floor_[s]) + total_[s] > capacity_) return false;
    return true;
  }

  /// Each section's members in one array, the unplaced ones first (live_ of them), and where each
  /// buffer sits in each of its sections: raise_floor scans only the unplaced ones.
  void index_members() {
    const std::size_t n = in_.size_n(), sections = in_.sections.size();
    section_at_.assign(sections + 1, 0);
    for (std::size_t s = 0; s < sections; ++s) section_at_[s + 1] = section_at_[s] + in_.sections[s].size();
    buffer_at_.assign(n + 1, 0);
    for (std::size_t i = 0; i < n; ++i) buffer_at_[i + 1] = buffer_at_[i] + (in_.sec_hi[i] - in_.sec_lo[i]);
    members_.resize(section_at_[sections]);
    member_pos_.resize(buffer_at_[n]);
    live_.resize(sections);
    for (std::uint32_t s = 0; s < sections; ++s) {
      live_[s] = static_cast<std::uint32_t>(in_.sections[s].size());
      for (std::uint32_t k = 0; k < live_[s]; ++k) {
        const std::uint32_t c = in_.sections[s][k];
        members_[section_at_[s] + k] = c;
        member_pos_[buffer_at_[c] + (s - in_.sec_lo[c])] = k;
      }
    }
  }

  /// Moves b just past the unplaced members of each of its sections. Placements are undone last
  /// first, so b is still there when it is unplaced: growing the count takes it back.
  void leave_sections(std::uint32_t b) {
    for (std::uint32_t s = in_.sec_lo[b]; s < in_.sec_hi[b]; ++s) {
      std::uint32_t* m = members_.data() + section_at_[s];
      const std::uint32_t from = member_pos_[buffer_at_[b] + (s - in_.sec_lo[b])], to = --live_[s];
      const std::uint32_t c = m[to];
      m[from] = c;
      member_pos_[buffer_at_[c] + (s - in_.sec_lo[c])] = from;
      m[to] = b;
      member_pos_[buffer_at_[b] + (s - in_.sec_lo[b])] = to;
    }
  }

  /// Places b at its minimum offset (its sections' floors at its top; fits_after raises the
  /// others); returns false when a fixed offset is overrun.
  bool place(std::uint32_t b, std::int64_t at, bool& hatless) {
    offset_[b] = at;
    const std::int64_t top = at + in_.size[b];
    bool ok = true;
    hatless = true;
    raised_.clear();
    for (std::uint32_t c : in_.overlaps[b]) {
      if (offset_[c] >= 0) continue;
      hatless = false;
      if (min_off_[c] >= top) continue;
      offset_log_.push_back({c, min_off_[c]});
      const std::int64_t a = in_.align[c];
      min_off_[c] = a == 1 ? top : (top + a - 1) / a * a;
      if (in_.fixed[c] >= 0 && min_off_[c] > in_.fixed[c]) ok = false;
      raised_.push_back(c);
    }
    for (std::uint32_t s = in_.sec_lo[b]; s < in_.sec_hi[b]; ++s) {
      floor_log_.push_back({s, floor_[s]});
      floor_[s] = top;
      total_[s] -= in_.size[b];
    }
    leave_sections(b);
    return ok;
  }

  /// Whether the sections still fit after placing b at `offset`, raising their floors only when
  /// the sections fit without: floors only rise, so a placement that fails before fails after,
  /// and most rejected placements fail at once.
  bool fits_after(const partition& p, std::uint32_t b, std::int64_t offset) {
    if (!check(p, offset)) return false;
    const std::size_t mark = floor_log_.size();
    raise_floors(b, offset + in_.size[b]);
    for (std::size_t k = mark; k < floor_log_.size(); ++k)
      if (const std::uint32_t s = floor_log_[k].section; p.lo <= s && s < p.hi && std::max(offset, floor_[s]) + total_[s] > capacity_)
        return false;
    return true;
  }

  /// The floor of a section is the least minimum offset of its unplaced buffers (while it has
  /// any): after placing b it may rise in b's sections (b left them) and in every section of a
  /// buffer whose minimum offset place() just raised. Every such buffer meets b, so these sections
  /// are b's own, those left of b (all of them up to the leftmost such buffer's start) and those
  /// right of it. In b's sections, a raised buffer now exactly at b's top keeps the floor at b's
  /// top. A floor only rises: minimum offsets only rise and buffers only leave.
  void raise_floors(std::uint32_t b, std::int64_t top) {
    const std::uint32_t lo = in_.sec_lo[b], hi = in_.sec_hi[b];
    std::uint32_t left = lo, right = hi;
    cover_.assign(hi - lo + 1, 0);
    for (std::uint32_t c : raised_) {
      left = std::min(left, in_.sec_lo[c]);
      right = std::max(right, in_.sec_hi[c]);
      const std::uint32_t from = std::max(lo, in_.sec_lo[c]) - lo, to = std::min(hi, in_.sec_hi[c]) - lo;
      const int exact = min_off_[c] == top ? 1 : 0;
      cover_[from] += exact;
      cover_[to] -= exact;
    }
    for (std::uint32_t s = left; s < lo; ++s) raise_floor(s);
    int exact = 0;
    for (std::uint32_t s = lo; s < hi; ++s)
      if ((exact += cover_[s - lo]) == 0) raise_floor(s);
    for (std::uint32_t s = hi; s < right; ++s) raise_floor(s);
  }

  void raise_floor(std::uint32_t s) {
    // Stop at the first unplaced buffer at or below the floor: the floor stays. The one found last
    // time is tried first (it usually still is).
    if (const std::uint32_t w = witness_[s]; offset_[w] < 0 && min_off_[w] <= floor_[s]) return;
    std::int64_t least = std::numeric_limits<std::int64_t>::max();
    const std::uint32_t* m = members_.data() + section_at_[s];
    for (std::uint32_t k = 0; k < live_[s]; ++k)
      if ((least = std::min(least, min_off_[m[k]])) <= floor_[s]) {
        witness_[s] = m[k];
        return;
      }
    if (least != std::numeric_limits<std::int64_t>::max() && floor_[s] < least) {
      floor_log_.push_back({s, floor_[s]});
      floor_[s] = least;
    }
  }

  void unplace(std::uint32_t b, std::size_t floor_mark, std::size_t offset_mark) {
    for (std::size_t k = floor_log_.size(); k > floor_mark; --k) floor_[floor_log_[k - 1].section] = floor_log_[k - 1].floor;
    floor_log_.resize(floor_mark);
    for (std::uint32_t s = in_.sec_lo[b]; s < in_.sec_hi[b]; ++s) {
      total_[s] += in_.size[b];
      ++live_[s];
    }
    for (std::size_t k = offset_log_.size(); k > offset_mark; --k) min_off_[offset_log_[k - 1].buffer] = offset_log_[k - 1].min_off;
    offset_log_.resize(offset_mark);
    offset_[b] = -1;
  }

  bool out_of_nodes(layout_outcome& why) {
    if (budget_left_ == 0) {
      why = layout_outcome::node_budget;
      return true;
    }
    // A node is counted only when it is searched: node_limit nodes at most, never one more.
    if (nodes_ >= node_limit_ || clock_.expired()) {
      why = layout_outcome::stopped;
      return true;
    }
    if (nodes_ >= call_limit_) {
      why = layout_outcome::call_budget;
      return true;
    }
    --budget_left_;
    ++nodes_;
    return false;
  }

  /// Searches `root` from a node at depth_, with the partition's start order and nothing placed
  /// in it yet. A node checks its state, then places its candidates in turn; each placement
  /// descends into one child: the rest of the partition, or each independent part in turn. A node
  /// that opens a child is resumed with the child's result when the child ends. The nodes live on
  /// frames_ and splits_, not on the C++ stack: an instance may place tens of thousands of buffers
  /// along one path.
  layout_outcome search_part(const part& root) {
    const std::size_t bottom = depth_;
    set_node(frames_[bottom], root, root.start, 0, 0, unplaced_hash(root.p));
    layout_outcome r{};
    for (;;) {
      bool child = start_node(r);
      while (!child) {  // the node at depth_ ended with r
        if (depth_ == bottom) return r;
        --depth_;
        child = resume_node(r);
      }
      ++depth_;
    }
  }

  /// Sets the arguments of the node searched next in f.
  void set_node(node_frame& f, const part& where, std::span<const entry> parent, std::int64_t min_offset,
                std::uint32_t min_pre, std::uint64_t unplaced) {
    f.where = &where;
    f.parent = parent;
    f.min_offset = min_offset;
    f.min_pre = min_pre;
    f.unplaced = unplaced;
  }

  /// The sum of buffer_hash over p's unplaced buffers at their minimum offsets.
  std::uint64_t unplaced_hash(const partition& p) const {
    std::uint64_t unplaced = 0;
    for (std::uint32_t i : p.buffers)
      if (offset_[i] < 0) unplaced += buffer_hash(i, min_off_[i]);
    return unplaced;
  }

  /// f's state_key, built in key_.
  std::span<const std::int64_t> node_key(const node_frame& f) {
    state_key(f.where->p, f.where->pre, f.min_offset, f.min_pre, key_);
    return key_;
  }

  /// Starts the node at depth_: true when it opened a child (at depth_ + 1), false when it ended
  /// with r (a limit, a refuted state, a layout, or no candidate that descends).
  bool start_node(layout_outcome& r) {
    node_frame& f = frames_[depth_];
    if (out_of_nodes(r)) return false;
    f.hash = state_hash(f.where->p, f.where->pre, f.min_offset, f.min_pre, f.unplaced);
    if (refuted_.find(f.hash, [&] { return node_key(f); }) >= capacity_) {  // refuted at this capacity or a larger one
      r = layout_outcome::exhausted;
      return false;
    }
    f.nodes_before = nodes_;
    next_order(f.where->pre, f.parent, f.order);
    if (f.order.empty()) {  // every buffer of the partition is placed
      for (std::uint32_t i : f.where->p.buffers) solution_[i] = offset_[i];
      r = layout_outcome::found;
      return false;
    }
    f.min_height = std::numeric_limits<std::int64_t>::max();
    for (const entry& e : f.order) f.min_height = std::min(f.min_height, e.offset + in_.size[f.where->pre[e.pre]]);
    f.k = 0;
    return try_candidates(f, r);
  }

  /// The node at depth_ takes its child's result r: true when it opened another child, false
  /// when it ended with r.
  bool resume_node(layout_outcome& r) {
    node_frame& f = frames_[depth_];
    if (f.split && r == layout_outcome::found && next_part(f)) return true;
    end_descent(f);
    if (end_placement(f, r)) return false;
    ++f.k;
    return try_candidates(f, r);
  }

  /// Places f's candidates from f.k on, each at its minimum offset, until one opens a child
  /// (true) or the node ends (false, with r).
  bool try_candidates(node_frame& f, layout_outcome& r) {
    for (; f.k < f.order.size(); ++f.k) {
      const entry e = f.order[f.k];
      const std::uint32_t b = f.where->pre[e.pre];
      if (e.offset < f.min_offset || (e.offset == f.min_offset && e.pre < f.min_pre)) continue;  // not canonical
      if (e.offset >= f.min_height) continue;                                                     // dominated
      if (in_.fixed[b] >= 0 && e.offset > in_.fixed[b]) continue;
      f.b = b;
      f.floor_mark = floor_log_.size();
      f.offset_mark = offset_log_.size();
      f.hatless = false;
      r = layout_outcome::exhausted;
      if (place(b, e.offset, f.hatless) && fits_after(f.where->p, b, e.offset) && start_descent(f, r)) return true;
      if (end_placement(f, r)) return false;
    }
    r = layout_outcome::exhausted;
    end_node(f, r);
    return false;
  }

  /// Undoes f's placement, whose descent ended with r; true when that ends the node: a layout, a
  /// limit, or a failed hatless buffer (it fails anywhere else too).
  bool end_placement(const node_frame& f, layout_outcome r) {
    unplace(f.b, f.floor_mark, f.offset_mark);
    if (r == layout_outcome::exhausted && !f.hatless) return false;
    end_node(f, r);
    return true;
  }

  void end_node(const node_frame& f, layout_outcome r) {
    // A leaf is refuted again as fast as it is looked up: only subtrees are remembered. The
    // subtree restored the state, so the key is built again from it.
    if (r == layout_outcome::exhausted && nodes_ - f.nodes_before >= min_remembered_nodes)
      refuted_.store(f.hash, node_key(f), capacity_);
  }

  /// After placing f.b: opens the rest of the partition, or the first of the independent parts
  /// the placement cut it into that has unplaced buffers (true); false, with r found, when none has.
  bool start_descent(node_frame& f, layout_outcome& r) {
    const std::uint32_t b = f.b;
    solution_[b] = offset_[b];
    split_frame& s = splits_[depth_];
    s.cutpoints.assign(1, f.where->p.lo);
    for (std::uint32_t k = in_.sec_lo[b]; k + 1 < in_.sec_hi[b]; ++k)
      if (--cuts_[k] == 0) s.cutpoints.push_back(k + 1);
    f.split = s.cutpoints.size() > 1;
    if (!f.split) {
      const entry e = f.order[f.k];
      const std::uint64_t unplaced = unplaced_after(f.unplaced, b, e.offset, f.offset_mark);
      set_node(frames_[depth_ + 1], *f.where, f.order, e.offset, e.pre, unplaced);
      return true;
    }
    s.cutpoints.push_back(f.where->p.hi);
    s.next = 1;
    if (next_part(f)) return true;
    end_descent(f);
    r = layout_outcome::found;
    return false;
  }

  /// Opens the next part of f's split that has unplaced buffers; false when none is left.
  bool next_part(const node_frame& f) {
    split_frame& s = splits_[depth_];
    partition& sub = s.sub.p;
    while (s.next < s.cutpoints.size()) {
      sub.lo = s.cutpoints[s.next - 1];
      sub.hi = s.cutpoints[s.next];
      ++s.next;
      sub.buffers.clear();
      for (std::uint32_t i : f.where->p.buffers)
        if (offset_[i] < 0 && in_.sec_lo[i] < sub.hi && sub.lo < in_.sec_hi[i]) sub.buffers.push_back(i);
      if (sub.buffers.empty()) continue;
      prepare_part(s.sub);
      set_node(frames_[depth_ + 1], s.sub, s.sub.start, 0, 0, unplaced_hash(sub));
      return true;
    }
    return false;
  }

  /// The boundaries f.b crossed are crossed again once it is unplaced.
  void end_descent(const node_frame& f) {
    for (std::uint32_t k = in_.sec_lo[f.b]; k + 1 < in_.sec_hi[f.b]; ++k) ++cuts_[k];
  }

  /// One unplaced buffer's share of a state's hash; shares are summed, so that placing a buffer
  /// or raising its minimum offset updates the sum in constant time.
  static std::uint64_t buffer_hash(std::uint32_t b, std::int64_t min_off) noexcept {
    return mix_hash(0x9e3779b97f4a7c15ULL * (b + 1ULL), static_cast<std::uint64_t>(min_off));
  }

  /// A hash of state_key's key: equal keys hash equal. The flags (whether a buffer comes before
  /// min_pre) are all told by the first unplaced buffer at or after min_pre in the preorder.
  std::uint64_t state_hash(const partition& p, const std::vector<std::uint32_t>& pre, std::int64_t min_offset,
                           std::uint32_t min_pre, std::uint64_t unplaced) const {
    std::uint32_t k = min_pre;
    while (k < pre.size() && offset_[pre[k]] >= 0) ++k;
    const std::uint64_t next = k < pre.size() ? pre[k] : in_.size_n();
    std::uint64_t h = mix_hash(unplaced, static_cast<std::uint64_t>(heuristic_));
    h = mix_hash(h, (static_cast<std::uint64_t>(p.lo) << 32) | p.hi);
    h = mix_hash(h, static_cast<std::uint64_t>(min_offset));
    return mix_hash(h, next);
  }

  /// `unplaced` after place(b) at `offset`: b leaves, the buffers logged since `offset_mark` moved.
  std::uint64_t unplaced_after(std::uint64_t unplaced, std::uint32_t b, std::int64_t offset, std::size_t offset_mark) const {
    unplaced -= buffer_hash(b, offset);
    for (std::size_t k = offset_mark; k < offset_log_.size(); ++k) {
      const offset_change& c = offset_log_[k];
      unplaced += buffer_hash(c.buffer, min_off_[c.buffer]) - buffer_hash(c.buffer, c.min_off);
    }
    return unplaced;
  }

  /// What the subtree below a node depends on (it is searched the same way again, so its result
  /// may be kept): the preorder heuristic, the partition's sections, the offset and preorder
  /// position the next placement must not go below, and the unplaced buffers in preorder, each
  /// with its minimum offset and whether it comes before that position. The sections' remaining
  /// bytes, cuts and floors follow from these (a floor is the least minimum offset of the
  /// section's unplaced buffers; a section with none left prunes nothing the offset does not).
  void state_key(const partition& p, const std::vector<std::uint32_t>& pre, std::int64_t min_offset, std::uint32_t min_pre,
                 std::vector<std::int64_t>& key) const {
    key.clear();
    key.push_back(heuristic_);  // the preorders of the parts a decomposition starts
    key.push_back(p.lo);
    key.push_back(p.hi);
    key.push_back(min_offset);
    for (std::uint32_t k = 0; k < pre.size(); ++k)
      if (const std::uint32_t b = pre[k]; offset_[b] < 0) {
        key.push_back(2 * static_cast<std::int64_t>(b) + (k < min_pre ? 1 : 0));
        key.push_back(min_off_[b]);
      }
  }

  static constexpr std::uint64_t min_remembered_nodes = 2;

  /// The unplaced buffers of `parent` (sorted by offset, then preorder) at their minimum offsets,
  /// sorted the same way. Only the buffers whose minimum offset rose since move: they are sorted
  /// apart and merged in.
  void next_order(const std::vector<std::uint32_t>& pre, std::span<const entry> parent, std::vector<entry>& order) {
    static constexpr auto by_offset = [](const entry& a, const entry& b) {
      return a.offset != b.offset ? a.offset < b.offset : a.pre < b.pre;
    };
    order.clear();
    moved_.clear();
    for (const entry& e : parent)
      if (const std::uint32_t b = pre[e.pre]; offset_[b] < 0) {
        if (min_off_[b] == e.offset) order.push_back(e);
        else moved_.push_back({min_off_[b], e.pre});
      }
    std::sort(moved_.begin(), moved_.end(), by_offset);
    const auto stayed = static_cast<std::ptrdiff_t>(order.size());
    order.insert(order.end(), moved_.begin(), moved_.end());
    std::inplace_merge(order.begin(), order.begin() + stayed, order.end(), by_offset);
  }

  const layout_instance& in_;
  deadline_clock& clock_;
  std::uint64_t node_limit_;
  std::int64_t capacity_ = 0;
  int heuristic_ = 0;
  std::uint64_t budget_left_ = 0, nodes_ = 0, call_limit_ = 0;
  std::size_t depth_ = 0;
  std::vector<std::int64_t> offset_, solution_, min_off_, floor_, total_;
  std::vector<std::uint32_t> cuts_;
  std::vector<std::uint32_t> raised_;  // buffers whose minimum offset the last place() raised
  std::vector<int> cover_;  // per section of the placed buffer: raised buffers now at its top starting (+) and ending (-)
  std::vector<std::uint32_t> witness_;  // per section: a member last found at or below its floor
  std::vector<std::size_t> section_at_, buffer_at_;  // where each section's members, each buffer's positions start
  std::vector<std::uint32_t> members_, member_pos_, live_;  // see index_members
  std::vector<floor_change> floor_log_;
  std::vector<offset_change> offset_log_;
  std::vector<entry> moved_;  // next_order's buffers whose minimum offset rose
  std::vector<node_frame> frames_;  // per depth: the node being searched
  std::vector<split_frame> splits_;  // per depth: the parts its placement cut its partition into
  part top_;  // the partition of solve_partitions being searched
  std::vector<std::int64_t> fullest_;  // per buffer: its fullest section's remaining bytes (prepare_part)
  std::vector<std::int64_t> key_;  // the state of a node whose hash is stored or that is stored
  state_table refuted_;  // exhausted states, each with the largest capacity it was searched at
};

}  // namespace memsched::detail
