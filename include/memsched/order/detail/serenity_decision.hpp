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
#include <memsched/order/detail/serenity_dp.hpp>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <new>
#include <vector>

namespace memsched::detail {

enum class serenity_decision { yes, no, paused, stopped };

/// One direction of the decision search, type-erased over the bitset width.
class serenity_decision_search {
 public:
  virtual ~serenity_decision_search() = default;
  /// Starts deciding tau, stopping at `deadline` at the latest (and at the search's own deadline).
  /// The memo of dead signatures is kept when tau <= the last tau decided.
  virtual void start(std::int64_t tau, std::chrono::steady_clock::time_point deadline) = 0;
  /// Expands up to `budget` more signatures: yes (order() has peak <= tau), no (proven), paused
  /// (budget used up), stopped (deadline, max_states or the memory pool).
  virtual serenity_decision run(std::uint64_t budget) = 0;
  /// The order found by the last `yes`, first vertex first.
  [[nodiscard]] virtual const std::vector<std::size_t>& order() const = 0;
  [[nodiscard]] virtual std::uint64_t expanded() const = 0;
  [[nodiscard]] virtual std::uint64_t stored() const = 0;
  [[nodiscard]] virtual bool out_of_time() const = 0;
  [[nodiscard]] virtual std::int64_t peak_bytes() const = 0;  ///< Most memory the memo held.
};

template <std::size_t W, bool Backward>
class serenity_dfs final : public serenity_decision_search {
 public:
  serenity_dfs(const memory_graph& g, serenity_memory_pool& pool, std::uint64_t max_states,
               std::chrono::steady_clock::time_point deadline, bool free_moves)
      : g_(g), t_(g), mem_(pool), max_states_(max_states), search_deadline_(deadline), deadline_(deadline),
        free_moves_(free_moves), n_(g.size()) {
    if (Backward)
      for (auto v : g.outputs()) root_live_ += g.bytes(v);
  }
  ~serenity_dfs() override { release_memo(); }

  void start(std::int64_t tau, std::chrono::steady_clock::time_point deadline) override {
    if (tau > memo_tau_) release_memo();  // dead at a smaller tau says nothing about a larger one
    deadline_ = std::min(deadline, search_deadline_);
    out_of_time_ = false;
    memo_tau_ = tau;
    tau_ = tau;
    stack_.clear();
    children_.clear();
    frame root{};
    root.live = root_live_;
    for (std::size_t v = 0; v < n_; ++v)
      if ((Backward ? g_.out_degree(v) : g_.in_degree(v)) == 0) root.ready[v / 64] |= std::uint64_t{1} << (v % 64);
    push(root);
  }

  serenity_decision run(std::uint64_t budget) override {
    if (std::chrono::steady_clock::now() >= deadline_) {
      out_of_time_ = true;
      return serenity_decision::stopped;
    }
    while (budget > 0) {
      if (stack_.empty()) return serenity_decision::no;
      frame& f = stack_.back();
      if (stack_.size() == n_ + 1) {
        found_.clear();
        for (std::size_t k = 1; k < stack_.size(); ++k) found_.push_back(stack_[k].node);
        if (Backward) std::reverse(found_.begin(), found_.end());
        return serenity_decision::yes;
      }
      if (f.next == f.end) {  // every child is dead: so is f
        const std::uint64_t hash = f.hash;
        std::uint64_t sig[W];
        std::copy(f.sig, f.sig + W, sig);
        children_.resize(f.first);
        stack_.pop_back();
        if (!remember_dead(sig, hash)) return serenity_decision::stopped;
        continue;
      }
      const child c = children_[f.next++];
      frame k{};
      std::copy(f.sig, f.sig + W, k.sig);
      k.sig[c.node / 64] |= std::uint64_t{1} << (c.node % 64);
      k.hash = f.hash ^ t_.zobrist[c.node];
      if (is_dead(k.sig, k.hash)) continue;
      std::copy(f.ready, f.ready + W, k.ready);
      k.ready[c.node / 64] &= ~(std::uint64_t{1} << (c.node % 64));
      for (auto x : Backward ? g_.predecessors(c.node) : g_.successors(c.node))
        if (is_subset<W>(Backward ? &t_.succmask[x * W] : &t_.predmask[x * W], k.sig)) k.ready[x / 64] |= std::uint64_t{1} << (x % 64);
      k.live = c.live;
      k.node = c.node;
      push(k);
      --budget;
      if ((++expanded_ & 1023) == 0 && std::chrono::steady_clock::now() >= deadline_) {
        out_of_time_ = true;
        return serenity_decision::stopped;
      }
    }
    return serenity_decision::paused;
  }

  const std::vector<std::size_t>& order() const override { return found_; }
  std::uint64_t expanded() const override { return expanded_; }
  std::uint64_t stored() const override { return memo_keys_.size() / W; }
  bool out_of_time() const override { return out_of_time_; }
  std::int64_t peak_bytes() const override { return mem_.peak(); }

 private:
  struct frame {
    std::uint64_t sig[W];
    std::uint64_t ready[W];
    std::uint64_t hash;
    std::int64_t live;
    std::uint32_t first, end, next;  // this frame's children in children_
    std::uint32_t node;              // the vertex run to reach this frame
  };
  struct child {
    std::uint32_t node;
    std::int64_t live;       // live bytes after the child's vertex runs
    std::int64_t transient;  // bytes while it runs
  };


  // Backward: y is resident once some vertex that reads it has run (in reverse), or is an output.
  bool resident_backward(std::size_t y, const std::uint64_t* sig) const noexcept {
    if (g_.is_output(y)) return true;
    std::uint64_t x = 0;
    for (std::size_t w = 0; w < W; ++w) x |= t_.succmask[y * W + w] & sig[w];
    return x != 0;
  }

  // Running v from a frame with signature sig and live bytes `live`.
  child step(std::size_t v, const std::uint64_t* sig, std::int64_t live) const noexcept {
    child c{static_cast<std::uint32_t>(v), live, 0};
    if constexpr (Backward) {
      if (resident_backward(v, sig)) c.live -= t_.bytes[v];
      for (auto p : g_.predecessors(v))
        if (!resident_backward(p, sig)) c.live += t_.bytes[p];
      c.transient = c.live + t_.tadd[v];
    } else {
      c.transient = live + t_.tadd[v];
      c.live += t_.alloc[v];
      std::uint64_t with[W];
      std::copy(sig, sig + W, with);
      with[v / 64] |= std::uint64_t{1} << (v % 64);
      for (auto p : g_.predecessors(v))
        if (!g_.is_output(p) && is_subset<W>(&t_.succmask[p * W], with)) c.live -= t_.bytes[p];
    }
    return c;
  }

  // Pushes f with its children: the vertices that fit tau, smallest live bytes after first; only
  // one child when a free move exists (a vertex that fits tau and does not raise the live bytes:
  // some order within tau runs it next, docs/serenity.md).
  void push(frame f) {
    f.first = f.next = static_cast<std::uint32_t>(children_.size());
    for (std::size_t w = 0; w < W; ++w)
      for (std::uint64_t bits = f.ready[w]; bits != 0; bits &= bits - 1) {
        const std::size_t v = w * 64 + static_cast<std::size_t>(std::countr_zero(bits));
        const child c = step(v, f.sig, f.live);
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
    std::sort(children_.begin() + f.first, children_.end(), [](const child& a, const child& b) {
      if (a.live != b.live) return a.live < b.live;
      if (a.transient != b.transient) return a.transient < b.transient;
      return a.node < b.node;
    });
    stack_.push_back(f);
  }

  // The memo: open addressing over (tag | index + 1), keys stored W words each.
  bool is_dead(const std::uint64_t* sig, std::uint64_t hash) const noexcept {
    if (table_.empty()) return false;
    const std::uint64_t tag = hash & 0xFFFFFFFF00000000ull;
    for (std::size_t slot = hash & mask_; table_[slot] != 0; slot = (slot + 1) & mask_) {
      const std::uint64_t e = table_[slot];
      if ((e & 0xFFFFFFFF00000000ull) != tag) continue;
      const std::uint64_t* key = &memo_keys_[((e & 0xFFFFFFFFull) - 1) * W];
      if (std::equal(key, key + W, sig)) return true;
    }
    return false;
  }
  bool remember_dead(const std::uint64_t* sig, std::uint64_t hash) {
    const std::size_t count = memo_keys_.size() / W;
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
    if (!mem_.grow(memo_keys_, memo_keys_.size() + W, 1024 * W) || !mem_.grow(memo_hash_, memo_hash_.size() + 1, 1024))
      return false;
    memo_keys_.insert(memo_keys_.end(), sig, sig + W);
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
  signature_tables<W> t_;
  pool_accountant mem_;
  std::uint64_t max_states_;
  std::chrono::steady_clock::time_point search_deadline_, deadline_;
  bool free_moves_;
  std::size_t n_;
  std::int64_t root_live_ = 0;
  std::int64_t tau_ = 0;
  std::int64_t memo_tau_ = std::numeric_limits<std::int64_t>::min();
  std::vector<frame> stack_;
  std::vector<child> children_;
  std::vector<std::uint64_t> memo_keys_, memo_hash_, table_;
  std::size_t mask_ = 0;
  std::vector<std::size_t> found_;
  std::uint64_t expanded_ = 0;
  bool out_of_time_ = false;
};

template <bool Backward>
std::unique_ptr<serenity_decision_search> make_serenity_dfs(const memory_graph& g, serenity_memory_pool& pool,
                                                            std::uint64_t max_states,
                                                            std::chrono::steady_clock::time_point deadline,
                                                            bool free_moves) {
  return with_signature_width(
      g.size(),
      [&]<std::size_t W>() -> std::unique_ptr<serenity_decision_search> {
        return std::make_unique<serenity_dfs<W, Backward>>(g, pool, max_states, deadline, free_moves);
      },
      [] { return std::unique_ptr<serenity_decision_search>(); });
}

/// Decides tau with a forward and a backward search in alternating slices of doubling size (both
/// deterministic: slices count expansions, not time). Keeps both memos between decisions.
class serenity_decider {
 public:
  serenity_decider(const memory_graph& g, serenity_memory_pool& pool, std::uint64_t max_states,
                   std::chrono::steady_clock::time_point deadline, bool free_moves)
      : forward_(make_serenity_dfs<false>(g, pool, max_states, deadline, free_moves)),
        backward_(make_serenity_dfs<true>(g, pool, max_states, deadline, free_moves)) {}

  /// False when the graph is too large for the search (more than 4096 vertices).
  [[nodiscard]] bool usable() const { return forward_ != nullptr; }

  /// yes (order() within tau), no, stopped (a limit or `deadline`), or paused once both directions
  /// together have expanded `budget` more signatures.
  serenity_decision decide(std::int64_t tau, std::uint64_t budget,
                           std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max()) {
    forward_->start(tau, deadline);
    backward_->start(tau, deadline);
    const std::uint64_t until = budget > ~expanded() ? ~std::uint64_t{0} : expanded() + budget;
    for (std::uint64_t slice = 1024;; slice = std::min<std::uint64_t>(slice * 2, std::uint64_t{1} << 40)) {
      for (auto* s : {backward_.get(), forward_.get()}) {
        if (expanded() >= until) return serenity_decision::paused;
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
  std::unique_ptr<serenity_decision_search> forward_, backward_;
  std::vector<std::size_t> order_;
};

}  // namespace memsched::detail
