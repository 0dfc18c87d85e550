#pragma once
// HiRemate's H-ILP (Gusak et al. 2024, appendix B; Rockmate's hierarchical ILP) over the groups of
// one level: a Checkmate-style MILP whose compute nodes are the groups' forward parts F_0..F_{N-1}
// (topological order) and backward parts B_{N-1}..B_0, each run with one of its group's options
// (forward nodes also "forward only": nothing kept but what other groups read). Unlike the chain
// schedule (detail/hiremate_chain.hpp) the top level may be any DAG: a group can be recomputed
// from the outputs of several others, and a mask read by every block is one stored value.
// Internals of remat/hiremate.hpp.
//
// Stage t (t = 0..2N-1) computes node t for the first time, after any recomputations of forward
// nodes before it (node order within a stage). Backward nodes run once, in their own stage.
// Variables:
//   R[t][k][o]  node k runs with option o in stage t (k <= t; forward nodes only for k < N);
//   S[t][d]     data d is held at the start of stage t (a data: the values of one node that the
//               same nodes of other groups read, as Rockmate's data nodes, and that the same
//               options of the group's backward part compute again when a later backward part
//               reads them: such a backward variant provides d, which need not be held until then);
//   P[t][j][o]  group j's phantom of option o (its resident values that are neither data nor
//               held to the end) is held at the start of stage t (options with a phantom, stages
//               up to B_j's);
//   F[t][d][k]  (with free_values) data d is freed after node k's slot in stage t (k writes or
//               reads d there, no later node of the stage reads it, and it is not held into stage
//               t + 1): the paper's FREE variables, kept to the slots that can be a data's last use;
//   U[t][k]     memory after node k's slot in stage t (continuous).
// Constraints: one option for the frontier; a node's inputs computed earlier in the stage or held;
// B_j with option o needs o's phantom held or F_j run with o earlier in the stage; S and P carried
// only from a computation (of d: its producer, or a backward variant providing it) or an earlier
// stage; F only where it may free; U[t][-1] = constant + sum S + sum P, U[t][k] = U[t][k-1] +
// (data + phantom + provided data) of what runs at k - (data freed after k);
// U[t][k-1] + (peak extra of k's option) <= budget. Freeing only lowers U, so F needs no lower
// bounds: a solver sets it wherever it is allowed and helps. With free_values also the paper's
// correction terms: a variant peaking again after reading some data for the last time (its
// points, from the memory profile of its run) has a budget row per later peak that leaves out
// those data when F frees them after its slot.
// Simplification against the paper's model: phantoms held at a stage's start count until its end
// (and, without free_values, every data too, and a node's inputs count through its peak), so the
// model overestimates memory. solve_hilp raises the model's budget by the excess it measures on
// the start schedules; the caller re-simulates the expanded plan and lowers the budget on an
// overshoot.

#include <memsched/core/status.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/remat/detail/hiremate_chain.hpp>
#include <memsched/solver/milp_model.hpp>
#include <memsched/solver/model_size.hpp>
#include <memsched/solver/solver_options.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace memsched::detail::hiremate {

/// A moment of a variant's run where its memory peaks, for the correction terms: the bytes in use
/// above what the model holds when it starts, and the data of its `deps` it has read for the last
/// time before then (not resident then when the model frees them after the node).
struct hilp_point {
  std::int64_t extra = 0;
  std::vector<std::size_t> released;  ///< Ascending.
};

/// One way to run an H-ILP node: costs and memory in bytes, and the vertices it computes.
struct hilp_variant {
  double cost = 0;
  std::int64_t extra = 0;    ///< Peak above what the model holds when it starts (its own outputs and phantom included).
  std::int64_t phantom = 0;  ///< Bytes it keeps for the backward part beyond the node's data (forward nodes).
  std::vector<std::size_t> deps;  ///< Data it reads (all produced by nodes before it in node order).
  const std::vector<std::size_t>* vertices = nullptr;
  /// Its peaks as data are released (hilp_points): `released` grows, `extra` rises, the last
  /// one's is `extra`; the first releases nothing. Empty: one peak, `extra`, nothing released.
  std::vector<hilp_point> points;
  /// (Backward nodes) data of its group's forward part that it computes again and leaves resident
  /// for the backward parts after it that read them, ascending: those need not be held until then.
  std::vector<std::size_t> provides;
};

inline bool hilp_reads(const hilp_variant& v, std::size_t d) { return std::find(v.deps.begin(), v.deps.end(), d) != v.deps.end(); }
inline bool hilp_provides(const hilp_variant& v, std::size_t d) { return std::binary_search(v.provides.begin(), v.provides.end(), d); }

/// The points of a run whose memory above what the model holds is profile[i] while its i-th vertex
/// runs, and which reads data d for the last time at its last_read[d]-th vertex (deps only): per
/// set of released data (those whose last read came before) the largest memory, keeping only
/// those above every point releasing less. O(profile + deps log deps).
inline std::vector<hilp_point> hilp_points(const std::vector<std::int64_t>& profile, std::vector<std::pair<std::size_t, std::size_t>> last_read) {
  std::vector<hilp_point> points;
  if (profile.empty()) return points;
  std::sort(last_read.begin(), last_read.end());  // (position, data)
  std::size_t next = 0;
  std::vector<std::size_t> released;
  std::int64_t highest = std::numeric_limits<std::int64_t>::min();
  for (std::size_t i = 0; i < profile.size(); ++i) {
    for (; next < last_read.size() && last_read[next].first < i; ++next) released.push_back(last_read[next].second);
    if (profile[i] <= highest) continue;
    highest = profile[i];
    if (!points.empty() && points.back().released.size() == released.size())
      points.back().extra = profile[i];
    else
      points.push_back({profile[i], released});
  }
  for (auto& pt : points) std::sort(pt.released.begin(), pt.released.end());
  return points;
}

/// The H-ILP problem of one level: node k < N is group k's forward part, node N + i group
/// N - 1 - i's backward part.
struct hilp_problem {
  std::size_t groups = 0;
  std::vector<std::int64_t> output;                   ///< Per node: bytes of it other groups read (the sum of its data).
  std::vector<std::size_t> producer;                  ///< Per data: the node writing it.
  std::vector<std::int64_t> data_bytes;               ///< Per data.
  std::vector<std::vector<hilp_variant>> variants; ///< Per node; forward nodes: the group's options, then forward only.
  std::vector<std::int64_t> held_from;                ///< Per node: bytes held from its stage to the end (graph outputs).
  std::int64_t constant = 0;                          ///< Held throughout (values no group owns).
  std::vector<std::vector<std::size_t>> forward_lists;  ///< Per group: its forward vertices (the forward-only run).
};

/// Node index of group j's backward part.
inline std::size_t hilp_backward(std::size_t groups, std::size_t j) { return 2 * groups - 1 - j; }

/// make_hilp's work: the level's values sorted into data (classify_value), then each group's
/// variants (add_group), reading the data through deps_of. Scratch of g.size() entries is reused
/// across the runs.
struct hilp_problem_builder {
  const memory_graph& g;
  const std::vector<std::vector<std::size_t>>& groups;
  const std::vector<std::size_t>& owner;
  const std::vector<std::vector<group_choice>>& choices;
  const std::size_t N;
  hilp_problem p;
  // Per vertex: whether another group reads it, whether it is held to the end, its data.
  std::vector<char> outward, held_to_end;
  std::vector<std::size_t> data_of;
  // Per forward vertex: the options of its group whose backward schedule computes it again
  // (ascending); kept only for a data's vertex that a later backward part reads (that schedule
  // then provides it). Part of the data's key, so that a variant provides all of a data or none.
  std::vector<std::vector<std::size_t>> recomputed_by;
  // (producer, reader nodes [, no_group, recomputing options]) -> data
  std::map<std::pair<std::size_t, std::vector<std::size_t>>, std::size_t> data_index;
  std::vector<std::size_t> readers;  // classify_value's scratch
  // deps_of's: vertices computed earlier in the list (== stamp).
  std::vector<std::size_t> mark;
  std::size_t stamp = 0;
  std::int64_t own_outputs = 0;  // of the last deps_of call: bytes of the group's own outputs a backward schedule reads
  // Of the last deps_of call: (position in the list, data) of the last read of each data of another
  // group (never marked, so every read is seen). The group's own outputs a backward schedule reads
  // are left out: their bytes are in the option's own profile already (freed there after their
  // last read), so releasing them again would count them twice.
  std::vector<std::pair<std::size_t, std::size_t>> last_read;
  std::vector<std::size_t> forward_readers;  // forward_once's scratch
  static constexpr std::size_t unseen = std::numeric_limits<std::size_t>::max();
  std::vector<std::size_t> kept_from;  // position after which a provided value stays (scratch, reset after use)

  hilp_problem_builder(const memory_graph& graph, const std::vector<std::vector<std::size_t>>& level_groups,
                       const std::vector<std::size_t>& group_of, const std::vector<std::vector<group_choice>>& options)
      : g(graph), groups(level_groups), owner(group_of), choices(options), N(level_groups.size()) {
    p.groups = N;
    p.output.assign(2 * N, 0);
    p.held_from.assign(2 * N, 0);
    p.variants.resize(2 * N);
    outward.assign(g.size(), 0);
    held_to_end.assign(g.size(), 0);
    data_of.assign(g.size(), no_group);
    recomputed_by.resize(g.size());
    mark.assign(g.size(), 0);
    forward_readers.assign(g.size(), 0);
    kept_from.assign(g.size(), unseen);
  }

  std::optional<hilp_problem> make() {
    for (std::size_t v = 0; v < g.size(); ++v)
      if (owner[v] == no_group) p.constant += g.bytes(v);
    find_recomputed();
    for (std::size_t v = 0; v < g.size(); ++v) classify_value(v);
    p.forward_lists = groups;
    for (std::size_t j = 0; j < N; ++j)
      if (!add_group(j)) return std::nullopt;
    return std::move(p);
  }

  std::size_t node_of(std::size_t v) const {
    const std::size_t j = owner[v];
    if (j == no_group) return no_group;
    return g.is_forward(v) ? j : hilp_backward(N, j);
  }

  void find_recomputed() {
    for (std::size_t j = 0; j < N; ++j)
      for (std::size_t o = 0; o < choices[j].size(); ++o)
        for (auto v : choices[j][o].backward)
          if (g.is_forward(v) && owner[v] == j && (recomputed_by[v].empty() || recomputed_by[v].back() != o)) recomputed_by[v].push_back(o);
  }

  // Outputs: a value another group reads. Graph outputs and values a vertex no group owns reads
  // (a gradient of nothing) are held to the end, except what only the loss reads: the expansion
  // runs the loss right before the first backward part that needs it, just after the forward
  // pass, and the loss's inputs are freed then. What a group's backward part reads of its forward
  // part is the options' own business (their resident bytes).
  void classify_value(std::size_t v) {
    const std::size_t k = node_of(v);
    if (k == no_group) return;
    const bool held = collect_readers(v);
    held_to_end[v] = held;
    if (held) {
      p.held_from[k] += g.bytes(v);
    } else if (outward[v]) {
      add_to_data(v, k);
    }
    if (data_of[v] == no_group) recomputed_by[v].clear();
  }

  /// Whether v is held to the end; marks v outward when another group reads it, those readers'
  /// nodes in `readers`.
  bool collect_readers(std::size_t v) {
    bool held = g.is_output(v);
    readers.clear();
    for (auto w : g.successors(v)) {
      if (owner[w] == no_group) {
        held = held || g.role(w) != node_role::loss;
      } else if (owner[w] != owner[v]) {
        outward[v] = 1;
        readers.push_back(node_of(w));
      }
    }
    return held;
  }

  /// Puts v, written by node k and read by the nodes in `readers`, into its data.
  void add_to_data(std::size_t v, std::size_t k) {
    p.output[k] += g.bytes(v);
    // The group's own backward part may read it too (its options decide).
    for (auto w : g.successors(v))
      if (owner[w] == owner[v] && node_of(w) != k) readers.push_back(node_of(w));
    std::sort(readers.begin(), readers.end());
    readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
    if (k < N && !recomputed_by[v].empty() && readers.back() > hilp_backward(N, k)) {
      readers.push_back(no_group);
      readers.insert(readers.end(), recomputed_by[v].begin(), recomputed_by[v].end());
    } else {
      recomputed_by[v].clear();
    }
    auto [it, fresh] = data_index.try_emplace({k, readers}, p.producer.size());
    if (fresh) p.producer.push_back(k), p.data_bytes.push_back(0);
    data_of[v] = it->second;
    p.data_bytes[it->second] += g.bytes(v);
  }

  /// What a list of vertices run as node k reads from other nodes: every predecessor it does not
  /// compute itself before reading it (nullopt: one written by k or a later node). Sets
  /// own_outputs and last_read.
  std::optional<std::vector<std::size_t>> deps_of(std::size_t k, const std::vector<std::size_t>& list) {
    ++stamp;
    own_outputs = 0;
    std::vector<std::size_t> d;
    std::vector<std::pair<std::size_t, std::size_t>> reads;  // (data, position)
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::size_t v = list[i];
      for (auto u : g.predecessors(v)) {
        if (mark[u] == stamp) continue;
        if (owner[u] == no_group) {
          // the loss or a gradient of nothing: the expansion runs it when first read
        } else if (k >= N && g.is_forward(u) && owner[u] == hilp_backward(N, k)) {
          if (data_of[u] != no_group) {
            d.push_back(data_of[u]);  // one of the group's outputs, not recomputed by this backward schedule
            own_outputs += g.bytes(u);
          }
          mark[u] = stamp;  // counted once (a resident value otherwise: the phantom's)
        } else if (node_of(u) != k) {
          if (data_of[u] != no_group) d.push_back(data_of[u]), reads.emplace_back(data_of[u], i);  // else held to the end from its first run
        }
      }
      mark[v] = stamp;
    }
    std::sort(d.begin(), d.end());
    d.erase(std::unique(d.begin(), d.end()), d.end());
    for (auto m : d)
      if (p.producer[m] >= k) return std::nullopt;
    note_last_reads(reads);
    return d;
  }

  /// last_read from deps_of's (data, position) reads.
  void note_last_reads(std::vector<std::pair<std::size_t, std::size_t>>& reads) {
    std::sort(reads.begin(), reads.end());
    last_read.clear();
    for (std::size_t i = 0; i < reads.size(); ++i)
      if (i + 1 == reads.size() || reads[i + 1].first != reads[i].first) last_read.emplace_back(reads[i].second, reads[i].first);
  }

  /// Whether a profile of a run of `length` vertices is that run's (its maximum the run's peak).
  static bool matches(const std::vector<std::int64_t>& profile, std::size_t length, std::int64_t peak) {
    return profile.size() == length && !profile.empty() && *std::max_element(profile.begin(), profile.end()) == peak;
  }

  /// The points of a run (hilp_points, with the last deps_of call's last reads) when its profile
  /// matches its peak, less `shift`.
  std::vector<hilp_point> points_of(const std::vector<std::int64_t>& profile, std::size_t length, std::int64_t peak, std::int64_t shift) const {
    if (!matches(profile, length, peak)) return std::vector<hilp_point>{};
    std::vector<std::int64_t> shifted(profile);
    for (auto& b : shifted) b -= shift;
    return hilp_points(shifted, last_read);
  }

  /// Group j's variants: per option a forward and a backward one, then forward only.
  bool add_group(std::size_t j) {
    for (std::size_t o = 0; o < choices[j].size(); ++o)
      if (!add_option(j, o)) return false;
    return add_forward_only(j);
  }

  bool add_option(std::size_t j, std::size_t o) {
    const group_choice& c = choices[j][o];
    // The phantom: the resident values that are neither data nor held to the end (those are
    // counted as such).
    std::int64_t phantom = 0;
    for (auto v : c.resident_vertices)
      if (data_of[v] == no_group && !held_to_end[v]) phantom += g.bytes(v);
    auto fd = deps_of(j, c.forward);
    if (!fd) return false;
    p.variants[j].push_back({c.forward_cost, c.forward_peak, phantom, std::move(*fd), &c.forward,
                             points_of(c.forward_profile, c.forward.size(), c.forward_peak, 0)});
    const std::size_t b = hilp_backward(N, j);
    auto bd = deps_of(b, c.backward);
    if (!bd) return false;
    p.variants[b].push_back(backward_variant(c, o, phantom, std::move(*bd)));
    return true;
  }

  /// What a backward schedule computes again for later backward parts: the data, ascending, and
  /// the vertices (kept_from holds each one's position of its last read in the schedule).
  struct provided_values {
    std::vector<std::size_t> data, vertices;
  };
  provided_values find_provided(const group_choice& c, std::size_t o) {
    provided_values out;
    for (std::size_t i = 0; i < c.backward.size(); ++i) {
      const std::size_t v = c.backward[i];
      for (auto u : g.predecessors(v))
        if (kept_from[u] != unseen) kept_from[u] = i;
      if (std::binary_search(recomputed_by[v].begin(), recomputed_by[v].end(), o)) {
        if (kept_from[v] == unseen) out.vertices.push_back(v), out.data.push_back(data_of[v]);
        kept_from[v] = i;
      }
    }
    std::sort(out.data.begin(), out.data.end());
    out.data.erase(std::unique(out.data.begin(), out.data.end()), out.data.end());
    return out;
  }

  /// The backward variant of option o (choice c) reading `deps` (from the last deps_of call).
  hilp_variant backward_variant(const group_choice& c, std::size_t o, std::int64_t phantom, std::vector<std::size_t> deps) {
    // The data the schedule provides: its profile (a problem without their later readers) frees
    // them after their last read here; they stay from then on (from their computation when
    // nothing here reads them again).
    provided_values provided = find_provided(c, o);
    std::vector<std::int64_t> profile = c.backward_profile;
    std::int64_t peak = c.backward_peak;
    const bool profiled = matches(profile, c.backward.size(), peak);
    for (auto v : provided.vertices) {
      if (profiled)
        for (std::size_t i = kept_from[v] + 1; i < profile.size(); ++i) profile[i] += g.bytes(v);
      else
        peak += g.bytes(v);
      kept_from[v] = unseen;
    }
    if (profiled) peak = *std::max_element(profile.begin(), profile.end());
    // The backward peak holds the phantom and the group's outputs it reads, both already counted
    // (held, or run earlier in the stage: its input rows make sure of it).
    return {c.backward_cost, std::max<std::int64_t>(0, peak - phantom - own_outputs), phantom, std::move(deps),
            &c.backward, points_of(profile, c.backward.size(), peak, phantom + own_outputs), std::move(provided.data)};
  }

  /// Forward only: the group's vertices once, freeing what no other node reads.
  bool add_forward_only(std::size_t j) {
    hilp_variant fo;
    fo.vertices = &p.forward_lists[j];
    std::vector<std::int64_t> profile;
    std::tie(fo.cost, fo.extra) = forward_once(
        g, groups[j], j, owner, forward_readers, [&](std::size_t v) { return outward[v] || g.is_output(v); },
        [&](std::size_t v) { return g.bytes(v); }, &profile);
    auto fd = deps_of(j, groups[j]);
    if (!fd) return false;
    fo.deps = std::move(*fd);
    fo.points = points_of(profile, groups[j].size(), fo.extra, 0);
    p.variants[j].push_back(std::move(fo));
    return true;
  }
};

/// The problem for `groups` (forward vertices, topological within each group, groups in a
/// topological order of the level), `owner` from group_owner and the groups' options; nullopt
/// when the level is not such a graph (a value read before the node writing it). A phantom is
/// the bytes of the option's resident values that are neither data nor held to the end; a
/// backward variant's peak and profile count what it provides as resident from its last read in
/// the schedule on. O(vertices + edges + options x (their lengths and in-edges) + data x log).
inline std::optional<hilp_problem> make_hilp(const memory_graph& g, const std::vector<std::vector<std::size_t>>& groups,
                                             const std::vector<std::size_t>& owner,
                                             const std::vector<std::vector<group_choice>>& choices) {
  return hilp_problem_builder(g, groups, owner, choices).make();
}

/// A schedule of the problem: per stage, the (node, variant) pairs in node order.
using hilp_schedule = std::vector<std::vector<std::pair<std::size_t, std::size_t>>>;

/// The MILP of `p` for `budget` bytes, with the index maps to decode an assignment.
struct hilp_model {
  static constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
  milp_model model;
  std::vector<std::vector<std::vector<std::size_t>>> R;  ///< R[t][k][o], k <= t (none where a node cannot run).
  std::vector<std::vector<std::size_t>> S;               ///< S[t][d] (none unless d's producer < t).
  std::vector<std::vector<std::vector<std::size_t>>> P;  ///< P[t][j][o] (none where not held).
  /// F[t][d]: (k, variable) for each slot k of stage t after which d may be freed, k ascending
  /// (empty without free_values).
  std::vector<std::vector<std::vector<std::pair<std::size_t, std::size_t>>>> F;
  /// The rows defining the memory variables, in order: (row, the variable it defines, its coefficient there).
  std::vector<std::tuple<std::size_t, std::size_t, double>> memory_rows;
  std::vector<std::size_t> budget_rows;  ///< The rows U[t][k-1] + extra <= budget (in units).
  std::int64_t unit = 1;
  double cost_scale = 1;
};

/// build_hilp's work: the model's variables and rows, one family per member function, added in
/// the model's order (per stage R, S and P; the FREE variables with their rows; per stage the run,
/// input, carry, phantom and memory rows).
struct hilp_builder {
  static constexpr std::size_t none = hilp_model::none;
  /// Per slot of a stage: (data, its FREE term) of the data freed after the slot.
  using freed_terms = std::vector<std::vector<std::pair<std::size_t, linear_term>>>;

  const hilp_problem& p;
  const bool free_values;
  const std::size_t N, K, D;
  hilp_model hm;
  double cap = 0;                ///< The budget in units.
  std::vector<double> constant;  ///< Per stage: held throughout it, in units.
  /// Per data: the nodes with a variant reading or providing it, ascending (all after its
  /// producer); FREE only.
  std::vector<std::vector<std::size_t>> users;

  hilp_builder(const hilp_problem& problem, std::int64_t budget, bool with_free_values)
      : p(problem), free_values(with_free_values), N(problem.groups), K(2 * problem.groups), D(problem.producer.size()) {
    // Memory in units of budget / 2^20 (rounded up: the model errs on the safe side).
    hm.unit = std::max<std::int64_t>(1, budget >> 20);
    cap = static_cast<double>(budget / hm.unit);
    scale_costs();
    hm.R.assign(K, {});
    hm.S.assign(K, {});
    hm.P.assign(K, {});
    if (free_values) hm.F.assign(K, std::vector<std::vector<std::pair<std::size_t, std::size_t>>>(D));
    find_users();
    // Constant memory of stage t: values no group owns, and graph outputs of nodes up to t.
    constant.assign(K, units(p.constant));
    for (std::size_t t = 0; t < K; ++t)
      for (std::size_t k = 0; k <= t; ++k) constant[t] += units(p.held_from[k]);
  }

  std::optional<hilp_model> build() {
    for (std::size_t t = 0; t < K; ++t)
      if (constant[t] > cap) return std::nullopt;
    for (std::size_t t = 0; t < K; ++t) add_stage_variables(t);
    for (std::size_t t = 0; free_values && t < K; ++t)
      for (std::size_t d = 0; d < D; ++d) add_free(t, d);
    for (std::size_t t = 0; t < K; ++t) {
      add_run_rows(t);
      add_input_rows(t);
      add_carry_rows(t);
      add_phantom_rows(t);
      add_memory_rows(t);
    }
    return std::move(hm);
  }

  milp_model& model() { return hm.model; }
  double units(std::int64_t b) const { return static_cast<double>((std::max<std::int64_t>(0, b) + hm.unit - 1) / hm.unit); }
  bool has_phantom(std::size_t j, std::size_t o) const { return o + 1 < p.variants[j].size() && p.variants[j][o].phantom > 0; }

  /// Costs scaled by a power of two that brings the largest near 2^11.
  void scale_costs() {
    double max_cost = 0;
    for (const auto& vs : p.variants)
      for (const auto& v : vs) max_cost = std::max(max_cost, v.cost);
    if (max_cost > 0) {
      int e = 0;
      std::frexp(max_cost, &e);
      hm.cost_scale = std::ldexp(1.0, 11 - e);
    }
  }

  void find_users() {
    users.assign(free_values ? D : 0, {});
    for (std::size_t k = 0; free_values && k < K; ++k)
      for (const auto& v : p.variants[k])
        for (const auto* list : {&v.deps, &v.provides})
          for (auto d : *list)
            if (users[d].empty() || users[d].back() != k) users[d].push_back(k);
  }

  /// R, S and P of stage t.
  void add_stage_variables(std::size_t t) {
    hm.R[t].assign(t + 1, {});
    for (std::size_t k = 0; k <= t; ++k) {
      hm.R[t][k].assign(p.variants[k].size(), none);
      if (k >= N && k != t) continue;  // backward nodes run once, in their own stage
      for (std::size_t o = 0; o < p.variants[k].size(); ++o) hm.R[t][k][o] = model().add_binary(hm.cost_scale * p.variants[k][o].cost);
    }
    hm.S[t].assign(D, none);
    for (std::size_t d = 0; d < D; ++d)
      if (p.producer[d] < t) hm.S[t][d] = model().add_binary();
    hm.P[t].assign(N, {});
    for (std::size_t j = 0; j < N; ++j) {
      hm.P[t][j].assign(p.variants[j].size(), none);
      if (t <= j || t > hilp_backward(N, j)) continue;
      for (std::size_t o = 0; o + 1 < p.variants[j].size(); ++o)
        if (has_phantom(j, o)) hm.P[t][j][o] = model().add_binary();
    }
  }

  /// sum over o of R[t][k][o]
  std::vector<linear_term> runs(std::size_t t, std::size_t k) const {
    std::vector<linear_term> terms;
    for (auto x : hm.R[t][k])
      if (x != none) terms.push_back({x, 1});
    return terms;
  }

  /// sum of R[t][k][o] over the o reading d (and with `providing` also those providing it)
  std::vector<linear_term> reads(std::size_t t, std::size_t k, std::size_t d, bool providing) const {
    std::vector<linear_term> terms;
    for (std::size_t o = 0; o < p.variants[k].size(); ++o) {
      const auto& v = p.variants[k][o];
      if (hm.R[t][k][o] != none && (hilp_reads(v, d) || (providing && hilp_provides(v, d)))) terms.push_back({hm.R[t][k][o], 1.0});
    }
    return terms;
  }

  /// FREE: d may be freed after slot k of stage t when k writes, reads or provides d there, no
  /// later node of the stage reads it, and it is not held into stage t + 1.
  void add_free(std::size_t t, std::size_t d) {
    if (p.producer[d] > t) return;
    std::vector<std::size_t> slots{p.producer[d]};
    for (auto k : users[d])
      if (k <= t) slots.push_back(k);
    for (std::size_t i = 0; i < slots.size(); ++i) add_free_slot(t, d, slots, i);
  }

  /// The FREE variable of d after slots[i] in stage t and its rows.
  void add_free_slot(std::size_t t, std::size_t d, const std::vector<std::size_t>& slots, std::size_t i) {
    const std::size_t k = slots[i];
    auto at_k = i == 0 ? runs(t, k) : reads(t, k, d, true);  // the producer frees what it writes in any variant
    if (at_k.empty()) return;
    for (auto& term : at_k) term.coefficient = -1.0;
    const std::size_t f = model().add_binary();
    hm.F[t][d].emplace_back(k, f);
    at_k.push_back({f, 1});
    model().add_less_equal(std::move(at_k), 0, "free where used");
    if (t + 1 < K) model().add_less_equal({{f, 1}, {hm.S[t + 1][d], 1}}, 1, "free unless held");
    // One row for all later reads: L f + (later reads) <= L, L = how many nodes may read d later.
    std::vector<linear_term> later_reads;
    double readers_after = 0;
    for (std::size_t later = i + 1; later < slots.size(); ++later) {
      auto r = reads(t, slots[later], d, false);
      if (r.empty()) continue;
      readers_after += 1;
      later_reads.insert(later_reads.end(), r.begin(), r.end());
    }
    if (readers_after > 0) {
      later_reads.push_back({f, readers_after});
      model().add_less_equal(std::move(later_reads), readers_after, "free after the last read");
    }
  }

  /// One variant of the frontier, at most one of each node before it.
  void add_run_rows(std::size_t t) {
    model().add_equal(runs(t, t), 1, "frontier");
    for (std::size_t k = 0; k < t; ++k) {
      auto r = runs(t, k);
      if (r.size() > 1) model().add_less_equal(std::move(r), 1);
    }
  }

  /// Inputs: R[t][k][o] <= S[t][d] + sum R[t][d][*].
  void add_input_rows(std::size_t t) {
    for (std::size_t k = 0; k <= t; ++k)
      for (std::size_t o = 0; o < p.variants[k].size(); ++o) {
        const std::size_t x = hm.R[t][k][o];
        if (x == none) continue;
        for (auto d : p.variants[k][o].deps) {
          std::vector<linear_term> terms{{x, 1}};
          if (hm.S[t][d] != none) terms.push_back({hm.S[t][d], -1});
          for (auto y : hm.R[t][p.producer[d]])
            if (y != none) terms.push_back({y, -1});
          model().add_less_equal(std::move(terms), 0, "input");
        }
      }
  }

  /// Held values come from the stage before.
  void add_carry_rows(std::size_t t) {
    for (std::size_t d = 0; d < D; ++d) {
      if (p.producer[d] + 1 >= t) continue;  // written in stage t - 1 (its frontier) or later: no row
      std::vector<linear_term> terms{{hm.S[t][d], 1}, {hm.S[t - 1][d], -1}};
      for (auto y : hm.R[t - 1][p.producer[d]])
        if (y != none) terms.push_back({y, -1});
      for (std::size_t o = 0; o < p.variants[t - 1].size(); ++o)  // the frontier of stage t - 1 providing it
        if (hm.R[t - 1][t - 1][o] != none && hilp_provides(p.variants[t - 1][o], d)) terms.push_back({hm.R[t - 1][t - 1][o], -1});
      model().add_less_equal(std::move(terms), 0, "carry");
    }
  }

  /// Phantoms come from the stage before; the backward part of group j needs its option's phantom.
  void add_phantom_rows(std::size_t t) {
    for (std::size_t j = 0; j < N; ++j)
      for (std::size_t o = 0; o + 1 < p.variants[j].size(); ++o) {
        const std::size_t x = hm.P[t][j][o];
        if (x == none) continue;
        std::vector<linear_term> terms{{x, 1}};
        if (t - 1 < hm.P.size() && hm.P[t - 1][j][o] != none) terms.push_back({hm.P[t - 1][j][o], -1});
        if (hm.R[t - 1][j][o] != none) terms.push_back({hm.R[t - 1][j][o], -1});
        model().add_less_equal(std::move(terms), 0, "phantom carry");
      }
    if (t < N) return;
    const std::size_t j = hilp_backward(N, t);  // the same involution: node t is group j's backward part
    for (std::size_t o = 0; o < p.variants[t].size(); ++o) {
      if (!has_phantom(j, o)) continue;
      std::vector<linear_term> terms{{hm.R[t][t][o], 1}};
      if (hm.P[t][j][o] != none) terms.push_back({hm.P[t][j][o], -1});
      if (hm.R[t][j][o] != none) terms.push_back({hm.R[t][j][o], -1});
      model().add_less_equal(std::move(terms), 0, "phantom");
    }
  }

  /// Memory: the held row, then per slot that runs something its budget rows and usage row.
  void add_memory_rows(std::size_t t) {
    const freed_terms freed_after = freed_terms_of(t);
    std::size_t before = add_held_row(t);
    for (std::size_t k = 0; k <= t; ++k) before = add_slot_rows(t, k, before, freed_after[k]);
  }

  /// freed_after[k]: (data, its FREE term) of slot k of stage t (whole units only: what was added
  /// was rounded up, so the model never undercounts); the usage and correction rows take them.
  freed_terms freed_terms_of(std::size_t t) const {
    freed_terms freed_after(t + 1);
    for (std::size_t d = 0; free_values && d < D; ++d)
      for (const auto& [slot, f] : hm.F[t][d])
        if (p.data_bytes[d] / hm.unit > 0) freed_after[slot].emplace_back(d, linear_term{f, -static_cast<double>(p.data_bytes[d] / hm.unit)});
    return freed_after;
  }

  /// U[t][-1] = constant + sum S + sum P; returns U[t][-1].
  std::size_t add_held_row(std::size_t t) {
    const std::size_t before = model().add_continuous(0, infinity);
    std::vector<linear_term> terms{{before, 1}};
    for (std::size_t d = 0; d < D; ++d)
      if (hm.S[t][d] != none) terms.push_back({hm.S[t][d], -units(p.data_bytes[d])});
    for (std::size_t j = 0; j < N; ++j)
      for (std::size_t o = 0; o + 1 < p.variants[j].size(); ++o)
        if (hm.P[t][j][o] != none) terms.push_back({hm.P[t][j][o], -units(p.variants[j][o].phantom)});
    hm.memory_rows.emplace_back(model().add_equal(std::move(terms), constant[t], "held"), before, 1.0);
    return before;
  }

  /// Slot k of stage t after memory `before`: its budget rows and the usage after it; returns
  /// that usage's variable (`before` when nothing can run at k).
  std::size_t add_slot_rows(std::size_t t, std::size_t k, std::size_t before, const std::vector<std::pair<std::size_t, linear_term>>& freed) {
    std::vector<linear_term> peak{{before, 1}};
    std::vector<linear_term> after{{before, 1}};
    bool any = false;
    for (std::size_t o = 0; o < p.variants[k].size(); ++o) {
      const std::size_t x = hm.R[t][k][o];
      if (x == none) continue;
      any = true;
      const auto& v = p.variants[k][o];
      peak.push_back({x, units(free_values && !v.points.empty() ? v.points.front().extra : v.extra)});
      double grows = units(p.output[k]) + (k < N && o + 1 < p.variants[k].size() ? units(v.phantom) : 0.0);
      for (auto d : v.provides) grows += units(p.data_bytes[d]);
      if (grows > 0) after.push_back({x, grows});
    }
    if (!any) return before;
    for (const auto& [d, term] : freed) after.push_back(term);
    hm.budget_rows.push_back(model().add_less_equal(std::move(peak), cap, "budget"));
    if (free_values) add_correction_rows(t, k, before, freed);
    const std::size_t u = model().add_continuous(0, infinity);
    after.push_back({u, -1});
    hm.memory_rows.emplace_back(model().add_equal(std::move(after), 0, "usage"), u, -1.0);
    return u;
  }

  /// Correction terms: a later peak of a variant, without the data it has read for the last time
  /// when they are freed after this slot (whole units, as above).
  void add_correction_rows(std::size_t t, std::size_t k, std::size_t before, const std::vector<std::pair<std::size_t, linear_term>>& freed) {
    for (std::size_t o = 0; o < p.variants[k].size(); ++o) {
      const std::size_t x = hm.R[t][k][o];
      if (x == none) continue;
      const auto& points = p.variants[k][o].points;
      for (std::size_t i = 1; i < points.size(); ++i) {
        std::vector<linear_term> corrected{{before, 1}, {x, units(points[i].extra)}};
        for (const auto& [d, term] : freed)
          if (std::binary_search(points[i].released.begin(), points[i].released.end(), d)) corrected.push_back(term);
        hm.budget_rows.push_back(model().add_less_equal(std::move(corrected), cap, "budget, corrected"));
      }
    }
  }
};

/// Builds the MILP. nullopt when the budget leaves nothing after the constant part. O(K^2 x
/// (variants + deps) + K x (D + sum over data of readers^2 x variants + sum over variants of
/// points x released)) variables and terms, K = 2 x groups, D data (the second part with
/// `free_values` only).
inline std::optional<hilp_model> build_hilp(const hilp_problem& p, std::int64_t budget, bool free_values) {
  return hilp_builder(p, budget, free_values).build();
}

/// The schedule an assignment of build_hilp's model describes. O(variables).
inline hilp_schedule decode_hilp(const hilp_model& hm, const std::vector<double>& values) {
  hilp_schedule s(hm.R.size());
  for (std::size_t t = 0; t < hm.R.size(); ++t)
    for (std::size_t k = 0; k <= t; ++k)
      for (std::size_t o = 0; o < hm.R[t][k].size(); ++o)
        if (hm.R[t][k][o] != hilp_model::none && values[hm.R[t][k][o]] > 0.5) s[t].emplace_back(k, o);
  return s;
}

/// The assignment of the model for a schedule (each stage's pairs in node order, node t last),
/// holding a value or phantom exactly while a later step still reads it and freeing each data
/// after its last use in a stage unless it is held into the next; nullopt when the
/// schedule has no such shape or a variant it uses does not exist in the model. The budget rows
/// are not checked (hilp_peak gives their largest left side). O(K^2 x variants).
inline std::optional<std::vector<double>> assign_hilp(const hilp_problem& p, const hilp_model& hm, const hilp_schedule& s) {
  const std::size_t N = p.groups, K = 2 * N;
  constexpr std::size_t none = hilp_model::none;
  if (s.size() != K) return std::nullopt;
  std::vector<double> x(hm.model.num_variables(), 0.0);
  for (std::size_t t = 0; t < K; ++t) {
    if (s[t].empty() || s[t].back().first != t) return std::nullopt;
    for (std::size_t i = 0; i < s[t].size(); ++i) {
      const auto [k, o] = s[t][i];
      if (k > t || (i > 0 && s[t][i - 1].first >= k) || o >= hm.R[t][k].size() || hm.R[t][k][o] == none) return std::nullopt;
      x[hm.R[t][k][o]] = 1;
    }
  }
  // need: whether a step at stage >= t reads d before any recomputation of it in that stage.
  for (std::size_t d = 0; d < p.producer.size(); ++d) {
    bool need = false;
    for (std::size_t t = K; t-- > p.producer[d] + 1;) {
      bool read_first = false, computed = false;
      for (const auto& [k, o] : s[t]) {
        if (hilp_reads(p.variants[k][o], d)) { read_first = true; break; }
        if (k == p.producer[d] || hilp_provides(p.variants[k][o], d)) { computed = true; break; }
      }
      need = read_first || (!computed && need);
      if (need) x[hm.S[t][d]] = 1;
    }
  }
  for (std::size_t j = 0; j < N; ++j) {
    const std::size_t b = hilp_backward(N, j);
    for (std::size_t o = 0; o + 1 < p.variants[j].size(); ++o) {
      bool need = false;
      for (std::size_t t = b + 1; t-- > j + 1;) {
        bool read_first = false, computed = false;
        for (const auto& [k, oo] : s[t]) {
          if (k == j && oo == o) { computed = true; break; }
          if (k == b && oo == o) { read_first = true; break; }
        }
        need = read_first || (!computed && need);
        if (need && hm.P[t][j][o] != none) x[hm.P[t][j][o]] = 1;
      }
    }
  }
  // Each data freed after every slot of a stage that writes, reads or provides it when no later
  // slot reads it, unless it is held into the next stage.
  for (std::size_t t = 0; t < hm.F.size(); ++t)
    for (std::size_t d = 0; d < p.producer.size(); ++d) {
      if (hm.F[t][d].empty() || (t + 1 < K && x[hm.S[t + 1][d]] > 0.5)) continue;
      std::size_t last_read = 0;  // slots before it are read after
      for (std::size_t i = 0; i < s[t].size(); ++i)
        if (hilp_reads(p.variants[s[t][i].first][s[t][i].second], d)) last_read = i;
      for (std::size_t i = last_read; i < s[t].size(); ++i) {
        const auto [k, o] = s[t][i];
        const auto& v = p.variants[k][o];
        if (k != p.producer[d] && !hilp_reads(v, d) && !hilp_provides(v, d)) continue;
        for (const auto& [slot, f] : hm.F[t][d])
          if (slot == k) x[f] = 1;
      }
    }
  // The memory chain, row by row: defined = (rhs - the other terms) / its coefficient.
  for (const auto& [row, defined, coefficient] : hm.memory_rows) {
    const auto& c = hm.model.constraints()[row];
    double rest = 0;
    for (const auto& term : c.terms)
      if (term.variable != defined) rest += term.coefficient * x[term.variable];
    x[defined] = (c.lower - rest) / coefficient;
  }
  return x;
}

/// The model's peak of an assignment, in bytes: the largest left side of the budget rows.
inline std::int64_t hilp_peak(const hilp_model& hm, const std::vector<double>& x) {
  double peak = 0;
  for (auto row : hm.budget_rows) {
    double lhs = 0;
    for (const auto& term : hm.model.constraints()[row].terms) lhs += term.coefficient * x[term.variable];
    peak = std::max(peak, lhs);
  }
  return static_cast<std::int64_t>(std::ceil(peak - 1e-6)) * hm.unit;
}

/// Raises the budget of a model by `delta` >= 0 bytes (rounded up to units, so that a schedule
/// whose model peak exceeds its simulated one by `delta` fits when the simulated one does).
/// O(stages^2).
inline void raise_hilp_budget(hilp_model& hm, std::int64_t delta) {
  const double d = static_cast<double>((delta + hm.unit - 1) / hm.unit);
  for (auto row : hm.budget_rows) hm.model.constraints()[row].upper += d;
}

/// The schedule of a choice of one option per group: F_0..F_{N-1} with them, then the backward
/// parts. O(groups).
inline hilp_schedule hilp_schedule_of_choice(std::size_t groups, const std::vector<std::size_t>& choice) {
  hilp_schedule s(2 * groups);
  for (std::size_t j = 0; j < groups; ++j) {
    s[j].emplace_back(j, choice[j]);
    s[hilp_backward(groups, j)].emplace_back(hilp_backward(groups, j), choice[j]);
  }
  return s;
}

/// The schedule of a chain schedule (chain_step) when every recomputation comes in node order
/// before a first computation and no carry is recomputed (regen); nullopt otherwise. O(steps).
inline std::optional<hilp_schedule> hilp_schedule_of_chain(const hilp_problem& p, const std::vector<chain_step>& steps) {
  const std::size_t groups = p.groups;
  hilp_schedule s(2 * groups);
  std::size_t t = 0;
  std::vector<char> done(2 * groups, 0);
  for (const auto& step : steps) {
    using kind = chain_step::kind;
    if (step.what == kind::regen) return std::nullopt;  // the H-ILP has no such recomputation
    const std::size_t k = step.what == kind::backward ? hilp_backward(groups, step.stage) : step.stage;
    const std::size_t o = step.what == kind::forward_only ? p.variants[k].size() - 1 : step.option;
    if (t >= s.size()) return std::nullopt;
    if (!s[t].empty() && s[t].back().first >= k) return std::nullopt;
    s[t].emplace_back(k, o);
    if (!done[k]) {
      if (k != t) return std::nullopt;
      done[k] = 1;
      ++t;
    }
  }
  return t == s.size() ? std::optional(std::move(s)) : std::nullopt;
}

}  // namespace memsched::detail::hiremate

namespace memsched::detail::hiremate {

/// What one H-ILP solve gave.
struct hilp_outcome {
  std::optional<hilp_schedule> schedule;  ///< The best assignment's schedule (nullopt: none).
  solve_status status = solve_status::no_solution;  ///< The backend's status (optimal: within the model).
  std::size_t variables = 0, constraints = 0;
  std::int64_t budget_raised = 0;  ///< Bytes added to the model's budget (the starts' smallest excess over their simulated peaks).
  /// The model's objective, in the graph's cost units, at the start given to the backend (NaN: no
  /// start fits the model), at the backend's answer, and the backend's proven lower bound on the
  /// model's optimum (NaN: none).
  double start_objective = std::numeric_limits<double>::quiet_NaN();
  double objective = std::numeric_limits<double>::quiet_NaN();
  double bound = std::numeric_limits<double>::quiet_NaN();
  std::string message;  ///< Why the model was not solved, when it was not.
};

/// Builds the model of `p` for `target`, gives `solve` the cheapest of `starts` that fits it as its
/// start, and decodes the answer. The model counts more memory than the expanded plan uses (phantoms
/// held to their stage's end; without free_values also a schedule's inputs held through its peak and
/// data to the stage's end), so its budget is raised by the
/// smallest excess of the model's peak over `real_peaks` (the simulated peaks of the starts'
/// expanded plans, -1 when unknown): a start whose plan fits `target` then fits the model when its
/// excess is the smallest (always with one start); a larger raise lets the backend pick schedules
/// that overshoot. The caller re-simulates and lowers `target` on an overshoot. O(model size) +
/// the backend's time.
/// A model whose estimate (memsched's rows and the largest backend constants of model_size.hpp)
/// exceeds `max_bytes` is not solved (status unsupported, `message` says why).
template <class Solve>
hilp_outcome solve_hilp(const hilp_problem& p, std::int64_t target, const std::vector<hilp_schedule>& starts,
                        const std::vector<std::int64_t>& real_peaks, const Solve& solve, const solver_options& options,
                        std::uint64_t max_bytes, bool free_values) {
  hilp_outcome out;
  auto hm = build_hilp(p, target, free_values);
  if (!hm) return out;
  out.variables = hm->model.num_variables();
  out.constraints = hm->model.num_constraints();
  model_size_estimate size{.variables = out.variables, .constraints = out.constraints, .nonzeros = hm->model.num_nonzeros()};
  size.model_bytes = size.variables * sizeof(milp_variable) + size.constraints * sizeof(linear_constraint) + size.nonzeros * sizeof(linear_term);
  add_backend_bytes(size, "");
  if (size.bytes() > max_bytes) {
    out.status = solve_status::unsupported;
    out.message = model_too_large("hiremate_plan (H-ILP)", size, max_bytes);
    return out;
  }
  std::vector<std::vector<double>> assigned;
  std::optional<std::int64_t> excess;
  for (std::size_t i = 0; i < starts.size(); ++i)
    if (auto x = assign_hilp(p, *hm, starts[i])) {
      if (i < real_peaks.size() && real_peaks[i] >= 0) {
        const std::int64_t model_peak = hilp_peak(*hm, *x);
        const std::int64_t e = std::max<std::int64_t>(0, model_peak - real_peaks[i]);
        excess = excess ? std::min(*excess, e) : e;
      }
      assigned.push_back(std::move(*x));
    }
  const std::int64_t raise = excess.value_or(0);
  if (raise > 0) raise_hilp_budget(*hm, raise);
  out.budget_raised = std::max<std::int64_t>(0, raise);
  for (auto& x : assigned)
    if (!hm->model.first_violation(x) && (!hm->model.start || hm->model.objective_value(x) < hm->model.objective_value(*hm->model.start)))
      hm->model.start = std::move(x);
  // The objective in the graph's cost units (the model's costs are scaled by a power of two).
  if (hm->model.start) out.start_objective = hm->model.objective_value(*hm->model.start) / hm->cost_scale;
  const solver_result r = solve(hm->model, options);
  out.status = r.status;
  out.objective = r.objective / hm->cost_scale, out.bound = r.bound / hm->cost_scale;
  if ((r.status == solve_status::optimal || r.status == solve_status::feasible) && r.values.size() == hm->model.num_variables())
    out.schedule = decode_hilp(*hm, r.values);
  return out;
}

}  // namespace memsched::detail::hiremate
