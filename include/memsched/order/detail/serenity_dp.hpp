#pragma once
// The search core of serenity_order: a layer-by-layer dynamic program over signatures (the set of
// scheduled vertices) of one memory_graph. Internal; see order/serenity.hpp and docs/serenity.md.

#include <memsched/graph/memory_graph.hpp>
#include <memsched/order/order_result.hpp>
#include <memsched/sim/simulate_order.hpp>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cassert>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <new>
#include <numeric>
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

/// What one search is asked to do.
struct serenity_dp_request {
  /// Keep only partial schedules whose peak is <= limit (the budget, or incumbent - 1).
  std::int64_t limit = std::numeric_limits<std::int64_t>::max();
  /// Free moves may raise a state's peak up to this value (must be <= the optimum, or <= a value
  /// the caller accepts as good enough; see serenity.hpp).
  std::int64_t free_threshold = 0;
  bool free_moves = true;
  /// Keep at most this many states per layer, the ones with the smallest (peak, live): a heuristic
  /// beam search (no proof). 0: exact.
  std::size_t beam_width = 0;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  std::uint64_t max_states = std::numeric_limits<std::uint64_t>::max();
  serenity_memory_pool* pool = nullptr;  ///< Required.
};

enum class serenity_dp_outcome { solved, no_solution, stopped };

struct serenity_dp_answer {
  serenity_dp_outcome outcome = serenity_dp_outcome::no_solution;
  std::vector<std::size_t> order;
  std::int64_t peak = 0;
  /// min(optimum, limit + 1) >= lower_bound when stopped; limit + 1 when no_solution (exact search).
  std::int64_t lower_bound = 0;
  bool out_of_time = false;  ///< stopped by the deadline (else by max_states or the memory pool)
  order_stats stats;
};

/// a ⊆ b for bitsets of W words.
template <std::size_t W>
bool is_subset(const std::uint64_t* a, const std::uint64_t* b) noexcept {
  std::uint64_t x = 0;
  for (std::size_t w = 0; w < W; ++w) x |= a[w] & ~b[w];
  return x == 0;
}

/// Per-vertex data the searches read: bytes while a vertex runs (bytes + workspace), bytes it
/// leaves resident (0 for a dead end that is not an output), Zobrist keys (a signature's hash is
/// the xor of its vertices' keys), and successor / predecessor bitsets of W words.
template <std::size_t W>
struct signature_tables {
  std::vector<std::int64_t> tadd, alloc, bytes;
  std::vector<std::uint64_t> zobrist, succmask, predmask;

  explicit signature_tables(const memory_graph& g)
      : tadd(g.size()), alloc(g.size()), bytes(g.size()), zobrist(g.size()), succmask(g.size() * W, 0), predmask(g.size() * W, 0) {
    std::uint64_t seed = 0x9E3779B97F4A7C15ull;
    for (std::size_t v = 0; v < g.size(); ++v) {
      bytes[v] = g.bytes(v);
      tadd[v] = g.bytes(v) + g.workspace(v);
      alloc[v] = (g.out_degree(v) > 0 || g.is_output(v)) ? g.bytes(v) : 0;
      seed += 0x9E3779B97F4A7C15ull;
      std::uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      zobrist[v] = z ^ (z >> 31);
      for (auto s : g.successors(v)) succmask[v * W + s / 64] |= std::uint64_t{1} << (s % 64);
      for (auto p : g.predecessors(v)) predmask[v * W + p / 64] |= std::uint64_t{1} << (p % 64);
    }
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

/// The search over signatures with W 64-bit words per bitset.
template <std::size_t W>
class serenity_dp {
 public:
  serenity_dp(const memory_graph& g, const serenity_dp_request& req)
      : g_(g), req_(req), n_(g.size()), t_(g), mem_(*req.pool) {
    assert(n_ <= W * 64);
  }

  serenity_dp_answer run() {
    const auto start = std::chrono::steady_clock::now();
    serenity_dp_answer ans;
    run_layers(ans);
    release_all();
    ans.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ans.stats.search_bytes = static_cast<std::uint64_t>(mem_.peak());
    return ans;
  }

 private:
  struct state {
    std::uint64_t sig[W];
    std::uint64_t ready[W];
    std::uint64_t hash;
    std::int64_t live;
    std::int64_t peak;
  };
  struct link {
    std::uint32_t parent;
    std::uint32_t node;
  };

  // Bytes freed when v runs after the scheduled set `sig` (sig already includes v).
  std::int64_t freed_by(std::size_t v, const std::uint64_t* sig_with_v) const noexcept {
    std::int64_t f = 0;
    for (auto p : g_.predecessors(v))
      if (!g_.is_output(p) && is_subset<W>(&t_.succmask[p * W], sig_with_v)) f += t_.bytes[p];
    return f;
  }

  void release_all() {
    mem_.release(cur_);
    mem_.release(next_);
    mem_.release(table_);
    mem_.release(nlinks_);
    for (auto& l : links_) mem_.release(l);
    mem_.release(links_);
  }

  bool reset_table(std::size_t expected) {
    std::size_t cap = 64;
    while (cap < 2 * expected) cap *= 2;
    if (table_.capacity() < cap) {
      mem_.release(table_);
      if (!mem_.grow(table_, cap)) return false;
    }
    table_.assign(cap, 0);
    mask_ = cap - 1;
    return true;
  }
  bool rehash() {
    const std::size_t cap = table_.size() * 2;
    if (!mem_.assign_fresh(table_, cap, std::uint64_t{0})) return false;
    mask_ = cap - 1;
    for (std::size_t i = 0; i < next_.size(); ++i) {
      std::size_t slot = next_[i].hash & mask_;
      while (table_[slot] != 0) slot = (slot + 1) & mask_;
      table_[slot] = (next_[i].hash & 0xFFFFFFFF00000000ull) | (i + 1);
    }
    return true;
  }

  // Adds the child of cur_[i] that runs v. Returns false when a limit stops the search.
  bool add_child(std::uint32_t i, std::size_t v, std::int64_t known_freed) {
    const state& s = cur_[i];
    const std::int64_t np = std::max(s.peak, s.live + t_.tadd[v]);
    if (np > req_.limit) return true;
    std::uint64_t sig[W];
    for (std::size_t w = 0; w < W; ++w) sig[w] = s.sig[w];
    sig[v / 64] |= std::uint64_t{1} << (v % 64);
    const std::uint64_t h = s.hash ^ t_.zobrist[v];
    const std::uint64_t tag = h & 0xFFFFFFFF00000000ull;
    std::size_t slot = h & mask_;
    while (table_[slot] != 0) {
      const std::uint64_t e = table_[slot];
      if ((e & 0xFFFFFFFF00000000ull) == tag) {
        state& o = next_[(e & 0xFFFFFFFFull) - 1];
        bool same = true;
        for (std::size_t w = 0; w < W; ++w) same &= o.sig[w] == sig[w];
        if (same) {
          if (np < o.peak) {
            o.peak = np;
            nlinks_[(e & 0xFFFFFFFFull) - 1] = link{i, static_cast<std::uint32_t>(v)};
          }
          return true;
        }
      }
      slot = (slot + 1) & mask_;
    }
    // A new state.
    if (++stored_ > req_.max_states || next_.size() >= 0xFFFFFFF0u) return false;
    state c;
    for (std::size_t w = 0; w < W; ++w) c.sig[w] = sig[w];
    for (std::size_t w = 0; w < W; ++w) c.ready[w] = s.ready[w];
    c.ready[v / 64] &= ~(std::uint64_t{1} << (v % 64));
    for (auto x : g_.successors(v))
      if (is_subset<W>(&t_.predmask[x * W], sig)) c.ready[x / 64] |= std::uint64_t{1} << (x % 64);
    const std::int64_t freed = known_freed >= 0 ? known_freed : freed_by(v, sig);
    c.live = s.live + t_.alloc[v] - freed;
    // One step of lookahead: the child's next vertex needs live + its bytes and workspace.
    if (depth_ + 1 < n_) {
      std::int64_t cheapest = std::numeric_limits<std::int64_t>::max();
      for (std::size_t w = 0; w < W; ++w)
        for (std::uint64_t bits = c.ready[w]; bits != 0; bits &= bits - 1)
          cheapest = std::min(cheapest, t_.tadd[w * 64 + static_cast<std::size_t>(std::countr_zero(bits))]);
      if (c.live + cheapest > req_.limit) {
        --stored_;
        return true;
      }
    }
    c.peak = np;
    c.hash = h;
    if (!mem_.grow(next_, next_.size() + 1) || !mem_.grow(nlinks_, nlinks_.size() + 1)) return false;
    next_.push_back(c);
    nlinks_.push_back(link{i, static_cast<std::uint32_t>(v)});
    table_[slot] = tag | next_.size();
    if (2 * next_.size() > table_.size() && !rehash()) return false;
    return true;
  }

  // Expands cur_[i]: one free move if there is one, else every ready vertex.
  bool expand(std::uint32_t i) {
    const state& s = cur_[i];
    if (req_.free_moves) {
      const std::int64_t thr = std::max(s.peak, std::min(req_.free_threshold, req_.limit));
      for (std::size_t w = 0; w < W; ++w)
        for (std::uint64_t bits = s.ready[w]; bits != 0; bits &= bits - 1) {
          const std::size_t v = w * 64 + static_cast<std::size_t>(std::countr_zero(bits));
          if (s.live + t_.tadd[v] > thr) continue;
          std::uint64_t sig[W];
          for (std::size_t k = 0; k < W; ++k) sig[k] = s.sig[k];
          sig[v / 64] |= std::uint64_t{1} << (v % 64);
          const std::int64_t freed = freed_by(v, sig);
          if (t_.alloc[v] - freed <= 0) return add_child(i, v, freed);
        }
    }
    for (std::size_t w = 0; w < W; ++w)
      for (std::uint64_t bits = cur_[i].ready[w]; bits != 0; bits &= bits - 1) {
        const std::size_t v = w * 64 + static_cast<std::size_t>(std::countr_zero(bits));
        if (!add_child(i, v, -1)) return false;
      }
    return true;
  }

  // Prefetches the table slots the children of cur_[i] will probe (hides the cache misses of the
  // probes behind the expansion of the previous state).
  void prefetch_children(std::size_t i) const noexcept {
    if (i >= cur_.size()) return;
    const state& s = cur_[i];
    for (std::size_t w = 0; w < W; ++w)
      for (std::uint64_t bits = s.ready[w]; bits != 0; bits &= bits - 1) {
        const std::size_t v = w * 64 + static_cast<std::size_t>(std::countr_zero(bits));
        __builtin_prefetch(&table_[(s.hash ^ t_.zobrist[v]) & mask_]);
      }
  }

  // Keeps the beam_width best states of next_ (smallest peak, then live, then index).
  void apply_beam() {
    if (req_.beam_width == 0 || next_.size() <= req_.beam_width) return;
    std::vector<std::uint32_t> idx(next_.size());
    std::iota(idx.begin(), idx.end(), 0u);
    auto better = [&](std::uint32_t a, std::uint32_t b) {
      if (next_[a].peak != next_[b].peak) return next_[a].peak < next_[b].peak;
      if (next_[a].live != next_[b].live) return next_[a].live < next_[b].live;
      return a < b;
    };
    std::nth_element(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(req_.beam_width), idx.end(), better);
    idx.resize(req_.beam_width);
    std::sort(idx.begin(), idx.end());
    for (std::size_t k = 0; k < idx.size(); ++k) {
      next_[k] = next_[idx[k]];
      nlinks_[k] = nlinks_[idx[k]];
    }
    next_.resize(idx.size());
    nlinks_.resize(idx.size());
  }

  void run_layers(serenity_dp_answer& ans) {
    const std::int64_t no_more = req_.limit == std::numeric_limits<std::int64_t>::max() ? req_.limit : req_.limit + 1;
    auto stop = [&](std::int64_t layer_min) {
      ans.outcome = serenity_dp_outcome::stopped;
      ans.lower_bound = std::min(layer_min, no_more);
    };
    if (!mem_.grow(cur_, 1) || !mem_.grow(links_, n_ + 1)) return stop(0);
    state s0{};
    for (std::size_t v = 0; v < n_; ++v)
      if (g_.in_degree(v) == 0) s0.ready[v / 64] |= std::uint64_t{1} << (v % 64);
    cur_.push_back(s0);
    stored_ = 1;
    std::uint64_t expanded = 0;
    for (std::size_t depth = 0; depth < n_; ++depth) {
      depth_ = depth;
      if (cur_.empty()) {
        ans.outcome = serenity_dp_outcome::no_solution;
        ans.lower_bound = no_more;
        return;
      }
      std::int64_t layer_min = std::numeric_limits<std::int64_t>::max();
      for (const auto& s : cur_) layer_min = std::min(layer_min, s.peak);
      next_.clear();
      nlinks_.clear();
      if (!reset_table(cur_.size())) return stop(layer_min);
      for (std::uint32_t i = 0; i < cur_.size(); ++i) {
        ++expanded;
        ans.stats.states_expanded = expanded;
        if ((expanded & 1023) == 0 && std::chrono::steady_clock::now() >= req_.deadline) {
          ans.out_of_time = true;
          return stop(layer_min);
        }
        prefetch_children(i + 1);
        if (!expand(i)) return stop(layer_min);
      }
      apply_beam();
#ifdef MEMSCHED_SERENITY_TRACE
      std::fprintf(stderr, "layer %zu: %zu -> %zu\n", depth, cur_.size(), next_.size());
#endif
      // Keep this layer's parent links (exactly sized), drop the expanded layer.
      std::vector<link> kept(nlinks_.begin(), nlinks_.end());
      if (!mem_.account(static_cast<std::int64_t>(kept.capacity() * sizeof(link)))) return stop(layer_min);
      links_.push_back(std::move(kept));  // links_ has room for n_ + 1 layers
      cur_.swap(next_);
      ans.stats.states_stored = stored_;
    }
    ans.stats.states_stored = stored_;
    if (cur_.empty()) {
      ans.outcome = serenity_dp_outcome::no_solution;
      ans.lower_bound = no_more;
      return;
    }
    assert(cur_.size() == 1);
    ans.outcome = serenity_dp_outcome::solved;
    ans.peak = cur_[0].peak;
    ans.lower_bound = ans.peak;
    ans.order.assign(n_, 0);
    std::uint32_t idx = 0;
    for (std::size_t depth = n_; depth > 0; --depth) {
      const link l = links_[depth - 1][idx];
      ans.order[depth - 1] = l.node;
      idx = l.parent;
    }
  }

  const memory_graph& g_;
  serenity_dp_request req_;
  std::size_t n_;
  signature_tables<W> t_;
  pool_accountant mem_;
  std::vector<state> cur_, next_;
  std::vector<std::uint64_t> table_;
  std::size_t mask_ = 0;
  std::vector<link> nlinks_;
  std::vector<std::vector<link>> links_;
  std::uint64_t stored_ = 0;
  std::size_t depth_ = 0;
};

/// Calls run.template operator()<W>() with the smallest bitset width W (in 64-bit words, from
/// 1, 2, 3, 4, 6, 8, 12, 16, 32, 64) that holds n vertices, or too_large() beyond 4096 vertices.
template <class Run, class TooLarge>
auto with_signature_width(std::size_t n, Run&& run, TooLarge&& too_large) {
  const std::size_t words = (n + 63) / 64;
  if (words <= 1) return run.template operator()<1>();
  if (words <= 2) return run.template operator()<2>();
  if (words <= 3) return run.template operator()<3>();
  if (words <= 4) return run.template operator()<4>();
  if (words <= 6) return run.template operator()<6>();
  if (words <= 8) return run.template operator()<8>();
  if (words <= 12) return run.template operator()<12>();
  if (words <= 16) return run.template operator()<16>();
  if (words <= 32) return run.template operator()<32>();
  if (words <= 64) return run.template operator()<64>();
  return too_large();
}

/// Runs the search with the smallest bitset width that holds the graph. Graphs of more than 4096
/// vertices are not searched (outcome stopped, lower bound 0).
inline serenity_dp_answer run_serenity_dp(const memory_graph& g, const serenity_dp_request& req) {
  return with_signature_width(g.size(), [&]<std::size_t W>() { return serenity_dp<W>(g, req).run(); }, [] {
    serenity_dp_answer a;
    a.outcome = serenity_dp_outcome::stopped;
    return a;
  });
}

/// Greedy order: among ready vertices run the one that leaves the least live memory (ties: the
/// smaller transient peak, then the smaller index). O(n * (ready + degrees)).
inline std::vector<std::size_t> serenity_greedy_order(const memory_graph& g) {
  const std::size_t n = g.size();
  std::vector<std::uint32_t> indeg(n), remaining(n);
  std::vector<std::size_t> ready, order;
  order.reserve(n);
  for (std::size_t v = 0; v < n; ++v) {
    indeg[v] = static_cast<std::uint32_t>(g.in_degree(v));
    remaining[v] = static_cast<std::uint32_t>(g.out_degree(v));
    if (indeg[v] == 0) ready.push_back(v);
  }
  std::int64_t live = 0;
  while (!ready.empty()) {
    std::size_t best = 0;
    std::int64_t best_after = 0, best_trans = 0;
    for (std::size_t k = 0; k < ready.size(); ++k) {
      const std::size_t v = ready[k];
      std::int64_t after = live + ((g.out_degree(v) > 0 || g.is_output(v)) ? g.bytes(v) : 0);
      for (auto p : g.predecessors(v))
        if (remaining[p] == 1 && !g.is_output(p)) after -= g.bytes(p);
      const std::int64_t trans = live + g.bytes(v) + g.workspace(v);
      if (k == 0 || after < best_after || (after == best_after && (trans < best_trans || (trans == best_trans && v < ready[best])))) {
        best = k;
        best_after = after;
        best_trans = trans;
      }
    }
    const std::size_t v = ready[best];
    ready.erase(ready.begin() + static_cast<std::ptrdiff_t>(best));
    order.push_back(v);
    live = best_after;
    for (auto p : g.predecessors(v)) --remaining[p];
    for (auto s : g.successors(v))
      if (--indeg[s] == 0) ready.push_back(s);
  }
  return order;
}

}  // namespace memsched::detail
