#pragma once
// Identical subgraphs for H-Partition: a canonical form of a group of vertices (a canonical vertex
// order, input slots and a flat key of structure, ops, bytes, costs and workspaces), so that groups
// computing the same thing are recognised up to renumbering: equal hashes first, then an exact
// comparison of the keys. Internals of remat/hiremate_partition.hpp.

#include <memsched/core/detail/hash.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/remat/detail/hiremate_rounds.hpp>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <queue>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace memsched::detail::hiremate {

/// A group in canonical form: two groups of one class have equal keys, and vertices[i],
/// inputs[i], outputs[i] play the same role in both.
struct canonical_form {
  std::vector<std::uint32_t> vertices;  ///< the group's vertices, canonical order
  std::vector<std::uint32_t> inputs;    ///< values read from outside, by input slot
  std::vector<std::uint32_t> outputs;   ///< vertices read outside the group (or outputs), canonical order
  std::vector<std::uint64_t> key;       ///< everything the exact comparison looks at
  std::uint64_t hash = 0;
};

/// Builds canonical forms. `op` gives an interned op number per vertex; `topo_rank` the position
/// of each vertex in the graph's topological order (the last tie-break, so renumbered copies are
/// told apart only when they are symmetric: they then may land in different classes, never in a
/// wrong one, since the key is compared exactly).
class canonicalizer {
 public:
  canonicalizer(const partition_values& vals, const std::vector<std::uint32_t>& op, const std::vector<std::uint32_t>& topo_rank)
      : vals_(vals), op_(op), rank_(topo_rank), local_(vals.g->size(), no_node) {}

  /// `vertices` of the group; `member` gives each vertex's member (any number; only equality
  /// between vertices matters) and `member_class` the class of each member (empty at level 0).
  canonical_form run(const std::vector<std::uint32_t>& vertices, const std::vector<std::uint32_t>& member,
                   const std::unordered_map<std::uint32_t, std::uint64_t>& member_class) {
    const memory_graph& g = *vals_.g;
    const std::size_t n = vertices.size();
    for (std::size_t i = 0; i < n; ++i) local_[vertices[i]] = static_cast<std::uint32_t>(i);
    auto inside = [&](std::uint32_t v) { return local_[v] != no_node; };
    std::vector<char> is_out(n, 0);
    std::vector<std::uint64_t> label(n), next(n);
    std::vector<std::vector<std::uint32_t>> in_pred(n), in_succ(n), ext(n);
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t v = vertices[i];
      is_out[i] = vals_.forward_output[v];
      for (auto s : g.successors(v)) {
        if (!vals_.scope[s]) continue;
        if (inside(s))
          in_succ[i].push_back(local_[s]);
        else
          is_out[i] = 1;
      }
      for (auto p : g.predecessors(v)) {
        if (!vals_.scope[p]) continue;
        (inside(p) ? in_pred[i] : ext[i]).push_back(inside(p) ? local_[p] : p);
      }
      std::uint64_t h = mix_hash(mix_hash(mix_hash(op_[v], static_cast<std::uint64_t>(g.bytes(v))), std::bit_cast<std::uint64_t>(g.cost(v))),
                               static_cast<std::uint64_t>(g.workspace(v)));
      h = mix_hash(h, is_out[i]);
      if (!member_class.empty()) h = mix_hash(h, member_class.at(member[i]));
      std::vector<std::uint64_t> ext_labels;
      for (auto p : ext[i]) ext_labels.push_back(mix_hash(op_[p], static_cast<std::uint64_t>(g.bytes(p))));
      std::sort(ext_labels.begin(), ext_labels.end());
      for (auto x : ext_labels) h = mix_hash(h, x);
      label[i] = h;
    }
    // A few rounds of colour refinement: a vertex's label covers its neighbourhood.
    for (int round = 0; round < 3; ++round) {
      for (std::size_t i = 0; i < n; ++i) {
        std::vector<std::uint64_t> a, b;
        for (auto j : in_pred[i]) a.push_back(label[j]);
        for (auto j : in_succ[i]) b.push_back(label[j]);
        std::sort(a.begin(), a.end());
        std::sort(b.begin(), b.end());
        std::uint64_t h = mix_hash(label[i], a.size());
        for (auto x : a) h = mix_hash(h, x);
        h = mix_hash(h, b.size());
        for (auto x : b) h = mix_hash(h, x);
        next[i] = h;
      }
      label.swap(next);
    }
    // Canonical order: Kahn's algorithm, the smallest (label, topological rank) first.
    std::vector<std::uint32_t> indeg(n), canon, where(n);
    using item = std::tuple<std::uint64_t, std::uint32_t, std::uint32_t>;
    std::priority_queue<item, std::vector<item>, std::greater<>> ready;
    for (std::size_t i = 0; i < n; ++i) {
      indeg[i] = static_cast<std::uint32_t>(in_pred[i].size());
      if (indeg[i] == 0) ready.emplace(label[i], rank_[vertices[i]], static_cast<std::uint32_t>(i));
    }
    while (!ready.empty()) {
      const std::uint32_t i = std::get<2>(ready.top());
      ready.pop();
      where[i] = static_cast<std::uint32_t>(canon.size());
      canon.push_back(i);
      for (auto j : in_succ[i])
        if (--indeg[j] == 0) ready.emplace(label[j], rank_[vertices[j]], j);
    }
    canonical_form c;
    auto& key = c.key;
    key.push_back(n);
    std::unordered_map<std::uint32_t, std::uint32_t> member_slot, input_slot;
    std::vector<std::uint32_t> member_order;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> edges, reads;
    for (std::uint32_t ci = 0; ci < n; ++ci) {
      const std::uint32_t i = canon[ci];
      const std::uint32_t v = vertices[i];
      c.vertices.push_back(v);
      if (is_out[i]) c.outputs.push_back(v);
      auto [m, fresh] = member_slot.emplace(member[i], static_cast<std::uint32_t>(member_slot.size()));
      if (fresh) member_order.push_back(member[i]);
      for (std::uint64_t x : {std::uint64_t{op_[v]}, static_cast<std::uint64_t>(g.bytes(v)), std::bit_cast<std::uint64_t>(g.cost(v)),
                              static_cast<std::uint64_t>(g.workspace(v)), static_cast<std::uint64_t>(is_out[i]), std::uint64_t{m->second}})
        key.push_back(x);
      for (auto j : in_succ[i]) edges.emplace_back(ci, where[j]);
      auto external = ext[i];
      std::sort(external.begin(), external.end(), [&](std::uint32_t a, std::uint32_t b) {
        return std::tuple(g.bytes(a), op_[a], rank_[a]) < std::tuple(g.bytes(b), op_[b], rank_[b]);
      });
      for (auto p : external) {
        auto [s, added] = input_slot.emplace(p, static_cast<std::uint32_t>(input_slot.size()));
        if (added) c.inputs.push_back(p);
        reads.emplace_back(s->second, ci);
      }
    }
    std::sort(edges.begin(), edges.end());
    std::sort(reads.begin(), reads.end());
    key.push_back(edges.size());
    for (auto [a, b] : edges) key.push_back((std::uint64_t{a} << 32) | b);
    key.push_back(c.inputs.size());
    for (auto p : c.inputs) key.push_back(static_cast<std::uint64_t>(g.bytes(p))), key.push_back(op_[p]);
    key.push_back(reads.size());
    for (auto [s, ci] : reads) key.push_back((std::uint64_t{s} << 32) | ci);
    if (!member_class.empty())
      for (auto m : member_order) key.push_back(member_class.at(m));
    std::uint64_t h = 0x51ed270b27a3f5c1ULL;
    for (auto x : key) h = mix_hash(h, x);
    c.hash = h;
    for (auto v : vertices) local_[v] = no_node;
    return c;
  }

 private:
  const partition_values& vals_;
  const std::vector<std::uint32_t>& op_;
  const std::vector<std::uint32_t>& rank_;
  std::vector<std::uint32_t> local_;
};

}  // namespace memsched::detail::hiremate
