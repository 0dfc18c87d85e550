#pragma once
// H-Partition, the first half of HiRemate (Gusak, Zhao, Le Hellard, Li, Eyraud-Dubois, Beaumont:
// "HiRemate: Hierarchical Approach for Efficient Re-materialization of Large Neural Networks",
// 2024; section 3.1, appendix A, Algorithm 2): the forward graph is cut into a hierarchy of small
// convex groups, each to be solved on its own, and groups that compute the same thing are
// recognised so that each class is solved once.

#include <memsched/core/errors.hpp>
#include <memsched/core/status.hpp>
#include <memsched/graph/dataflow_graph.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/remat/detail/hiremate_classes.hpp>
#include <memsched/remat/detail/hiremate_rounds.hpp>
#include <memsched/remat/hiremate_stats.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace memsched {

/// Options of hiremate_partition (the paper's M^l, M^t and alpha).
struct hiremate_partition_options {
  std::size_t max_lower = 20;  ///< M^l: at most this many nodes of the level below per group (>= 2).
  std::size_t max_top = 30;    ///< M^t: stop when a level has at most this many nodes (>= 1).
  double alpha = 0.5;          ///< Score exponent on the number of original vertices (>= 0).
  /// Stop wrapping as soon as a level has at most max_top nodes (the authors' code); false: finish
  /// every round (wrap until no candidate is left, as Algorithm 2 reads), so the top may be smaller.
  bool stop_at_max_top = true;
  /// The op of each vertex, by index, for the identical-subgraph test. Empty: taken from the
  /// memsched::node bundles when the graph has them, else every vertex has the same op.
  std::vector<std::string> ops = {};
};

/// One group of a level: a convex set of nodes of the level below.
struct hiremate_group {
  /// Nodes of the level below, ascending: vertex indices at level 0, group indices of level k-1 at level k.
  std::vector<std::size_t> members;
  /// The original vertices covered, in the canonical order of the group's class: vertices[i] of
  /// two groups of one class play the same role.
  std::vector<std::size_t> vertices;
  /// Vertices outside the group whose values it reads, by input slot (canonical).
  std::vector<std::size_t> inputs;
  /// Vertices of the group read outside it or outputs of the forward graph (canonical order).
  std::vector<std::size_t> outputs;
  std::size_t subgraph_class = 0;  ///< Index into hiremate_partition_result::classes.
};

/// One level of the hierarchy: its groups become the nodes of the next level.
struct hiremate_level {
  std::vector<hiremate_group> groups;  ///< In a topological order of the level's quotient graph.
  /// The quotient graph: (a, b) when a vertex of group a is read by a vertex of group b; a < b.
  std::vector<std::pair<std::size_t, std::size_t>> edges;
  /// True when wrapping could not shrink the level (nothing wrapped, or more than two thirds of the
  /// nodes and more than max_top left) and the groups are runs of a topological order instead.
  bool fallback = false;
};

/// A class of identical groups (same structure, ops, bytes, costs and workspaces up to renumbering).
struct hiremate_subgraph_class {
  std::size_t level = 0, group = 0;  ///< A representative.
  std::size_t count = 0;             ///< Groups of this class (a group that only wraps one group is not counted again).
  std::size_t vertices = 0;          ///< Original vertices of each.
  std::uint64_t hash = 0;            ///< The canonical hash.
};


/// The hierarchy. levels[0] groups vertices, levels[k] groups the groups of levels[k-1]; the last
/// level has at most max_top groups (the top graph). Status `feasible` (a heuristic partition).
struct [[nodiscard]] hiremate_partition_result {
  solve_status status = solve_status::feasible;
  std::vector<hiremate_level> levels;
  std::vector<hiremate_subgraph_class> classes;
  hiremate_partition_stats stats;
  std::string message;
};

namespace detail::hiremate {

/// Builds the hierarchy level by level (partition_round), with the boundary values and the classes of
/// every group.
class partitioner {
 public:
  partitioner(const memory_graph& g, const hiremate_partition_options& o) : g_(g), o_(o) {}

  hiremate_partition_result run() {
    const auto start = std::chrono::steady_clock::now();
    hiremate_partition_result r;
    prepare();
    level_graph L = level_zero();
    r.stats.vertices = L.n;
    r.stats.full_rounds = !o_.stop_at_max_top;
    canonicalizer canon(vals_, op_, rank_);
    std::vector<canonical_form> prev_forms;
    std::vector<std::size_t> prev_class;
    std::unordered_map<std::uint64_t, std::vector<std::size_t>> by_hash;
    std::vector<std::vector<std::uint64_t>> class_keys;
    while (L.n > o_.max_top) {
      bool merged = false;
      auto groups = partition_round(L, vals_, o_.max_lower, o_.stop_at_max_top ? o_.max_top : 0, o_.alpha).run(merged);
      hiremate_level level;
      // A round that leaves more than two thirds of the nodes (a node read by thousands, whose
      // candidates all share it) would make as many levels as nodes: cut it instead.
      if (!merged || (groups.size() > o_.max_top && groups.size() * 3 > L.n * 2)) {
        groups.clear();
        for (std::uint32_t l = 0; l < L.n; ++l) {
          if (l % o_.max_lower == 0) groups.emplace_back();
          groups.back().push_back(l);
        }
        level.fallback = true;
        ++r.stats.fallback_levels;
      }
      const std::size_t k = r.levels.size();
      std::vector<std::uint32_t> group_of(L.n);
      for (std::size_t i = 0; i < groups.size(); ++i)
        for (auto l : groups[i]) group_of[l] = static_cast<std::uint32_t>(i);
      level_graph next;
      next.n = groups.size();
      next.succ.resize(next.n);
      next.pred.resize(next.n);
      next.vertices.resize(next.n);
      next.ins.resize(next.n);
      next.outs.resize(next.n);
      for (std::uint32_t l = 0; l < L.n; ++l)
        for (auto m : L.succ[l])
          if (group_of[l] != group_of[m]) next.succ[group_of[l]].push_back(group_of[m]);
      std::vector<canonical_form> forms(next.n);
      std::vector<std::size_t> cls(next.n);
      std::unordered_map<std::uint32_t, std::uint64_t> member_class;
      if (k > 0)
        for (std::uint32_t l = 0; l < L.n; ++l) member_class.emplace(l, prev_class[l]);
      for (std::size_t i = 0; i < next.n; ++i) {
        auto& s = next.succ[i];
        std::sort(s.begin(), s.end());
        s.erase(std::unique(s.begin(), s.end()), s.end());
        for (auto j : s) {
          next.pred[j].push_back(static_cast<std::uint32_t>(i));
          level.edges.emplace_back(i, j);
        }
        hiremate_group grp;
        if (k == 0) {
          for (auto l : groups[i]) grp.members.push_back(L.vertices[l][0]);
          std::sort(grp.members.begin(), grp.members.end());
        } else {
          grp.members.assign(groups[i].begin(), groups[i].end());
        }
        if (k > 0 && groups[i].size() == 1) {
          forms[i] = prev_forms[groups[i][0]];  // a group that wraps one group is that group
          cls[i] = prev_class[groups[i][0]];
        } else {
          std::vector<std::uint32_t> vertices, member;
          for (auto l : groups[i])
            for (auto v : L.vertices[l]) vertices.push_back(v), member.push_back(l);
          forms[i] = canon.run(vertices, member, member_class);
          cls[i] = classify(forms[i], k, i, r, by_hash, class_keys);
        }
        grp.vertices.assign(forms[i].vertices.begin(), forms[i].vertices.end());
        grp.inputs.assign(forms[i].inputs.begin(), forms[i].inputs.end());
        grp.outputs.assign(forms[i].outputs.begin(), forms[i].outputs.end());
        grp.subgraph_class = cls[i];
        if (groups[i].size() >= 2) {
          ++r.stats.subgraphs;
          r.stats.largest_subgraph = std::max(r.stats.largest_subgraph, grp.vertices.size());
        }
        next.vertices[i] = forms[i].vertices;
        next.ins[i] = forms[i].inputs;
        next.outs[i] = forms[i].outputs;
        std::sort(next.ins[i].begin(), next.ins[i].end());
        std::sort(next.outs[i].begin(), next.outs[i].end());
        level.groups.push_back(std::move(grp));
      }
      for (auto& v : vals_.lnode)
        if (v != no_node) v = group_of[v];
      r.levels.push_back(std::move(level));
      prev_forms = std::move(forms);
      prev_class = std::move(cls);
      L = std::move(next);
    }
    r.stats.levels = r.levels.size();
    r.stats.top_nodes = L.n;
    for (const auto& c : r.classes)
      if (c.vertices >= 2) ++r.stats.distinct_subgraphs;
    r.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
  }

 private:
  std::size_t classify(const canonical_form& f, std::size_t level, std::size_t group, hiremate_partition_result& r,
                       std::unordered_map<std::uint64_t, std::vector<std::size_t>>& by_hash,
                       std::vector<std::vector<std::uint64_t>>& keys) {
    auto& bucket = by_hash[f.hash];
    for (std::size_t c : bucket)
      if (keys[c] == f.key) {
        ++r.classes[c].count;
        return c;
      }
    const std::size_t c = r.classes.size();
    r.classes.push_back({.level = level, .group = group, .count = 1, .vertices = f.vertices.size(), .hash = f.hash});
    keys.push_back(f.key);
    bucket.push_back(c);
    return c;
  }

  void prepare() {
    const std::size_t n = g_.size();
    vals_.g = &g_;
    vals_.scope.assign(n, 1);
    vals_.forward_output.assign(n, 0);
    if (g_.has_training_roles())
      for (std::size_t v = 0; v < n; ++v) vals_.scope[v] = g_.is_forward(v);
    for (std::size_t v = 0; v < n; ++v) {
      if (!vals_.scope[v]) continue;
      vals_.forward_output[v] = g_.is_output(v);
      for (auto s : g_.successors(v))
        if (g_.role(s) == node_role::loss) vals_.forward_output[v] = 1;
    }
    rank_.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i) rank_[g_.topological_order()[i]] = static_cast<std::uint32_t>(i);
    op_.assign(n, 0);
    std::unordered_map<std::string, std::uint32_t> ids;
    for (std::size_t v = 0; v < o_.ops.size() && v < n; ++v)
      op_[v] = ids.emplace(o_.ops[v], static_cast<std::uint32_t>(ids.size())).first->second;
  }

  level_graph level_zero() {
    const std::size_t n = g_.size();
    vals_.lnode.assign(n, no_node);
    level_graph L;
    for (auto v : g_.topological_order())
      if (vals_.scope[v]) {
        vals_.lnode[v] = static_cast<std::uint32_t>(L.n++);
        L.vertices.push_back({v});
      }
    L.succ.resize(L.n);
    L.pred.resize(L.n);
    L.ins.resize(L.n);
    L.outs.resize(L.n);
    for (std::uint32_t l = 0; l < L.n; ++l) {
      const std::uint32_t v = L.vertices[l][0];
      bool out = vals_.forward_output[v] != 0;
      for (auto s : g_.successors(v))
        if (vals_.scope[s]) L.succ[l].push_back(vals_.lnode[s]), out = true;
      for (auto p : g_.predecessors(v))
        if (vals_.scope[p]) L.pred[l].push_back(vals_.lnode[p]), L.ins[l].push_back(p);
      std::sort(L.succ[l].begin(), L.succ[l].end());
      std::sort(L.pred[l].begin(), L.pred[l].end());
      std::sort(L.ins[l].begin(), L.ins[l].end());
      if (out) L.outs[l].push_back(v);
    }
    return L;
  }

  const memory_graph& g_;
  const hiremate_partition_options& o_;
  partition_values vals_;
  std::vector<std::uint32_t> op_, rank_;
};

/// Throws option_error naming the field of hiremate_partition_options out of range.
inline void check_partition_options(const hiremate_partition_options& options) {
  auto fail = [](const char* option, const std::string& requirement) { throw option_error("hiremate_partition", option, requirement); };
  if (options.max_lower < 2) fail("max_lower", "must be >= 2, got " + std::to_string(options.max_lower));
  if (options.max_top < 1) fail("max_top", "must be >= 1");
  if (!std::isfinite(options.alpha) || options.alpha < 0) fail("alpha", "must be a finite number >= 0");
}

/// hiremate_partition of a converted graph whose op names, if any, are in options.ops. Options
/// already checked. Throws std::invalid_argument for ops of the wrong length.
inline hiremate_partition_result partition_on(const memory_graph& g, const hiremate_partition_options& options) {
  if (!options.ops.empty() && options.ops.size() != g.size())
    throw std::invalid_argument("hiremate_partition: ops has " + std::to_string(options.ops.size()) + " entries for " + std::to_string(g.size()) +
                                " vertices");
  return partitioner(g, options).run();
}

/// `with_ops` (a copy of the caller's options) given the op names of `graph` (whose memory_graph
/// is `g`) when its ops are empty and the node bundles have them: the graph-type dependent part of
/// hiremate_partition.
template <class G, class... Maps>
hiremate_partition_options with_op_names(const G& graph, const memory_graph& g, hiremate_partition_options with_ops, const Maps&... maps) {
  if constexpr (has_node_bundle<G>) {
    if (with_ops.ops.empty()) {
      with_ops.ops.resize(g.size());
      auto index = [&] {
        if constexpr (sizeof...(Maps) == 0)
          return get(boost::vertex_index, graph);
        else
          return (maps.index, ...);
      }();
      for (auto [it, end] = vertices(graph); it != end; ++it)
        with_ops.ops[static_cast<std::size_t>(get(index, *it))] = graph[*it].op;
    }
  }
  return with_ops;
}

}  // namespace detail::hiremate

/// H-Partition (HiRemate, Algorithm 2) of the forward part of `graph` (every vertex of an
/// inference graph; the forward-role vertices of a training graph). Per level: for each node x,
/// a(x) = the closest common ancestor of x's predecessors (sources left out when x reads a
/// non-source; a virtual root when needed); the candidates are the nodes on paths from a(x) to x,
/// with and without x and a(x), of 2..max_lower nodes. The candidate of smallest score
/// (bytes of its input and output values) * (original vertices)^alpha is wrapped into a group
/// when that keeps the level acyclic; candidates sharing a node with it grow by the group (and are
/// dropped above max_lower); when none is left the groups (and the nodes left alone) form the next
/// level. Repeats until a level has at most max_top nodes; a level where nothing can be wrapped, or
/// where wrapping leaves more than two thirds of the nodes and more than max_top, is cut into runs of
/// max_lower nodes of a topological order instead (so the number of levels stays logarithmic).
/// Groups are then sorted into classes of identical subgraphs (canonical hash, then exact check).
/// Deterministic. Complexity: per level O(n log n + C * M * d) for n nodes, C candidates, M =
/// max_lower and d the degree, plus O(n + m) for the classes; levels shrink geometrically in
/// practice and at least by a third. A value read by k nodes costs O(k) per score of a candidate
/// holding it (a node read by thousands makes the first level quadratic in their number).
/// Throws: option_error (naming the field) for max_lower < 2, max_top < 1, alpha negative
/// or not finite; std::invalid_argument for ops of the wrong length; what make_memory_graph throws
/// for a bad graph.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] hiremate_partition_result hiremate_partition(const G& graph, const hiremate_partition_options& options,
                                                           const Maps&... maps) {
  detail::hiremate::check_partition_options(options);
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  return detail::hiremate::partition_on(g, detail::hiremate::with_op_names(graph, g, options, maps...));
}

/// hiremate_partition with the default options.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] hiremate_partition_result hiremate_partition(const G& graph, const Maps&... maps) {
  return hiremate_partition(graph, hiremate_partition_options{}, maps...);
}

}  // namespace memsched
