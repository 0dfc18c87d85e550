#pragma once
// One round of H-Partition (HiRemate, Gusak et al. 2024, section 3.1 and Algorithm 2): on the DAG
// of one level, build the candidate groups, then repeatedly wrap the best-scoring one into a group
// until no candidate is left or the level is small enough. The groups become the nodes of the next
// level. Internals of remat/hiremate_partition.hpp.

#include <memsched/graph/memory_graph.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <queue>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

namespace memsched::detail::hiremate {

/// The forward graph as H-Partition sees it, and where each of its vertices sits at the current
/// level. `scope` marks the partitioned vertices (the forward ones); a value is an output of the
/// forward graph when it is a graph output or the loss reads it.
struct partition_values {
  const memory_graph* g = nullptr;
  std::vector<char> scope;
  std::vector<char> forward_output;
  std::vector<std::uint32_t> lnode;  ///< vertex -> node of the current level (vertices in scope)
};

/// One level: nodes 0..n-1 numbered in a topological order (every edge goes up), with the original
/// vertices of each node and the values crossing its boundary.
struct level_graph {
  std::size_t n = 0;
  std::vector<std::vector<std::uint32_t>> succ, pred;      ///< sorted, no duplicates
  std::vector<std::vector<std::uint32_t>> vertices;        ///< original vertices of each node
  std::vector<std::vector<std::uint32_t>> ins, outs;       ///< values read from outside / read outside (or outputs)
};

inline constexpr std::uint32_t no_node = std::numeric_limits<std::uint32_t>::max();

/// The values crossing the boundary of a set of level nodes, given through `inside(level node)`.
/// `ins_of(x)` / `outs_of(x)` list the boundary values of each part x; `parts` lists the parts.
/// The stamp vector (one entry per vertex) is scratch, left with entries below `stamp`.
template <class Parts, class Inside, class Ins, class Outs>
void boundary_values(const partition_values& vals, const Parts& parts, Inside inside, Ins ins_of, Outs outs_of, std::vector<std::uint32_t>& seen,
                     std::uint32_t& stamp, std::vector<std::uint32_t>& ins, std::vector<std::uint32_t>& outs) {
  ++stamp;
  ins.clear();
  outs.clear();
  for (auto x : parts) {
    for (std::uint32_t u : ins_of(x))
      if (!inside(vals.lnode[u]) && seen[u] != stamp) {
        seen[u] = stamp;
        ins.push_back(u);
      }
    for (std::uint32_t w : outs_of(x)) {
      bool out = vals.forward_output[w] != 0;
      for (auto s : vals.g->successors(w)) {
        if (out) break;
        out = vals.scope[s] && !inside(vals.lnode[s]);
      }
      if (out) outs.push_back(w);
    }
  }
  std::sort(ins.begin(), ins.end());
  std::sort(outs.begin(), outs.end());
}

/// One round of H-Partition on level `L`: wraps candidates until none is left or the level has at
/// most `stop_at` nodes (0: never stop early). Returns the groups (lists of level nodes, each
/// sorted), in a topological order of the quotient graph. `merged` tells whether any candidate was
/// wrapped.
class partition_round {
 public:
  partition_round(const level_graph& L, const partition_values& vals, std::size_t max_lower, std::size_t stop_at, double alpha)
      : L_(L), vals_(vals), max_lower_(max_lower), stop_at_(stop_at), alpha_(alpha) {}

  std::vector<std::vector<std::uint32_t>> run(bool& merged) {
    init_quotient();
    build_candidates();
    merged = false;
    while (!heap_.empty() && alive_ > stop_at_) {
      auto [score, tie, c, version] = heap_.top();
      heap_.pop();
      if (!cands_[c].alive || cands_[c].version != version) continue;
      cands_[c].alive = false;
      std::vector<std::uint32_t> later;
      if (!convex(cands_[c].q, later)) continue;  // wrapping it would put a cycle in the level
      merge(cands_[c].q, later);
      merged = true;
    }
    std::vector<std::vector<std::uint32_t>> groups;
    for (std::uint32_t q : order_)
      if (q != no_node) {
        auto members = Q_[q].lnodes;
        std::sort(members.begin(), members.end());
        groups.push_back(std::move(members));
      }
    return groups;
  }

 private:
  struct qnode {
    std::vector<std::uint32_t> lnodes, succ, pred, ins, outs, cands;
    double weight = 0;  // original vertices
  };
  struct candidate {
    std::vector<std::uint32_t> q;  // sorted quotient nodes
    std::uint32_t version = 0;
    bool alive = true;
  };
  using entry = std::tuple<double, std::uint32_t, std::uint32_t, std::uint32_t>;  // score, min level node, id, version

  void init_quotient() {
    const std::size_t n = L_.n;
    Q_.assign(n, {});
    owner_.resize(n);
    pos_.resize(n);
    order_.resize(n);
    for (std::uint32_t l = 0; l < n; ++l) {
      Q_[l].lnodes = {l};
      Q_[l].succ = L_.succ[l];
      Q_[l].pred = L_.pred[l];
      Q_[l].ins = L_.ins[l];
      Q_[l].outs = L_.outs[l];
      Q_[l].weight = static_cast<double>(L_.vertices[l].size());
      owner_[l] = l;
      pos_[l] = l;  // level nodes are numbered topologically
      order_[l] = l;
    }
    alive_ = n;
    mark_.assign(n, 0);
    vseen_.assign(vals_.g->size(), 0);
  }

  // a(x): the closest common ancestor of x's predecessors in the dominator tree of the level (a
  // virtual root above every source). Predecessors that are sources are left out when x has
  // another one: a source read far downstream (an attention mask, a position table) would
  // otherwise make the virtual root the common ancestor of everything after it.
  void build_candidates() {
    const std::size_t n = L_.n;
    const std::uint32_t root = static_cast<std::uint32_t>(n);
    build_kept_preds();
    std::size_t logn = 1;
    while ((std::size_t{1} << logn) <= n + 1) ++logn;
    std::vector<std::vector<std::uint32_t>> up(logn, std::vector<std::uint32_t>(n + 1, root));
    std::vector<std::uint32_t> depth(n + 1, 0);
    auto lca = [&](std::uint32_t a, std::uint32_t b) {
      if (depth[a] < depth[b]) std::swap(a, b);
      for (std::size_t j = logn; j-- > 0;)
        if (depth[a] >= depth[b] + (std::uint32_t{1} << j)) a = up[j][a];
      if (a == b) return a;
      for (std::size_t j = logn; j-- > 0;)
        if (up[j][a] != up[j][b]) a = up[j][a], b = up[j][b];
      return up[0][a];
    };
    std::vector<std::uint32_t> idom(n, root);
    for (std::uint32_t x = 0; x < n; ++x) {  // topological
      std::uint32_t a = no_node;
      for (std::uint32_t p : kept_preds(x)) a = a == no_node ? p : lca(a, p);
      if (a == no_node) a = root;
      idom[x] = a;
      up[0][x] = a;
      depth[x] = depth[a] + 1;
      for (std::size_t j = 1; j < logn; ++j) up[j][x] = up[j - 1][up[j - 1][x]];
    }

    std::vector<std::vector<std::uint32_t>> found;
    std::vector<std::uint32_t> seen(n, no_node), stack, interval;
    for (std::uint32_t x = 0; x < n; ++x) {
      const std::uint32_t a = idom[x];
      // Nodes on paths from a to x: walk back from x without crossing a (a dominates x).
      interval.assign(1, x);
      stack.assign(1, x);
      seen[x] = x;
      bool too_big = false;
      while (!stack.empty() && !too_big) {
        const std::uint32_t y = stack.back();
        stack.pop_back();
        for (std::uint32_t p : kept_preds(y)) {
          if (p == a || seen[p] == x) continue;
          seen[p] = x;
          interval.push_back(p);
          stack.push_back(p);
          if (interval.size() > max_lower_ + 1) too_big = true;
        }
      }
      if (too_big) continue;
      std::sort(interval.begin(), interval.end());
      auto without = [](std::vector<std::uint32_t> v, std::uint32_t drop) {
        v.erase(std::remove(v.begin(), v.end(), drop), v.end());
        return v;
      };
      std::vector<std::vector<std::uint32_t>> variants{interval, without(interval, x)};
      if (a != root) {
        auto with_a = interval;
        with_a.insert(std::upper_bound(with_a.begin(), with_a.end(), a), a);
        variants.push_back(with_a);
        variants.push_back(without(with_a, x));
      }
      for (auto& v : variants)
        if (v.size() >= 2 && v.size() <= max_lower_) found.push_back(std::move(v));
    }
    std::sort(found.begin(), found.end());
    found.erase(std::unique(found.begin(), found.end()), found.end());
    for (auto& q : found) {
      const auto id = static_cast<std::uint32_t>(cands_.size());
      for (std::uint32_t l : q) Q_[l].cands.push_back(id);
      cands_.push_back({std::move(q), 0, true});
      push(id);
    }
  }

  // Predecessors of x in the level, without sources when x also reads a non-source; computed once
  // per round (build_kept_preds), as the interval walks ask for them again and again.
  std::span<const std::uint32_t> kept_preds(std::uint32_t x) const {
    return {kept_.data() + kept_start_[x], kept_.data() + kept_start_[x + 1]};
  }

  void build_kept_preds() {
    kept_start_.assign(1, 0);
    kept_.clear();
    for (std::uint32_t x = 0; x < L_.n; ++x) {
      const auto& p = L_.pred[x];
      const std::size_t from = kept_.size();
      for (std::uint32_t u : p)
        if (!L_.pred[u].empty()) kept_.push_back(u);
      if (kept_.size() == from) kept_.insert(kept_.end(), p.begin(), p.end());
      kept_start_.push_back(kept_.size());
    }
  }

  // The score of the paper: (bytes of input and output values) * (original vertices)^alpha.
  void push(std::uint32_t c) {
    const auto& q = cands_[c].q;
    ++stamp_;
    for (auto x : q) mark_[x] = stamp_;
    std::vector<std::uint32_t> ins, outs;
    boundary(q, ins, outs);
    double bytes = 0, weight = 0;
    std::uint32_t tie = no_node;
    for (auto u : ins) bytes += static_cast<double>(vals_.g->bytes(u));
    for (auto w : outs) bytes += static_cast<double>(vals_.g->bytes(w));
    for (auto x : q) {
      weight += Q_[x].weight;
      tie = std::min(tie, *std::min_element(Q_[x].lnodes.begin(), Q_[x].lnodes.end()));
    }
    heap_.emplace(bytes * std::pow(weight, alpha_), tie, c, cands_[c].version);
  }

  // Boundary values of the quotient nodes marked with the current stamp.
  void boundary(const std::vector<std::uint32_t>& q, std::vector<std::uint32_t>& ins, std::vector<std::uint32_t>& outs) {
    const std::uint32_t s = stamp_;
    boundary_values(
        vals_, q, [&](std::uint32_t l) { return mark_[owner_[l]] == s; }, [&](std::uint32_t x) -> const auto& { return Q_[x].ins; },
        [&](std::uint32_t x) -> const auto& { return Q_[x].outs; }, vseen_, vstamp_, ins, outs);
  }

  // True when no path leaves the set and comes back (merging keeps the level acyclic); `later`
  // gets the nodes between the set's first and last positions that are reachable from it.
  bool convex(const std::vector<std::uint32_t>& q, std::vector<std::uint32_t>& later) {
    ++stamp_;
    const std::uint32_t in = stamp_;
    std::uint32_t last = 0;
    for (auto x : q) mark_[x] = in, last = std::max(last, pos_[x]);
    ++stamp_;
    const std::uint32_t visited = stamp_;
    std::vector<std::uint32_t> stack;
    for (auto x : q)
      for (auto y : Q_[x].succ)
        if (mark_[y] != in && mark_[y] != visited && pos_[y] < last) mark_[y] = visited, stack.push_back(y);
    while (!stack.empty()) {
      const std::uint32_t w = stack.back();
      stack.pop_back();
      later.push_back(w);
      for (auto y : Q_[w].succ) {
        if (mark_[y] == in) return false;
        if (mark_[y] != visited && pos_[y] < last) mark_[y] = visited, stack.push_back(y);
      }
    }
    // merge() finds the set by the current stamp; `visited` must not match it.
    ++stamp_;
    for (auto x : q) mark_[x] = stamp_;
    return true;
  }

  void merge(const std::vector<std::uint32_t>& q, const std::vector<std::uint32_t>& later) {
    const std::uint32_t set_stamp = stamp_;  // convex() marked the set with the current stamp
    auto in_set = [&](std::uint32_t x) { return mark_[x] == set_stamp; };
    const auto r = static_cast<std::uint32_t>(Q_.size());
    Q_.emplace_back();
    mark_.push_back(0);
    pos_.push_back(0);
    qnode nq;
    std::vector<std::uint32_t> cand_ids;
    for (auto x : q) {
      nq.lnodes.insert(nq.lnodes.end(), Q_[x].lnodes.begin(), Q_[x].lnodes.end());
      nq.weight += Q_[x].weight;
      for (auto y : Q_[x].succ)
        if (!in_set(y)) nq.succ.push_back(y);
      for (auto y : Q_[x].pred)
        if (!in_set(y)) nq.pred.push_back(y);
      cand_ids.insert(cand_ids.end(), Q_[x].cands.begin(), Q_[x].cands.end());
    }
    boundary(q, nq.ins, nq.outs);
    for (auto* list : {&nq.succ, &nq.pred, &cand_ids}) {
      std::sort(list->begin(), list->end());
      list->erase(std::unique(list->begin(), list->end()), list->end());
    }
    auto replace = [&](std::vector<std::uint32_t>& adj) {
      adj.erase(std::remove_if(adj.begin(), adj.end(), in_set), adj.end());
      adj.insert(std::upper_bound(adj.begin(), adj.end(), r), r);
    };
    for (auto y : nq.succ) replace(Q_[y].pred);
    for (auto y : nq.pred) replace(Q_[y].succ);
    for (auto l : nq.lnodes) owner_[l] = r;

    // New topological positions in the window of the set: what does not depend on the set, the
    // new node, then what depends on it (`later`, in its old relative order).
    std::uint32_t first = std::numeric_limits<std::uint32_t>::max(), last = 0;
    for (auto x : q) first = std::min(first, pos_[x]), last = std::max(last, pos_[x]);
    std::vector<std::uint32_t> later_sorted = later;
    std::sort(later_sorted.begin(), later_sorted.end());
    std::vector<std::uint32_t> before, after;
    for (std::uint32_t p = first; p <= last; ++p) {
      const std::uint32_t y = order_[p];
      if (y == no_node || in_set(y)) continue;
      (std::binary_search(later_sorted.begin(), later_sorted.end(), y) ? after : before).push_back(y);
    }
    std::uint32_t p = first;
    for (auto y : before) order_[p] = y, pos_[y] = p, ++p;
    order_[p] = r, pos_[r] = p, ++p;
    for (auto y : after) order_[p] = y, pos_[y] = p, ++p;
    for (; p <= last; ++p) order_[p] = no_node;

    for (auto x : q) Q_[x] = qnode{};
    alive_ -= q.size() - 1;

    // Candidates that shared a node with the set now contain the new node instead.
    for (auto c : cand_ids) {
      auto& cand = cands_[c];
      if (!cand.alive) continue;
      std::vector<std::uint32_t> nqs;
      for (auto x : cand.q)
        if (!in_set(x)) nqs.push_back(x);
      nqs.insert(std::upper_bound(nqs.begin(), nqs.end(), r), r);
      std::size_t size = 0;
      for (auto x : nqs) size += x == r ? nq.lnodes.size() : Q_[x].lnodes.size();
      if (nqs.size() < 2 || size > max_lower_) {
        cand.alive = false;
        continue;
      }
      cand.q = std::move(nqs);
      ++cand.version;
      nq.cands.push_back(c);
    }
    Q_[r] = std::move(nq);
    for (auto c : Q_[r].cands) push(c);
  }

  const level_graph& L_;
  const partition_values& vals_;
  std::size_t max_lower_, stop_at_;
  double alpha_;
  std::vector<qnode> Q_;
  std::vector<candidate> cands_;
  std::vector<std::uint32_t> owner_, pos_, order_, mark_, vseen_, kept_;
  std::vector<std::size_t> kept_start_;
  std::uint32_t stamp_ = 0, vstamp_ = 0;
  std::size_t alive_ = 0;
  std::priority_queue<entry, std::vector<entry>, std::greater<>> heap_;
};

}  // namespace memsched::detail::hiremate
