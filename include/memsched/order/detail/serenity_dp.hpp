#pragma once
// The layered search of serenity_order (Algorithm 1): a dynamic program over signatures (the set
// of scheduled vertices) of one memory_graph, layer by layer. Internal; see order/serenity.hpp and
// docs/serenity.md.

#include <memsched/graph/memory_graph.hpp>
#include <memsched/order/detail/deadline_clock.hpp>
#include <memsched/order/detail/serenity_memory_pool.hpp>
#include <memsched/order/detail/signature_tables.hpp>
#include <memsched/order/order_result.hpp>

#include <algorithm>
#include <bit>
#include <cassert>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#ifdef MEMSCHED_SERENITY_TRACE
#include <cstdio>
#endif

namespace memsched::detail {

/// What one search is asked to do.
struct serenity_dp_request {
  /// Keep only partial schedules whose peak is <= limit (the budget, or incumbent - 1).
  std::int64_t limit = std::numeric_limits<std::int64_t>::max();
  /// Free moves may raise a state's peak up to this value (must be <= the optimum, or <= a value
  /// the caller accepts as good enough; see detail/serenity_solver.hpp).
  std::int64_t free_threshold = 0;
  bool free_moves = true;
  /// Keep at most this many states per layer, the ones with the smallest (peak, live): a heuristic
  /// beam search (no proof). 0: exact.
  std::size_t beam_width = 0;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  std::uint64_t max_states = std::numeric_limits<std::uint64_t>::max();
  serenity_memory_pool* pool = nullptr;  ///< Required.
};

/// paused: run(budget) expanded `budget` states; calling run again goes on where it paused.
enum class serenity_dp_outcome { solved, no_solution, stopped, paused };

struct serenity_dp_answer {
  serenity_dp_outcome outcome = serenity_dp_outcome::no_solution;
  std::vector<std::size_t> order;
  std::int64_t peak = 0;
  /// min(optimum, limit + 1) >= lower_bound when stopped; limit + 1 when no_solution (exact search).
  std::int64_t lower_bound = 0;
  bool out_of_time = false;  ///< stopped by the deadline (else by max_states or the memory pool)
  order_stats stats;
};

/// The layered search over signatures of `words` 64-bit words (the graph's size rounded up). The
/// per-state steps are templates on the width (W = 0: the run-time width w_), instantiated by
/// with_small_width once per layer loop; the rest exists once.
class serenity_dp {
 public:
  serenity_dp(const memory_graph& g, const serenity_dp_request& req)
      : g_(g), req_(req), n_(g.size()), t_(g), w_(t_.words), rec_(2 * w_ + head), mem_(*req.pool),
        child_(rec_), clock_(req.deadline) {
    assert(n_ <= max_signature_vertices);
  }

  /// Runs the search to its end, or (outcome paused) until `budget` more states were expanded; a
  /// paused search goes on from the same state at the next call and keeps its memory until then.
  /// The answer's stats count the whole search so far.
  serenity_dp_answer run(std::uint64_t budget = std::numeric_limits<std::uint64_t>::max()) {
    const auto start = std::chrono::steady_clock::now();
    serenity_dp_answer ans;
    const std::uint64_t until = budget > ~expanded_ ? ~std::uint64_t{0} : expanded_ + budget;
    run_layers(ans, until);
    if (ans.outcome != serenity_dp_outcome::paused) release_all();
    seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ans.stats.states_expanded = expanded_;
    ans.stats.states_stored = stored_;
    ans.stats.seconds = seconds_;
    ans.stats.search_bytes = static_cast<std::uint64_t>(mem_.peak());
    return ans;
  }

  /// Lowers the limit of a paused search (a better incumbent was found meanwhile): states above it
  /// are not expanded further. The free-move threshold stays.
  void lower_limit(std::int64_t limit) noexcept { req_.limit = std::min(req_.limit, limit); }
  [[nodiscard]] std::uint64_t expanded() const noexcept { return expanded_; }

 private:
  // A state is rec_ = 2w + 3 words of a flat layer vector: the hash, the live bytes and the peak
  // (the last two as two's complement), then the signature (w words) and the ready set (w words).
  static constexpr std::size_t head = 3;
  struct link {
    std::uint32_t parent;
    std::uint32_t node;
  };
  template <std::size_t W>
  std::size_t words() const noexcept { return W != 0 ? W : w_; }
  template <std::size_t W>
  std::size_t rec() const noexcept { return W != 0 ? 2 * W + head : rec_; }
  template <std::size_t W = 0>
  std::uint64_t* at(word_buffer& layer, std::size_t i) noexcept { return layer.data() + i * rec<W>(); }
  template <std::size_t W = 0>
  const std::uint64_t* at(const word_buffer& layer, std::size_t i) const noexcept { return layer.data() + i * rec<W>(); }
  static std::uint64_t hash(const std::uint64_t* s) noexcept { return s[0]; }
  static std::int64_t live(const std::uint64_t* s) noexcept { return static_cast<std::int64_t>(s[1]); }
  static std::int64_t peak(const std::uint64_t* s) noexcept { return static_cast<std::int64_t>(s[2]); }
  template <class P>
  static P* sig(P* s) noexcept { return s + head; }
  template <std::size_t W, class P>
  P* ready(P* s) const noexcept { return s + head + words<W>(); }

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
    for (std::size_t i = 0; i < next_n_; ++i) {
      const std::uint64_t h = hash(at(next_, i));
      std::size_t slot = h & mask_;
      while (table_[slot] != 0) slot = (slot + 1) & mask_;
      table_[slot] = (h & 0xFFFFFFFF00000000ull) | (i + 1);
    }
    return true;
  }

  // The bytes in use while v runs on top of a state, `run` = live + tadd[v], when the state with
  // v is `sig_with_v` (the in-place rule; kept out of line so that graphs without in-place
  // vertices keep the loops GCC inlines).
  template <std::size_t W>
  [[gnu::noinline]] std::int64_t inplace_run(std::size_t v, const std::uint64_t* sig_with_v, std::int64_t run) const noexcept {
    return t_.saving[v] != 0 && forward_reuses<W>(t_, v, sig_with_v) ? run - t_.saving[v] : run;
  }

  // Adds the child of cur_[i] that runs v (when `known`, its live bytes `known_live` and, with IP,
  // the bytes while v runs `known_run`). Returns false when a limit stops the search. IP: the
  // graph has in-place vertices (t_.inplace). Precondition: child_'s signature is cur_[i]'s with
  // v (expand writes it once per state and sets and clears v's bit around the call: most
  // children are found in the table, and copying the signature for each cost ~7 % of the
  // search's instructions on 5-word graphs).
  template <std::size_t W, bool IP>
  bool add_child(std::uint32_t i, std::size_t v, bool known, std::int64_t known_live, std::int64_t known_run) {
    const std::size_t w = words<W>();
    const std::uint64_t* s = at<W>(cur_, i);
    // An in-place v (saving != 0) may run within an input's buffer: whether one dies at v needs
    // the child's signature (detail/signature_tables.hpp). Stored states have peak <= limit.
    const std::int64_t run = live(s) + t_.tadd[v];
    std::int64_t np = std::max(peak(s), run);
    if (np > req_.limit && (!IP || run - t_.saving[v] > req_.limit)) return true;
    std::uint64_t* c = child_.data();
    const std::uint64_t* csig = sig(c);
    if constexpr (IP) {
      np = std::max(peak(s), known ? known_run : inplace_run<W>(v, csig, run));
      if (np > req_.limit) return true;
    }
    const std::uint64_t h = hash(s) ^ t_.zobrist[v];
    const std::uint64_t tag = h & 0xFFFFFFFF00000000ull;
    std::size_t slot = h & mask_;
    while (table_[slot] != 0) {
      const std::uint64_t e = table_[slot];
      if ((e & 0xFFFFFFFF00000000ull) == tag) {
        std::uint64_t* o = at<W>(next_, (e & 0xFFFFFFFFull) - 1);
        if (same_bits(sig(o), csig, w)) {
          if (np < peak(o)) {
            o[2] = static_cast<std::uint64_t>(np);
            nlinks_[(e & 0xFFFFFFFFull) - 1] = link{i, static_cast<std::uint32_t>(v)};
          }
          return true;
        }
      }
      slot = (slot + 1) & mask_;
    }
    // A new state.
    if (++stored_ > req_.max_states || next_n_ >= 0xFFFFFFF0u) return false;
    std::uint64_t* cr = ready<W>(c);
    copy_bits(cr, ready<W>(s), w);
    clear_bit(cr, v);
    for (auto x : g_.successors(v))
      if (t_.predecessors_in<W>(x, csig)) set_bit(cr, x);
    const std::int64_t nlive = known ? known_live : forward_live<W>(g_, t_, v, csig, live(s));
    // One step of lookahead: the child's next vertex needs live + its bytes and workspace (less its
    // bytes when it is in-place and may run within an input's buffer: tmin).
    if (depth_ + 1 < n_) {
      std::int64_t cheapest = std::numeric_limits<std::int64_t>::max();
      const std::int64_t* need = IP ? t_.tmin.data() : t_.tadd.data();
      for_each_bit(cr, w, [&](std::size_t x) { cheapest = std::min(cheapest, need[x]); });
      if (nlive + cheapest > req_.limit) {
        --stored_;
        return true;
      }
    }
    c[0] = h;
    c[1] = static_cast<std::uint64_t>(nlive);
    c[2] = static_cast<std::uint64_t>(np);
    const std::size_t r = rec<W>(), end = next_.size();
    if (!mem_.grow(next_, end + r, 16 * r) || !mem_.grow(nlinks_, nlinks_.size() + 1)) return false;
    next_.append(c, r);
    ++next_n_;
    nlinks_.push(link{i, static_cast<std::uint32_t>(v)});
    table_[slot] = tag | next_n_;
    if (2 * next_n_ > table_.size() && !rehash()) return false;
    return true;
  }

  // Expands cur_[i]: one free move if there is one, else every ready vertex. child_'s signature
  // holds cur_[i]'s, and v's bit only while v is tried.
  template <std::size_t W, bool IP>
  bool expand(std::uint32_t i) {
    const std::size_t w = words<W>();
    const std::uint64_t* s = at<W>(cur_, i);
    const std::uint64_t* rs = ready<W>(s);
    std::uint64_t* csig = sig(child_.data());
    copy_bits(csig, sig(s), w);
    if (req_.free_moves) {
      const std::int64_t thr = std::max(peak(s), std::min(req_.free_threshold, req_.limit));
      for (std::size_t k = 0; k < w; ++k)
        for (std::uint64_t bits = rs[k]; bits != 0; bits &= bits - 1) {
          const std::size_t v = k * 64 + static_cast<std::size_t>(std::countr_zero(bits));
          if (live(s) + (IP ? t_.tmin[v] : t_.tadd[v]) > thr) continue;
          const std::uint64_t bit = bits & (0 - bits);
          csig[k] |= bit;
          const std::int64_t after = forward_live<W>(g_, t_, v, csig, live(s));
          if (after <= live(s)) {
            if constexpr (IP) {
              const std::int64_t run = inplace_run<W>(v, csig, live(s) + t_.tadd[v]);
              if (run <= thr) return add_child<W, IP>(i, v, true, after, run);
            } else {
              return add_child<W, IP>(i, v, true, after, 0);
            }
          }
          csig[k] &= ~bit;
        }
    }
    for (std::size_t k = 0; k < w; ++k)
      for (std::uint64_t bits = rs[k]; bits != 0; bits &= bits - 1) {
        const std::size_t v = k * 64 + static_cast<std::size_t>(std::countr_zero(bits));
        const std::uint64_t bit = bits & (0 - bits);
        csig[k] |= bit;
        if (!add_child<W, IP>(i, v, false, 0, 0)) return false;
        csig[k] &= ~bit;
      }
    return true;
  }

  // Prefetches the table slots the children of cur_[i] will probe (hides the cache misses of the
  // probes behind the expansion of the previous state).
  template <std::size_t W>
  void prefetch_children(std::size_t i) const noexcept {
    if (i >= cur_n_) return;
    const std::uint64_t* s = at<W>(cur_, i);
    const std::uint64_t h = hash(s);
    for_each_bit(ready<W>(s), words<W>(), [&](std::size_t v) { __builtin_prefetch(&table_[(h ^ t_.zobrist[v]) & mask_]); });
  }

  // Expands the states of cur_ from next_i_ on, until `until` states were expanded in all (then
  // paused, next_i_ is the next one). stopped when a limit stops the search (out_of_time says
  // whether the deadline did).
  enum class layer_end { done, paused, stopped };
  template <std::size_t W, bool IP>
  layer_end expand_layer(serenity_dp_answer& ans, std::uint64_t until) {
    for (; next_i_ < cur_n_; ++next_i_) {
      if (expanded_ >= until) return layer_end::paused;
      ++expanded_;
      // One step per expansion: its cost (~ the ready vertices) changes slowly from layer to layer,
      // which the clock's rescaling follows (weighting by count_bits cost 4 % more instructions).
      if (clock_.expired()) {
        ans.out_of_time = true;
        return layer_end::stopped;
      }
      prefetch_children<W>(next_i_ + 1);
      if (!expand<W, IP>(next_i_)) return layer_end::stopped;
    }
    return layer_end::done;
  }

  // Keeps the beam_width best states of next_ (smallest peak, then live, then index).
  void apply_beam() {
    if (req_.beam_width == 0 || next_n_ <= req_.beam_width) return;
    std::vector<std::uint32_t> idx(next_n_);
    std::iota(idx.begin(), idx.end(), 0u);
    auto better = [&](std::uint32_t a, std::uint32_t b) {
      const std::uint64_t *sa = at(next_, a), *sb = at(next_, b);
      if (peak(sa) != peak(sb)) return peak(sa) < peak(sb);
      if (live(sa) != live(sb)) return live(sa) < live(sb);
      return a < b;
    };
    std::nth_element(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(req_.beam_width), idx.end(), better);
    idx.resize(req_.beam_width);
    std::sort(idx.begin(), idx.end());
    for (std::size_t k = 0; k < idx.size(); ++k) {  // idx[k] >= k: copying forward is safe
      copy_bits(at(next_, k), at(next_, idx[k]), rec_);
      nlinks_[k] = nlinks_[idx[k]];
    }
    next_n_ = idx.size();
    next_.shrink(next_n_ * rec_);
    nlinks_.shrink(idx.size());
  }

  void run_layers(serenity_dp_answer& ans, std::uint64_t until) {
    auto stop = [&](std::int64_t layer_min) {
      ans.outcome = serenity_dp_outcome::stopped;
      ans.lower_bound = std::min(layer_min, no_more());
    };
    if (started_ && clock_.resume()) {  // resumed: the time another search took meanwhile is not our work
      ans.out_of_time = true;
      return stop(layer_min_);
    }
    if (!started_) {
      started_ = true;
      if (!mem_.grow(cur_, rec_, 16 * rec_) || !mem_.grow(links_, n_ + 1)) return stop(0);
      cur_.append_zeros(rec_);
      for (std::size_t v = 0; v < n_; ++v)
        if (g_.in_degree(v) == 0) set_bit(ready<0>(cur_.data()), v);
      cur_n_ = 1;
      stored_ = 1;
    }
    for (; depth_ < n_; ++depth_) {
      if (!layer_open_) {
        if (cur_n_ == 0) {
          ans.outcome = serenity_dp_outcome::no_solution;
          ans.lower_bound = no_more();
          return;
        }
        layer_min_ = std::numeric_limits<std::int64_t>::max();
        for (std::size_t i = 0; i < cur_n_; ++i) layer_min_ = std::min(layer_min_, peak(at(cur_, i)));
        next_.clear();
        next_n_ = 0;
        nlinks_.clear();
        if (!reset_table(cur_n_)) return stop(layer_min_);
        next_i_ = 0;
        layer_open_ = true;
      }
      // Graphs with in-place vertices take one more copy of the loop, at the run-time width only
      // (the in-place tests cost ~3 % of the layered search's instructions on graphs without).
      const layer_end end = t_.inplace ? expand_layer<0, true>(ans, until)
                                       : with_small_width(w_, [&]<std::size_t W>() { return expand_layer<W, false>(ans, until); });
      if (end == layer_end::stopped) return stop(layer_min_);
      if (end == layer_end::paused) {
        ans.outcome = serenity_dp_outcome::paused;
        ans.lower_bound = std::min(layer_min_, no_more());
        return;
      }
      layer_open_ = false;
      apply_beam();
#ifdef MEMSCHED_SERENITY_TRACE
      std::fprintf(stderr, "layer %zu: %zu -> %zu\n", depth_, cur_n_, next_n_);
#endif
      // Keep this layer's parent links (exactly sized), drop the expanded layer.
      std::vector<link> kept(nlinks_.data(), nlinks_.data() + nlinks_.size());
      if (!mem_.account(static_cast<std::int64_t>(kept.capacity() * sizeof(link)))) return stop(layer_min_);
      links_.push_back(std::move(kept));  // links_ has room for n_ + 1 layers
      cur_.swap(next_);
      cur_n_ = next_n_;
    }
    if (cur_n_ == 0) {
      ans.outcome = serenity_dp_outcome::no_solution;
      ans.lower_bound = no_more();
      return;
    }
    assert(cur_n_ == 1);
    ans.outcome = serenity_dp_outcome::solved;
    ans.peak = peak(at(cur_, 0));
    ans.lower_bound = ans.peak;
    ans.order.assign(n_, 0);
    std::uint32_t idx = 0;
    for (std::size_t depth = n_; depth > 0; --depth) {
      const link l = links_[depth - 1][idx];
      ans.order[depth - 1] = l.node;
      idx = l.parent;
    }
  }

  // The smallest peak the search would not keep (limit + 1).
  std::int64_t no_more() const noexcept {
    return req_.limit == std::numeric_limits<std::int64_t>::max() ? req_.limit : req_.limit + 1;
  }

  const memory_graph& g_;
  serenity_dp_request req_;
  std::size_t n_;
  signature_tables t_;
  std::size_t w_, rec_;
  pool_accountant mem_;
  word_buffer cur_, next_;               // layers of rec_-word states
  std::size_t cur_n_ = 0, next_n_ = 0;     // states in them
  std::vector<std::uint64_t> child_;
  std::vector<std::uint64_t> table_;
  std::size_t mask_ = 0;
  pod_buffer<link> nlinks_;
  std::vector<std::vector<link>> links_;
  std::uint64_t stored_ = 0, expanded_ = 0;
  std::size_t depth_ = 0;        // the layer being expanded: its states have depth_ vertices run
  std::uint32_t next_i_ = 0;     // the next state of that layer to expand
  bool started_ = false, layer_open_ = false;
  std::int64_t layer_min_ = 0;   // the least peak of that layer (a lower bound when stopped)
  double seconds_ = 0;
  deadline_clock clock_;
};

/// Runs the layered search. Graphs of more than max_signature_vertices vertices are not searched
/// (outcome stopped, lower bound 0).
inline serenity_dp_answer run_serenity_dp(const memory_graph& g, const serenity_dp_request& req) {
  if (g.size() > max_signature_vertices) {
    serenity_dp_answer a;
    a.outcome = serenity_dp_outcome::stopped;
    return a;
  }
  return serenity_dp(g, req).run();
}

}  // namespace memsched::detail
