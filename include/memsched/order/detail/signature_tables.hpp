#pragma once
// Signatures (sets of scheduled vertices) as bitsets of a run-time number of 64-bit words, and the
// per-vertex tables serenity_order's searches read. Internal; see docs/serenity.md.
//
// Why a run-time width: the width used to be a template parameter of the whole search classes,
// and every call of serenity_order instantiated the layered and the two decision searches for ten
// widths (30 copies), which made a user's translation unit ~8x slower to compile than one using
// Boost's topological_sort (docs/serenity.md, "Compile time"). Now only the inner loops are
// instantiated, for four widths (with_small_width).

#include <memsched/graph/memory_graph.hpp>
#include <memsched/sim/memory_model.hpp>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <utility>
#include <vector>

// The searches' per-child steps must be inlined into their loops (the run-time direction and
// width otherwise make them look too large to GCC's inliner, ~6 % more instructions).
#if defined(__GNUC__) || defined(__clang__)
#define MEMSCHED_DETAIL_HOT_INLINE [[gnu::always_inline]] inline
#else
#define MEMSCHED_DETAIL_HOT_INLINE inline
#endif

namespace memsched::detail {

/// Largest graph (or segment) the searches take, in vertices: 64 words per bitset.
inline constexpr std::size_t max_signature_vertices = 4096;

/// Words of a bitset over n vertices.
[[nodiscard]] constexpr std::size_t signature_words(std::size_t n) noexcept { return (n + 63) / 64; }

/// Words of the searches' bitsets over n vertices: signature_words(n), except that 3 words are
/// padded to 4 (the top word stays 0). Why: each width with_small_width handles is one more copy of
/// the hot loops in every TU that calls serenity_order (~0.5 s of g++ -O2), and the 4-word copy
/// runs 3-word graphs in 2-4 % fewer instructions than a 3-word copy did (same states, same
/// results: the padded word is never set).
[[nodiscard]] constexpr std::size_t search_words(std::size_t n) noexcept {
  return signature_words(n) == 3 ? 4 : signature_words(n);
}

inline void set_bit(std::uint64_t* a, std::size_t v) noexcept { a[v / 64] |= std::uint64_t{1} << (v % 64); }
inline void clear_bit(std::uint64_t* a, std::size_t v) noexcept { a[v / 64] &= ~(std::uint64_t{1} << (v % 64)); }
[[nodiscard]] inline bool has_bit(const std::uint64_t* a, std::size_t v) noexcept { return (a[v / 64] >> (v % 64)) & 1; }

// The searches instantiate their inner loops for widths 1, 2 and 4 words (graphs up to 256
// vertices, the common case; search_words pads 3 to 4) and once for a run-time width: `words` is
// then a constant in the helpers below, which unroll. Everything else of the searches exists once.

/// Calls body.template operator()<W>() with W = words for 1, 2 and 4 words, W = 0 (run-time width)
/// otherwise (5 words and more; also 3, which search_words never gives).
template <class Body>
decltype(auto) with_small_width(std::size_t words, Body&& body) {
  switch (words) {
    case 1: return body.template operator()<1>();
    case 2: return body.template operator()<2>();
    case 4: return body.template operator()<4>();
    default: return body.template operator()<0>();
  }
}

/// dst = src, `words` words.
inline void copy_bits(std::uint64_t* dst, const std::uint64_t* src, std::size_t words) noexcept {
  for (std::size_t w = 0; w < words; ++w) dst[w] = src[w];
}

/// a ⊆ b for bitsets of `words` words.
[[nodiscard]] inline bool is_subset(const std::uint64_t* a, const std::uint64_t* b, std::size_t words) noexcept {
  std::uint64_t x = 0;
  for (std::size_t w = 0; w < words; ++w) x |= a[w] & ~b[w];
  return x == 0;
}

/// a ∩ b is not empty.
[[nodiscard]] inline bool intersects(const std::uint64_t* a, const std::uint64_t* b, std::size_t words) noexcept {
  std::uint64_t x = 0;
  for (std::size_t w = 0; w < words; ++w) x |= a[w] & b[w];
  return x != 0;
}

/// a == b.
[[nodiscard]] inline bool same_bits(const std::uint64_t* a, const std::uint64_t* b, std::size_t words) noexcept {
  std::uint64_t x = 0;
  for (std::size_t w = 0; w < words; ++w) x |= a[w] ^ b[w];
  return x == 0;
}

/// Calls f(v) for every set bit v, in increasing order.
template <class F>
void for_each_bit(const std::uint64_t* a, std::size_t words, F&& f) {
  for (std::size_t w = 0; w < words; ++w)
    for (std::uint64_t bits = a[w]; bits != 0; bits &= bits - 1) f(w * 64 + static_cast<std::size_t>(std::countr_zero(bits)));
}

/// A growable array of trivially copyable values for the searches' states, stacks and links:
/// push() and append() copy without the zero fill of std::vector::resize, a memmove call for a few
/// words, or an out-of-line push_back in the hot loops. The interface pool_accountant needs
/// (value_type, capacity, reserve, swap) is the vector's; growth is the caller's (reserve first).
template <class T>
class pod_buffer {
 public:
  using value_type = T;
  pod_buffer() = default;
  pod_buffer(const pod_buffer&) = delete;
  pod_buffer& operator=(const pod_buffer&) = delete;

  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::size_t capacity() const noexcept { return cap_; }
  [[nodiscard]] T* data() noexcept { return data_.get(); }
  [[nodiscard]] const T* data() const noexcept { return data_.get(); }
  [[nodiscard]] T& operator[](std::size_t i) noexcept { return data_[i]; }
  [[nodiscard]] const T& operator[](std::size_t i) const noexcept { return data_[i]; }
  void clear() noexcept { size_ = 0; }
  /// Precondition: n <= size().
  void shrink(std::size_t n) noexcept { size_ = n; }
  void reserve(std::size_t cap) {
    if (cap <= cap_) return;
    std::unique_ptr<T[]> d(new T[cap]);
    if (size_ > 0) std::memcpy(static_cast<void*>(d.get()), data_.get(), size_ * sizeof(T));
    data_ = std::move(d);
    cap_ = cap;
  }
  /// Precondition: size() < capacity().
  void push(const T& x) noexcept { data_[size_++] = x; }
  /// Appends n values. Precondition: size() + n <= capacity().
  void append(const T* p, std::size_t n) noexcept {
    for (std::size_t i = 0; i < n; ++i) data_[size_ + i] = p[i];
    size_ += n;
  }
  /// Appends n value-initialised values. Precondition: size() + n <= capacity().
  void append_zeros(std::size_t n) noexcept {
    for (std::size_t i = 0; i < n; ++i) data_[size_ + i] = T{};
    size_ += n;
  }
  void swap(pod_buffer& o) noexcept {
    data_.swap(o.data_);
    std::swap(size_, o.size_);
    std::swap(cap_, o.cap_);
  }

 private:
  std::unique_ptr<T[]> data_;
  std::size_t size_ = 0, cap_ = 0;
};

using word_buffer = pod_buffer<std::uint64_t>;

/// Per-vertex data the searches read: bytes while a vertex runs (bytes + workspace), bytes it
/// leaves resident (0 for a dead end that is not an output), Zobrist keys (a signature's hash is
/// the xor of its vertices' keys), and successor / predecessor bitsets of `words` words.
/// In-place outputs (the rule of sim/memory_model.hpp): `saving[v]` is bytes(v) when v is in-place
/// and has an input whose buffer it may take over (`reuse_inputs(v)`: equal size, not a graph
/// output), else 0; the step subtracts it when one of those inputs dies at v. `tmin` = tadd -
/// saving, the least v can need on top of the resident bytes (for pruning). A graph without
/// in-place vertices has saving 0 everywhere and no candidate lists: the searches test one number.
struct signature_tables {
  std::size_t words;
  bool inplace;  ///< Some vertex has saving != 0 (the searches skip the in-place tests otherwise).
  std::vector<std::int64_t> tadd, tmin, alloc, bytes, saving;
  std::vector<std::uint64_t> zobrist, succmask, predmask;
  std::vector<std::uint32_t> reuse_offsets, reuse_list;  // CSR of the candidate inputs; empty without in-place
  /// Per vertex, its successor first and last and its predecessor last in the graph's topological
  /// order (the vertex itself when it has none): the member of succ(v) or pred(v) most likely
  /// missing from a signature, tested alone before a whole-bitset test (see forward_live). In the
  /// layered search on 5-word graphs almost every such test fails; the one bit settles most.
  std::vector<std::uint32_t> first_succ, last_succ, last_pred;

  explicit signature_tables(const memory_graph& g)
      : words(search_words(g.size())), inplace(false), tadd(g.size()), tmin(g.size()), alloc(g.size()), bytes(g.size()),
        saving(g.size(), 0), zobrist(g.size()), succmask(g.size() * words, 0), predmask(g.size() * words, 0),
        first_succ(g.size()), last_succ(g.size()), last_pred(g.size()) {
    for (std::size_t v = 0; v < g.size(); ++v) first_succ[v] = last_succ[v] = last_pred[v] = static_cast<std::uint32_t>(v);
    // Along the topological order the last assignment is the latest vertex, against it the earliest.
    for (auto v : g.topological_order()) {
      for (auto p : g.predecessors(v)) last_succ[p] = static_cast<std::uint32_t>(v);
      for (auto s : g.successors(v)) last_pred[s] = static_cast<std::uint32_t>(v);
    }
    for (auto it = g.topological_order().rbegin(); it != g.topological_order().rend(); ++it)
      for (auto p : g.predecessors(*it)) first_succ[p] = static_cast<std::uint32_t>(*it);
    std::uint64_t seed = 0x9E3779B97F4A7C15ull;
    if (g.has_inplace()) reuse_offsets.assign(g.size() + 1, 0);
    for (std::size_t v = 0; v < g.size(); ++v) {
      bytes[v] = g.bytes(v);
      tadd[v] = g.bytes(v) + g.workspace(v);
      alloc[v] = (g.out_degree(v) > 0 || g.is_output(v)) ? g.bytes(v) : 0;
      seed += 0x9E3779B97F4A7C15ull;
      std::uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      zobrist[v] = z ^ (z >> 31);
      for (auto s : g.successors(v)) set_bit(&succmask[v * words], s);
      for (auto p : g.predecessors(v)) set_bit(&predmask[v * words], p);
      if (g.has_inplace()) {
        for (auto p : g.predecessors(v))
          if (memory_model::may_reuse(g, v, p)) reuse_list.push_back(p);
        reuse_offsets[v + 1] = static_cast<std::uint32_t>(reuse_list.size());
        if (reuse_offsets[v + 1] != reuse_offsets[v]) {
          saving[v] = g.bytes(v);
          inplace = true;
        }
      }
      tmin[v] = tadd[v] - saving[v];
    }
  }
  [[nodiscard]] const std::uint64_t* succ(std::size_t v) const noexcept { return &succmask[v * words]; }
  [[nodiscard]] const std::uint64_t* pred(std::size_t v) const noexcept { return &predmask[v * words]; }
  /// Whether the subset tests below check the one likeliest missing bit first at width W: from 4
  /// words on and at the run-time width (at 1 and 2 words the whole test is as cheap).
  template <std::size_t W>
  static constexpr bool bit_first = W != 1 && W != 2;
  /// succ(v) ⊆ sig, for v with a successor.
  template <std::size_t W = 0>
  [[nodiscard]] bool successors_in(std::size_t v, const std::uint64_t* sig) const noexcept {
    return (!bit_first<W> || has_bit(sig, last_succ[v])) && is_subset(succ(v), sig, W != 0 ? W : words);
  }
  /// pred(v) ⊆ sig, for v with a predecessor.
  template <std::size_t W = 0>
  [[nodiscard]] bool predecessors_in(std::size_t v, const std::uint64_t* sig) const noexcept {
    return (!bit_first<W> || has_bit(sig, last_pred[v])) && is_subset(pred(v), sig, W != 0 ? W : words);
  }
  /// succ(v) ⊆ later, for v with a successor (backward: the first successor is the likeliest
  /// missing from the vertices that run later).
  template <std::size_t W = 0>
  [[nodiscard]] bool successors_later(std::size_t v, const std::uint64_t* later) const noexcept {
    return (!bit_first<W> || has_bit(later, first_succ[v])) && is_subset(succ(v), later, W != 0 ? W : words);
  }
  /// The inputs whose buffer v may take over, in predecessor order. Precondition: saving[v] != 0.
  [[nodiscard]] std::span<const std::uint32_t> reuse_inputs(std::size_t v) const noexcept {
    return {reuse_list.data() + reuse_offsets[v], reuse_list.data() + reuse_offsets[v + 1]};
  }
};

/// One step of a search: bytes in use while the vertex runs, and the resident bytes on the other
/// side of it (after it, forward; before it, backward).
struct search_step {
  std::int64_t transient = 0;
  std::int64_t live = 0;
};

/// Whether in-place v takes over an input's buffer when it runs with the scheduled set
/// `sig_with_v` (v included): some candidate input has all its consumers in it (it dies at v).
/// Precondition: t.saving[v] != 0. O(candidates * words).
template <std::size_t W = 0>
[[nodiscard]] inline bool forward_reuses(const signature_tables& t, std::size_t v, const std::uint64_t* sig_with_v) noexcept {
  for (auto p : t.reuse_inputs(v))
    if (t.successors_in<W>(p, sig_with_v)) return true;
  return false;
}

/// Whether in-place v takes over an input's buffer when it runs just before the vertices of
/// `later` (v not in it): some candidate input has no consumer in `later`. Precondition:
/// t.saving[v] != 0. O(candidates * words).
template <std::size_t W = 0>
[[nodiscard]] inline bool backward_reuses(const signature_tables& t, std::size_t v, const std::uint64_t* later) noexcept {
  const std::size_t nw = W != 0 ? W : t.words;
  for (auto p : t.reuse_inputs(v))
    if (!intersects(t.succ(p), later, nw)) return true;
  return false;
}

/// The bytes left resident after v runs with `live` bytes resident after the scheduled set;
/// `sig_with_v` is that set with v (see forward_step). O(in-degree * words).
template <std::size_t W = 0>
MEMSCHED_DETAIL_HOT_INLINE std::int64_t forward_live(const memory_graph& g, const signature_tables& t, std::size_t v,
                                                     const std::uint64_t* sig_with_v, std::int64_t live) noexcept {
  std::int64_t freed = 0;
  for (auto p : g.predecessors(v))
    if (!g.is_output(p) && t.successors_in<W>(p, sig_with_v)) freed += t.bytes[p];
  return live + t.alloc[v] - freed;
}

/// The memory model (sim/memory_model.hpp) on signatures, forward: v runs with `live` bytes
/// resident after the scheduled set; `sig_with_v` is that set with v. Inputs of v that are not
/// graph outputs and have no consumer outside sig_with_v are freed; v's own output stays unless
/// nothing reads it (alloc); an in-place v whose candidate input dies here runs without its own
/// bytes on top. The searches' fast copy of the model: tests/order/serenity_memory_model.cpp
/// compares it with memory_model on random graphs, with and without in-place vertices.
/// O(in-degree * words).
template <std::size_t W = 0>
MEMSCHED_DETAIL_HOT_INLINE search_step forward_step(const memory_graph& g, const signature_tables& t, std::size_t v,
                                                    const std::uint64_t* sig_with_v, std::int64_t live) noexcept {
  std::int64_t transient = live + t.tadd[v];
  if (t.inplace && t.saving[v] != 0 && forward_reuses<W>(t, v, sig_with_v)) transient -= t.saving[v];
  return {transient, forward_live<W>(g, t, v, sig_with_v, live)};
}

/// Backward: y's output is resident once some vertex of `later` (the vertices that run after the
/// current point) reads it, or when it is a graph output.
template <std::size_t W = 0>
MEMSCHED_DETAIL_HOT_INLINE bool resident_backward(const memory_graph& g, const signature_tables& t, std::size_t y,
                                                  const std::uint64_t* later) noexcept {
  return g.is_output(y) || intersects(t.succ(y), later, W != 0 ? W : t.words);
}

/// The memory model backward: v runs just before the vertices of `later` (all v's consumers are
/// in it, v is not), with `live` bytes resident after v; returns the bytes while v runs and the
/// bytes resident before it (v's output is not yet there; inputs whose last reader is v are; an
/// in-place v that is the last reader of a candidate input runs within that input's buffer).
/// Tested against memory_model with forward_step. O(in-degree * words).
template <std::size_t W = 0>
MEMSCHED_DETAIL_HOT_INLINE search_step backward_step(const memory_graph& g, const signature_tables& t, std::size_t v,
                                                     const std::uint64_t* later, std::int64_t live) noexcept {
  if (resident_backward<W>(g, t, v, later)) live -= t.bytes[v];
  for (auto p : g.predecessors(v))
    if (!resident_backward<W>(g, t, p, later)) live += t.bytes[p];
  std::int64_t transient = live + t.tadd[v];
  if (t.inplace && t.saving[v] != 0 && backward_reuses<W>(t, v, later)) transient -= t.saving[v];
  return {transient, live};
}

}  // namespace memsched::detail
