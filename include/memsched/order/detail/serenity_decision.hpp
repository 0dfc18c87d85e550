#pragma once
// The decision search of serenity_order: is there an order with peak <= tau? Depth first over
// signatures (sets of scheduled vertices) with a memo of dead signatures, run from the inputs
// (forward) and from the outputs (backward) in alternating slices; the first direction to answer
// wins. Internal; see order/serenity.hpp and docs/serenity.md ("Decision searches").
//
// Why two directions: the live memory of a partial schedule depends only on its signature, read
// from either end. The backward search's signature is the set U of vertices that run last (an
// up-closed set: in forward time, the ones not yet run) and it builds the order from its last
// vertex; the tensors resident just before vertex x runs are the ones computed earlier (not in U,
// not x) that are graph outputs or are read by x or a vertex of U.
// A graph whose tightest moment is near its end prunes at once backward and late forward (and
// the other way round); a region where every order fits is crossed by one depth-first dive.

#include <memsched/graph/memory_graph.hpp>
#include <memsched/order/detail/deadline_clock.hpp>
#include <memsched/order/detail/serenity_memory_pool.hpp>
#include <memsched/order/detail/signature_tables.hpp>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#ifdef MEMSCHED_SERENITY_TRACE
#include <cstdio>
#endif

namespace memsched::detail {

enum class serenity_decision { yes, no, paused, stopped };

/// One direction of the decision search (forward from the inputs or backward from the outputs).
class serenity_dfs {
 public:
  /// `tables` are g's (built here when null; the two directions of a decider share one).
  serenity_dfs(const memory_graph& g, bool backward, serenity_memory_pool& pool, std::uint64_t max_states,
               std::chrono::steady_clock::time_point deadline, bool free_moves, std::shared_ptr<const signature_tables> tables = nullptr)
      : g_(g), tables_(tables ? std::move(tables) : std::make_shared<const signature_tables>(g)), t_(*tables_), w_(t_.words),
        backward_(backward), mem_(pool), max_states_(max_states), search_deadline_(deadline),
        clock_(deadline), free_moves_(free_moves), n_(g.size()), kbits_(2 * w_), dead_(w_), with_(w_) {
    if (backward_)
      for (auto v : g.outputs()) root_live_ += g.bytes(v);
  }
  ~serenity_dfs() { release_memo(); }
  [[nodiscard]] const std::shared_ptr<const signature_tables>& tables() const { return tables_; }
  serenity_dfs(const serenity_dfs&) = delete;
  serenity_dfs& operator=(const serenity_dfs&) = delete;

  /// Starts deciding tau, stopping at `deadline` at the latest (and at the search's own deadline).
  /// The memo of dead signatures is kept when tau <= the last tau decided.
  void start(std::int64_t tau, std::chrono::steady_clock::time_point deadline) {
    if (tau > memo_tau_) release_memo();  // dead at a smaller tau says nothing about a larger one
    clock_.set(std::min(deadline, search_deadline_));
    out_of_time_ = false;
    memo_tau_ = tau;
    tau_ = tau;
    stack_.clear();
    bits_.clear();
    children_.clear();
    std::fill(kbits_.begin(), kbits_.end(), 0);
    for (std::size_t v = 0; v < n_; ++v)
      if ((backward_ ? g_.out_degree(v) : g_.in_degree(v)) == 0) set_bit(kbits_.data() + w_, v);
    with_small_width(w_, [&]<std::size_t W>() { (void)push<W>(frame{0, root_live_, 0, 0, 0, 0}); });
  }

  /// Goes on with the current tau (after a pause) under a new deadline.
  void extend(std::chrono::steady_clock::time_point deadline) {
    clock_.set(std::min(deadline, search_deadline_));
    out_of_time_ = false;
  }

  /// Expands up to `budget` more signatures: yes (order() has peak <= tau), no (proven), paused
  /// (budget used up), stopped (deadline, max_states or the memory pool).
  serenity_decision run(std::uint64_t budget) {
    if (clock_.resume()) {
      out_of_time_ = true;
      return serenity_decision::stopped;
    }
    return with_small_width(w_, [&]<std::size_t W>() { return run_steps<W>(budget); });
  }

  /// The order found by the last `yes`, first vertex first.
  [[nodiscard]] const std::vector<std::size_t>& order() const { return found_; }
  [[nodiscard]] std::uint64_t expanded() const { return expanded_; }
  [[nodiscard]] std::uint64_t stored() const { return memo_keys_.size() / std::max<std::size_t>(w_, 1); }
  [[nodiscard]] bool out_of_time() const { return out_of_time_; }
  [[nodiscard]] std::int64_t peak_bytes() const { return mem_.peak(); }  ///< Most memory the memo held.

 private:
  // A frame of the depth-first stack; its signature and ready set (2w words) are in bits_.
  struct frame {
    std::uint64_t hash;
    std::int64_t live;
    std::uint32_t first, end, next;  // this frame's children in children_
    std::uint32_t node;              // the vertex run to reach this frame
  };
  struct child {
    std::uint32_t node;
    std::int64_t live;       // live bytes after the child's vertex runs
    std::int64_t transient;  // bytes while it runs
    // Fewer live bytes first, then fewer transient bytes, then the lower vertex. A member rather
    // than a lambda in push<W>: one instantiation of std::sort instead of one per width.
    friend bool operator<(const child& a, const child& b) noexcept {
      if (a.live != b.live) return a.live < b.live;
      if (a.transient != b.transient) return a.transient < b.transient;
      return a.node < b.node;
    }
  };

  // The width in words: W, or the run-time width when W == 0 (see with_small_width).
  template <std::size_t W>
  std::size_t words() const noexcept { return W != 0 ? W : w_; }

  // The loop of run() for width W.
  template <std::size_t W>
  serenity_decision run_steps(std::uint64_t budget) {
    const std::size_t nw = words<W>();  // a constant for W > 0
    // Work since the last look at the clock: 1 per iteration (a memo probe or a pop) plus the
    // vertices a push stepped through; a push on a wide graph costs ~1,000 times a probe.
    std::uint64_t work = 0, left = clock_.steps_left();
    while (budget > 0) {
      if (work < left) {
        left -= work;
      } else {
        if (clock_.read()) {
          out_of_time_ = true;
          return serenity_decision::stopped;
        }
        left = clock_.steps_left();
      }
      work = 1;
      if (stack_.empty()) return serenity_decision::no;
      frame& f = stack_.back();
      const std::uint64_t* fbits = bits_.data() + (stack_.size() - 1) * 2 * nw;  // signature, ready set
      if (stack_.size() == n_ + 1) {
        found_.clear();
        for (std::size_t k = 1; k < stack_.size(); ++k) found_.push_back(stack_[k].node);
        if (backward_) std::reverse(found_.begin(), found_.end());
        return serenity_decision::yes;
      }
      if (f.next == f.end) {  // every child is dead: so is f
        const std::uint64_t hash = f.hash;
        copy_bits(dead_.data(), fbits, nw);
        children_.resize(f.first);
        stack_.pop_back();
        bits_.shrink(bits_.size() - 2 * nw);
        if (!remember_dead(dead_.data(), hash)) return serenity_decision::stopped;
        continue;
      }
      const child c = children_[f.next++];
      std::uint64_t* ksig = kbits_.data();
      std::uint64_t* kready = ksig + nw;
      copy_bits(ksig, fbits, nw);
      set_bit(ksig, c.node);
      const std::uint64_t khash = f.hash ^ t_.zobrist[c.node];
      if (is_dead<W>(ksig, khash)) continue;
      copy_bits(kready, fbits + nw, nw);
      clear_bit(kready, c.node);
      if (backward_) {
        for (auto x : g_.predecessors(c.node))
          if (t_.successors_later<W>(x, ksig)) set_bit(kready, x);
      } else {
        for (auto x : g_.successors(c.node))
          if (t_.predecessors_in<W>(x, ksig)) set_bit(kready, x);
      }
      work += push<W>(frame{khash, c.live, 0, 0, 0, c.node});
      --budget;
      ++expanded_;
    }
    return serenity_decision::paused;
  }

  // Running v from a frame with signature sig and live bytes `live` (the memory model's step on
  // signatures, detail/signature_tables.hpp).
  template <std::size_t W>
  MEMSCHED_DETAIL_HOT_INLINE child step(std::size_t v, const std::uint64_t* sig, std::int64_t live) noexcept {
    search_step st;
    if (backward_) {
      st = backward_step<W>(g_, t_, v, sig, live);
    } else {
      const std::size_t nw = words<W>();
      copy_bits(with_.data(), sig, nw);
      set_bit(with_.data(), v);
      st = forward_step<W>(g_, t_, v, with_.data(), live);
    }
    return child{static_cast<std::uint32_t>(v), st.live, st.transient};
  }

  // Pushes f (signature and ready set in kbits_) with its children: the vertices that fit tau,
  // smallest live bytes after first; only one child when a free move exists (a vertex that fits
  // tau and does not raise the live bytes: some order within tau runs it next, docs/serenity.md).
  // Returns the number of vertices stepped through (the work done, for the deadline clock).
  template <std::size_t W>
  std::uint64_t push(frame f) {
    const std::size_t nw = words<W>();  // a constant for W > 0
    f.first = f.next = static_cast<std::uint32_t>(children_.size());
    const std::uint64_t* sig = kbits_.data();
    const std::uint64_t* ready = sig + nw;
    std::uint64_t scanned = 0;
    // A free move ends the scan of its 64-bit word only: later words still add children (more
    // branching than needed, never less; kept as it is so that the orders found stay the same).
    for (std::size_t w = 0; w < nw; ++w)
      for (std::uint64_t bits = ready[w]; bits != 0; bits &= bits - 1) {
        const std::size_t v = w * 64 + static_cast<std::size_t>(std::countr_zero(bits));
        const child c = step<W>(v, sig, f.live);
        ++scanned;
        if (c.transient > tau_) continue;
        if (free_moves_ && c.live <= f.live) {
          children_.resize(f.first);
          children_.push_back(c);
          break;
        }
        children_.push_back(c);
      }
    f.end = static_cast<std::uint32_t>(children_.size());
    if (!table_.empty())  // the memo probes of the children miss the cache: start them now
      for (std::uint32_t k = f.first; k < f.end; ++k) __builtin_prefetch(&table_[(f.hash ^ t_.zobrist[children_[k].node]) & mask_]);
    std::sort(children_.begin() + f.first, children_.end());
    stack_.push_back(f);
    if (bits_.size() + 2 * nw > bits_.capacity()) bits_.reserve(std::max<std::size_t>({64, bits_.size() + 2 * nw, 2 * bits_.capacity()}));
    bits_.append(kbits_.data(), 2 * nw);
    return scanned;
  }

  // The memo: open addressing over (tag | index + 1), keys stored w words each.
  template <std::size_t W>
  bool is_dead(const std::uint64_t* sig, std::uint64_t hash) const noexcept {
    const std::size_t nw = words<W>();  // a constant for W > 0
    if (table_.empty()) return false;
    const std::uint64_t tag = hash & 0xFFFFFFFF00000000ull;
    for (std::size_t slot = hash & mask_; table_[slot] != 0; slot = (slot + 1) & mask_) {
      const std::uint64_t e = table_[slot];
      if ((e & 0xFFFFFFFF00000000ull) != tag) continue;
      if (same_bits(&memo_keys_[((e & 0xFFFFFFFFull) - 1) * nw], sig, nw)) return true;
    }
    return false;
  }
  bool remember_dead(const std::uint64_t* sig, std::uint64_t hash) {
    const std::size_t count = memo_hash_.size();
    if (count + 1 > max_states_ || count + 1 >= 0xFFFFFFF0u) return false;
    if (2 * (count + 1) > table_.size()) {
      if (!mem_.assign_fresh(table_, std::max<std::size_t>(1024, table_.size() * 2), std::uint64_t{0})) return false;
      mask_ = table_.size() - 1;
      for (std::size_t i = 0; i < count; ++i) {
        std::size_t slot = memo_hash_[i] & mask_;
        while (table_[slot] != 0) slot = (slot + 1) & mask_;
        table_[slot] = (memo_hash_[i] & 0xFFFFFFFF00000000ull) | (i + 1);
      }
    }
    if (!mem_.grow(memo_keys_, memo_keys_.size() + w_, 1024 * w_) || !mem_.grow(memo_hash_, memo_hash_.size() + 1, 1024))
      return false;
    memo_keys_.insert(memo_keys_.end(), sig, sig + w_);
    memo_hash_.push_back(hash);
    std::size_t slot = hash & mask_;
    while (table_[slot] != 0) slot = (slot + 1) & mask_;
    table_[slot] = (hash & 0xFFFFFFFF00000000ull) | (count + 1);
    return true;
  }
  void release_memo() {
    mem_.release(memo_keys_);
    mem_.release(memo_hash_);
    mem_.release(table_);
    mask_ = 0;
  }

  const memory_graph& g_;
  std::shared_ptr<const signature_tables> tables_;
  const signature_tables& t_;
  std::size_t w_;
  bool backward_;
  pool_accountant mem_;
  std::uint64_t max_states_;
  std::chrono::steady_clock::time_point search_deadline_;
  deadline_clock clock_;
  bool free_moves_;
  std::size_t n_;
  std::int64_t root_live_ = 0;
  std::int64_t tau_ = 0;
  std::int64_t memo_tau_ = std::numeric_limits<std::int64_t>::min();
  std::vector<frame> stack_;
  word_buffer bits_;                             // 2w words per frame of stack_
  std::vector<std::uint64_t> kbits_, dead_, with_;  // scratch
  std::vector<child> children_;
  std::vector<std::uint64_t> memo_keys_, memo_hash_, table_;
  std::size_t mask_ = 0;
  std::vector<std::size_t> found_;
  std::uint64_t expanded_ = 0;
  bool out_of_time_ = false;
};

/// One direction of the decision search, or null for a graph over max_signature_vertices.
inline std::unique_ptr<serenity_dfs> make_serenity_dfs(bool backward, const memory_graph& g, serenity_memory_pool& pool,
                                                       std::uint64_t max_states, std::chrono::steady_clock::time_point deadline,
                                                       bool free_moves, std::shared_ptr<const signature_tables> tables = nullptr) {
  if (g.size() > max_signature_vertices) return nullptr;
  return std::make_unique<serenity_dfs>(g, backward, pool, max_states, deadline, free_moves, std::move(tables));
}

/// Decides tau with a forward and a backward search in alternating slices of doubling size (both
/// deterministic: slices count expansions, not time). Keeps both memos between decisions.
class serenity_decider {
 public:
  serenity_decider(const memory_graph& g, serenity_memory_pool& pool, std::uint64_t max_states,
                   std::chrono::steady_clock::time_point deadline, bool free_moves)
      : forward_(make_serenity_dfs(false, g, pool, max_states, deadline, free_moves)),
        backward_(forward_ ? make_serenity_dfs(true, g, pool, max_states, deadline, free_moves, forward_->tables()) : nullptr) {}

  /// False when the graph is too large for the search (more than 4096 vertices).
  [[nodiscard]] bool usable() const { return forward_ != nullptr; }

  /// yes (order() within tau), no, stopped (a limit or `deadline`), or paused once both directions
  /// together have expanded `budget` more signatures.
  /// A decision that paused goes on where it stopped when the next call asks the same tau.
  serenity_decision decide(std::int64_t tau, std::uint64_t budget,
                           std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max()) {
    if (paused_tau_ == tau) {
      forward_->extend(deadline);
      backward_->extend(deadline);
    } else {
      forward_->start(tau, deadline);
      backward_->start(tau, deadline);
    }
    paused_tau_.reset();
    const std::uint64_t until = budget > ~expanded() ? ~std::uint64_t{0} : expanded() + budget;
    for (std::uint64_t slice = 1024;; slice = std::min<std::uint64_t>(slice * 2, std::uint64_t{1} << 40)) {
      for (auto* s : {backward_.get(), forward_.get()}) {
        if (expanded() >= until) {
          paused_tau_ = tau;
          return serenity_decision::paused;
        }
        const auto r = s->run(std::min(slice, until - expanded()));
        if (r == serenity_decision::paused) continue;
#ifdef MEMSCHED_SERENITY_TRACE
        std::fprintf(stderr, "  answered by %s: fwd %llu/%llu bwd %llu/%llu\n", s == forward_.get() ? "forward" : "backward",
                     (unsigned long long)forward_->expanded(), (unsigned long long)forward_->stored(),
                     (unsigned long long)backward_->expanded(), (unsigned long long)backward_->stored());
#endif
        if (r == serenity_decision::yes) order_ = s->order();
        return r;
      }
    }
  }
  [[nodiscard]] const std::vector<std::size_t>& order() const { return order_; }
  [[nodiscard]] std::uint64_t expanded() const { return forward_->expanded() + backward_->expanded(); }
  [[nodiscard]] std::uint64_t stored() const { return forward_->stored() + backward_->stored(); }
  /// True when the last decision stopped at a deadline (else a memory or state cap stopped it).
  [[nodiscard]] bool out_of_time() const { return forward_->out_of_time() || backward_->out_of_time(); }
  [[nodiscard]] std::int64_t peak_bytes() const { return forward_->peak_bytes() + backward_->peak_bytes(); }

 private:
  std::unique_ptr<serenity_dfs> forward_, backward_;
  std::vector<std::size_t> order_;
  std::optional<std::int64_t> paused_tau_;  // the tau of a decision that paused
};

}  // namespace memsched::detail
