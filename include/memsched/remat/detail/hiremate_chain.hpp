#pragma once
// HiRemate's top level as a checkpointed chain: the groups, in topological order, are the stages
// of a chain, and a schedule may run a stage's forward part without keeping anything but what the
// next stage reads, then run it again (with one of its options) when its backward part comes.
// This is the dynamic program of Rotor for heterogeneous chains (Beaumont, Eyraud-Dubois, Herrmann,
// Joly, Shilova 2019) with options per stage as Rockmate uses it (Zhao et al., ICML 2023): what the
// one-option-per-group choice (choose_options) cannot express is recomputing a group from the output of
// another, which long stacks of blocks need at tight budgets. Internals of remat/hiremate.hpp.
//
// The memory model is the chain's: besides the options' own peaks (whose inputs and gradients from
// outside count 0 bytes), a stage's input `carry` of the stage before and the `grad_in` its backward
// part reads from the stage after are counted while they are held; values read across
// non-adjacent groups (a mask every block reads, a skip connection, a weight's gradient) are
// `pinned`: never recomputed, counted over their live range. A forward value lives from its
// writer's forward part to the backward part of its first reader (a reader's forward part may run
// again until its backward part comes), a gradient from its writer's backward part to its first
// reader's; values no group owns are counted throughout. The expanded plan is re-simulated by the
// caller, which tightens the budget when what the model leaves out pushes it over.

#include <memsched/graph/memory_graph.hpp>

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

namespace memsched::detail::hiremate {

/// One group seen as a stage of the chain.
struct chain_stage {
  std::int64_t carry = 0;            ///< Bytes of its values the next stage's forward part reads.
  std::int64_t grad_in = 0;          ///< Bytes of the next stage's values its backward part reads (gradients, next-output dependencies).
  std::int64_t forward_peak = 0;     ///< Its forward vertices once, keeping only `carry` (its input not counted).
  double forward_cost = 0;
  /// Pinned bytes live while its forward part runs (also when it runs again) and while its
  /// backward part runs.
  std::int64_t pinned_forward = 0, pinned_backward = 0;
  const std::vector<std::size_t>* forward = nullptr;  ///< Those vertices, topological (the group's).
  std::vector<std::size_t> carry_values;              ///< The values counted in `carry`.
};

/// The chain view of a top level.
struct chain_model {
  std::vector<chain_stage> stages;
  std::int64_t pinned = 0;         ///< Pinned bytes counted throughout (values no stage owns or reads).
  std::int64_t pinned_ranged = 0;  ///< Pinned bytes counted over their live ranges (the stages' pinned_forward / pinned_backward).
};

/// The same chain with every pinned value counted throughout (the coarser model: on some graphs its
/// schedules expand into cheaper plans, the spare memory it leaves being used afterwards).
/// O(stages).
inline chain_model pinned_throughout(chain_model chain) {
  chain.pinned += chain.pinned_ranged;
  chain.pinned_ranged = 0;
  for (auto& st : chain.stages) st.pinned_forward = st.pinned_backward = 0;
  return chain;
}

/// One option of a group: its forward and backward schedules (original vertices, compute order),
/// their peaks (inputs and gradients from outside the group not counted), the bytes it keeps from
/// the first to the second, and its cost.
struct group_choice {
  std::vector<std::size_t> forward, backward;
  std::int64_t forward_peak = 0, backward_peak = 0, resident = 0;
  double cost = 0, forward_cost = 0, backward_cost = 0;  ///< cost = forward_cost + backward_cost.
  std::vector<std::size_t> resident_vertices;  ///< The values it keeps from the first to the second.
  /// Recomputes the group's carry (what the next group reads) from resident_vertices without the
  /// carry, so that the chain may drop the carry after the next group's forward part and run this
  /// right before that group's backward part (add_regen); its cost. nullopt: not offered.
  std::vector<std::size_t> regen;
  std::optional<double> regen_cost;
  /// Bytes in use while each vertex of `forward` / `backward` runs (their maxima are the peaks;
  /// empty when unknown). The H-ILP's correction terms read them.
  std::vector<std::int64_t> forward_profile, backward_profile;
};

/// No group owns the vertex (group_owner).
inline constexpr std::size_t no_group = std::numeric_limits<std::size_t>::max();

/// The group of each vertex: forward vertices by `groups`, backward ones by the vertex they are
/// the gradient of; no_group for the others (the loss, gradients of nothing). O(vertices).
inline std::vector<std::size_t> group_owner(const memory_graph& g, const std::vector<std::vector<std::size_t>>& groups) {
  std::vector<std::size_t> owner(g.size(), no_group);
  for (std::size_t k = 0; k < groups.size(); ++k)
    for (auto v : groups[k]) owner[v] = k;
  for (std::size_t v = 0; v < g.size(); ++v)
    if (g.role(v) == node_role::backward && g.grad_of(v) && owner[*g.grad_of(v)] != no_group) owner[v] = owner[*g.grad_of(v)];
  return owner;
}

/// One step of a chain schedule: a stage's forward part alone (`forward_only`, nothing kept but
/// its carry), its forward part with an option, its backward part with that option, or the
/// option's `regen` (its carry recomputed, right before the next stage's backward part).
struct chain_step {
  enum class kind : std::uint8_t { forward_only, forward, backward, regen } what;
  std::size_t stage = 0, option = 0;
};

/// Group j's forward vertices run once in list order: each value freed after its last reader in
/// the group unless keep(v), counted(v) bytes per value. Returns (cost, peak); `profile`, when
/// given, gets the bytes in use while each vertex runs. `readers` is scratch of g.size() zeros,
/// left zero. O(the group's vertices and edges).
template <class Keep, class Counted>
std::pair<double, std::int64_t> forward_once(const memory_graph& g, const std::vector<std::size_t>& group, std::size_t j,
                                             const std::vector<std::size_t>& owner, std::vector<std::size_t>& readers,
                                             const Keep& keep, const Counted& counted, std::vector<std::int64_t>* profile = nullptr) {
  auto in_group = [&](std::size_t w) { return owner[w] == j && g.is_forward(w); };
  for (auto v : group)
    for (auto w : g.successors(v)) readers[v] += in_group(w);
  double cost = 0;
  std::int64_t live = 0, peak = 0;
  for (auto v : group) {
    cost += g.cost(v);
    const std::int64_t running = live + counted(v) + g.workspace(v);
    if (profile) profile->push_back(running);
    peak = std::max(peak, running);
    live += counted(v);
    for (auto u : g.predecessors(v))
      if (in_group(u) && --readers[u] == 0 && !keep(u)) live -= counted(u);
    if (readers[v] == 0 && !keep(v)) live -= counted(v);
  }
  return {cost, peak};
}

/// How the chain sees w's read of v (make_chain): inside one stage (or the loss reading the
/// last stage), the next stage reading v (its carry; a forward value its backward part reads
/// too), the stage before reading v in its backward part (its grad_in), or anything else
/// (pinned: never recomputed, held over its live range). `L` stages.
enum class read_kind : std::uint8_t { inside, carry, grad_in, pinned };
inline read_kind read_kind_of(const memory_graph& g, const std::vector<std::size_t>& owner, std::size_t L, std::size_t v, std::size_t w) {
  const std::size_t ov = owner[v], ow = owner[w];
  if (ov != no_group && ow == ov) return read_kind::inside;
  if (ov == no_group) return read_kind::pinned;
  if (ow == no_group) return ov + 1 != L ? read_kind::pinned : read_kind::inside;  // the last stage's problem holds what the loss reads
  if (g.is_forward(w)) return ow == ov + 1 ? read_kind::carry : read_kind::pinned;
  if (ow + 1 == ov) return read_kind::grad_in;
  return ow == ov + 1 && g.is_forward(v) ? read_kind::carry : read_kind::pinned;
}

/// The chain view of `groups` (forward vertices; groups in a topological order of the top level),
/// `owner` = group_owner(g, groups). O(vertices + edges).
inline chain_model make_chain(const memory_graph& g, const std::vector<std::vector<std::size_t>>& groups, const std::vector<std::size_t>& owner) {
  constexpr std::size_t none = no_group;
  const std::size_t L = groups.size();

  chain_model chain;
  chain.stages.resize(L);
  std::vector<char> carry(g.size(), 0), pinned(g.size(), 0), grad_in(g.size(), 0);
  for (std::size_t v = 0; v < g.size(); ++v) {
    for (auto w : g.successors(v)) {
      const read_kind r = read_kind_of(g, owner, L, v, w);
      if (r == read_kind::pinned) pinned[v] = 1;
      if (r == read_kind::carry && g.is_forward(w)) carry[v] = 1;
      if (r == read_kind::grad_in) grad_in[v] = 1;
    }
    if (g.is_output(v) && owner[v] != L - 1) pinned[v] = 1;
  }
  // Pinned values over their live ranges: stages [lo, hi] of the forward and backward parts,
  // added through difference arrays.
  std::vector<std::int64_t> forward_diff(L + 1, 0), backward_diff(L + 1, 0);
  auto live = [&](std::vector<std::int64_t>& diff, std::size_t lo, std::size_t hi, std::int64_t bytes) {
    if (lo > hi || lo >= L) return;
    diff[lo] += bytes;
    diff[std::min(hi, L - 1) + 1] -= bytes;
  };
  for (std::size_t v = 0; v < g.size(); ++v) {
    if (pinned[v]) {
      const std::size_t ov = owner[v];
      std::size_t first_reader = L, last_reader = 0;
      bool unowned_reader = false;
      for (auto w : g.successors(v)) {
        if (owner[w] != none) {
          first_reader = std::min(first_reader, owner[w]);
          last_reader = std::max(last_reader, owner[w]);
        } else if (g.role(w) != node_role::loss) {
          unowned_reader = true;  // a gradient of nothing: when it runs is not the chain's to say
        }
      }
      if (ov == none || unowned_reader) {
        chain.pinned += g.bytes(v);
      } else if (g.is_forward(v)) {
        chain.pinned_ranged += g.bytes(v);
        live(forward_diff, ov, L - 1, g.bytes(v));
        live(backward_diff, g.is_output(v) ? 0 : first_reader, L - 1, g.bytes(v));  // none when only the loss reads it
      } else if (last_reader > ov) {
        chain.pinned += g.bytes(v);  // a gradient read by a later stage's backward part: not a chain
      } else {
        const std::size_t lo = g.is_output(v) ? 0 : first_reader;
        chain.pinned_ranged += g.bytes(v);
        live(forward_diff, lo, ov, g.bytes(v));  // forward parts run again while it lives
        live(backward_diff, lo, ov, g.bytes(v));
      }
      continue;
    }
    if (owner[v] == none) continue;
    // A value the next stage reads only in its backward part (an input dependency) stays with
    // the carry, which is held until that backward part.
    if (!carry[v] && g.is_forward(v))
      carry[v] = std::any_of(g.successors(v).begin(), g.successors(v).end(), [&](std::size_t w) { return owner[w] == owner[v] + 1; });
    if (carry[v]) chain.stages[owner[v]].carry += g.bytes(v), chain.stages[owner[v]].carry_values.push_back(v);
    if (grad_in[v] && owner[v] > 0) chain.stages[owner[v] - 1].grad_in += g.bytes(v);
  }

  std::int64_t forward_live = 0, backward_live = 0;
  for (std::size_t k = 0; k < L; ++k) {
    chain.stages[k].pinned_forward = forward_live += forward_diff[k];
    chain.stages[k].pinned_backward = backward_live += backward_diff[k];
  }

  // Each stage's forward part run once, freeing what neither it nor the next stage reads again.
  std::vector<std::size_t> readers(g.size(), 0);
  for (std::size_t k = 0; k < L; ++k) {
    chain_stage& st = chain.stages[k];
    st.forward = &groups[k];
    std::tie(st.forward_cost, st.forward_peak) = forward_once(
        g, groups[k], k, owner, readers, [&](std::size_t v) { return carry[v] != 0; },
        [&](std::size_t v) { return pinned[v] ? std::int64_t{0} : g.bytes(v); });
  }
  return chain;
}

/// Offers each option of a stage with a carry the carry's recomputation (group_choice::regen):
/// the stage's forward vertices the carry needs, in the group's order, computed from the option's
/// resident values without the carry (the stage's inputs taken as present). The chain model
/// counts the recomputation's cost, not its transient memory, which the simulator checks.
/// O(stages x options x group size and edges).
inline void add_regen(const memory_graph& g, const chain_model& chain, const std::vector<std::size_t>& owner,
                      std::vector<std::vector<group_choice>>& opts) {
  std::vector<char> needed(g.size(), 0), available(g.size(), 0);
  for (std::size_t k = 0; k < chain.stages.size() && k < opts.size(); ++k) {
    const chain_stage& st = chain.stages[k];
    if (st.carry_values.empty() || !st.forward) continue;
    const std::vector<std::size_t>& group = *st.forward;
    for (auto& c : opts[k]) {
      for (auto v : c.resident_vertices) available[v] = 1;
      for (auto v : st.carry_values) available[v] = 0, needed[v] = 1;
      for (auto it = group.rbegin(); it != group.rend(); ++it)
        if (needed[*it] && !available[*it])
          for (auto p : g.predecessors(*it))
            if (owner[p] == k && g.is_forward(p)) needed[p] = 1;
      c.regen.clear();
      double cost = 0;
      for (auto v : group)
        if (needed[v] && !available[v]) c.regen.push_back(v), cost += g.cost(v);
      c.regen_cost = cost;
      for (auto v : group) needed[v] = available[v] = 0;
      for (auto v : c.resident_vertices) available[v] = 0;
    }
  }
}

/// chain_schedule's dynamic program: the chain in units of memory, its tables C and E, and the
/// schedule of an entry. The comments on fill and reconstruct say what the tables hold.
struct chain_tables {
  static constexpr float inf = std::numeric_limits<float>::infinity();
  /// An option of a stage in units: forward and backward peaks (pinned bytes included), resident
  /// bytes beyond the carry, its cost and its regen's (inf when the option does not offer it).
  struct opt_units {
    std::size_t fp, bp, extra;
    float cost, regen;
  };

  std::size_t L = 0;
  bool any_regen = false;  ///< Some option may drop its carry (the E table exists).
  std::int64_t unit = 1;   ///< Bytes per unit.
  std::size_t U = 0, W = 0;  ///< Units of the budget; W = U + 1 entries per table row.
  std::vector<std::size_t> X, D, P;  ///< Per stage, in units: carry, grad_in, forward-only peak.
  std::vector<double> prefix;        ///< Forward-only costs of stages 0..k-1.
  std::vector<std::vector<opt_units>> ou;  ///< Per stage, per option.
  std::vector<float> C, E;

  /// Sizes the tables for `budget` (nullopt: nothing fits, or the cap leaves fewer than 16 units).
  static std::optional<chain_tables> make(const chain_model& chain, const std::vector<std::vector<group_choice>>& opts,
                                          std::int64_t budget, std::size_t units, std::int64_t max_table_bytes, bool allow_regen) {
    chain_tables tab;
    tab.L = chain.stages.size();
    const std::int64_t avail = budget - chain.pinned;
    if (tab.L == 0 || avail <= 0) return std::nullopt;
    for (std::size_t k = 0; allow_regen && k + 1 < tab.L; ++k)
      for (const auto& o : opts[k]) tab.any_regen = tab.any_regen || o.regen_cost.has_value();
    const std::size_t tables = tab.any_regen ? 2 : 1;
    const std::size_t pairs = tab.L * (tab.L + 1) / 2;
    const std::int64_t fit = max_table_bytes / static_cast<std::int64_t>(tables * pairs * sizeof(float)) - 1;
    if (fit < 16) return std::nullopt;
    units = std::min<std::size_t>(units, static_cast<std::size_t>(fit));
    // Rounded up without forming avail + units - 1 (a budget near 2^63 would overflow).
    const std::int64_t n_units = static_cast<std::int64_t>(units);
    tab.unit = std::max<std::int64_t>(1, avail / n_units + (avail % n_units != 0 ? 1 : 0));
    tab.U = static_cast<std::size_t>(avail / tab.unit);
    tab.W = tab.U + 1;
    tab.measure(chain, opts);
    tab.C.assign(pairs * tab.W, inf);
    tab.E.assign(tab.any_regen ? pairs * tab.W : 0, inf);
    return tab;
  }

  /// Bytes in units, rounded up.
  std::size_t up(std::int64_t b) const { return static_cast<std::size_t>((std::max<std::int64_t>(0, b) + unit - 1) / unit); }

  /// The stages' and options' sizes in units.
  void measure(const chain_model& chain, const std::vector<std::vector<group_choice>>& opts) {
    X.resize(L), D.resize(L), P.resize(L);
    prefix.assign(L + 1, 0);
    for (std::size_t k = 0; k < L; ++k) {
      X[k] = up(chain.stages[k].carry);
      D[k] = up(chain.stages[k].grad_in);
      P[k] = up(chain.stages[k].forward_peak + chain.stages[k].pinned_forward);
      prefix[k + 1] = prefix[k] + chain.stages[k].forward_cost;
    }
    ou.assign(L, {});
    for (std::size_t k = 0; k < L; ++k)
      for (const auto& o : opts[k])
        ou[k].push_back({up(o.forward_peak + chain.stages[k].pinned_forward), up(o.backward_peak + chain.stages[k].pinned_backward),
                         up(o.resident - chain.stages[k].carry), static_cast<float>(o.cost),
                         any_regen && o.regen_cost && k + 1 < L ? static_cast<float>(*o.regen_cost) : inf});
  }

  std::size_t in_of(std::size_t s) const { return s == 0 ? std::size_t{0} : X[s - 1]; }
  std::size_t id(std::size_t s, std::size_t t) const { return (t * (t + 1) / 2 + s) * W; }  // s <= t
  /// Forward-only cost of stages s..s2-1 (the reconstruction recomputes candidates with the same
  /// float operations as the table, so it finds the entry's candidate by equality).
  float ck_cost(std::size_t s, std::size_t s2) const { return static_cast<float>(prefix[s2] - prefix[s]); }
  /// The deeper part after stage s's forward part with option o, within m units: stages s+1..t
  /// with s's carry held throughout (C), or dropped and recomputed by o (E + o.regen).
  float deeper(std::size_t s, std::size_t t, const opt_units& o, std::size_t m) const {
    const float held = C[id(s + 1, t) + m];
    return any_regen ? std::min(held, E[id(s + 1, t) + m] + o.regen) : held;
  }

  // C(s, t)[m]: least cost of the forward and backward parts of stages s..t within m units, the
  // input of s and the gradients t's backward part reads already held (and counted in m). The
  // candidates: s's forward part with option k, then the deeper part, then s's backward part; or
  // s..s2-1 forward only (keeping s2's input), C(s2, t), then C(s, s2 - 1).
  // E(s, t)[m]: the same with the input of s held only in s's forward and backward parts (its
  // writer recomputes it in between); option candidates only.

  /// Fills the entries (s, s + len) of C and E; those of shorter spans are filled.
  void fill(std::size_t len) {
    for (std::size_t s = 0; s + len < L; ++s) {
      const std::size_t t = s + len;
      float* row = &C[id(s, t)];
      float* erow = any_regen ? &E[id(s, t)] : nullptr;
      fill_options(s, t, row, erow);
      if (erow && len == 0) std::copy(row, row + W, erow);
      fill_splits(s, t, row);
      const std::size_t need = in_of(s) + D[t];
      for (std::size_t m = 0; m < std::min(need, W); ++m) {
        row[m] = inf;
        if (erow) erow[m] = inf;
      }
    }
  }

  /// The candidates of (s, t) running s's forward part with an option.
  void fill_options(std::size_t s, std::size_t t, float* row, float* erow) {
    const std::size_t in = in_of(s);
    for (std::size_t k = 0; k < ou[s].size(); ++k) {
      const auto& o = ou[s][k];
      if (s == t) {
        const std::size_t req = in + D[s] + std::max(o.fp, o.bp);
        for (std::size_t m = req; m < W; ++m) row[m] = std::min(row[m], o.cost);
        continue;
      }
      const std::size_t shift = in + o.extra;
      const std::size_t req = std::max({in + D[t] + o.fp, in + D[s] + o.bp, shift});
      for (std::size_t m = req; m < W; ++m) row[m] = std::min(row[m], deeper(s, t, o, m - shift) + o.cost);
      if (erow && s > 0) {
        const std::size_t ereq = std::max({in + D[t] + o.fp, in + D[s] + o.bp, o.extra});
        for (std::size_t m = ereq; m < W; ++m) erow[m] = std::min(erow[m], deeper(s, t, o, m - o.extra) + o.cost);
      }
    }
  }

  /// The candidates of (s, t) running s..s2-1 forward only.
  void fill_splits(std::size_t s, std::size_t t, float* row) {
    const std::size_t in = in_of(s);
    std::size_t q = 0;  // largest forward-only peak of stages s..s2-1 with their inputs
    for (std::size_t s2 = s + 1; s2 <= t; ++s2) {
      q = std::max(q, (s2 - 1 > s ? X[s2 - 2] : 0) + P[s2 - 1]);
      const float* a = &C[id(s2, t)];
      const float* b = &C[id(s, s2 - 1)];
      const float f = ck_cost(s, s2);
      const std::size_t req = std::max(in + D[t] + q, in);
      for (std::size_t m = req; m < W; ++m) row[m] = std::min(row[m], (a[m - in] + b[m]) + f);
    }
  }

  /// Whether the whole chain fits (C(0, L - 1)[U] is finite).
  bool feasible() const { return C[id(0, L - 1) + U] < inf; }

  std::vector<chain_step> reconstruct() const;
};

/// The steps of the filled tables' answer (chain_tables::reconstruct): the first candidate (in the
/// table's order) whose value equals the entry. A stage entered through E has its writer's regen
/// step put right before its backward part. The reconstruction nests once per stage: its pending
/// work lives on an explicit stack (a call stack would overflow on chains of many thousand
/// stages). A task either rebuilds the entry (s, t, m) of C (E when `dropped`) or, after the
/// stages it encloses, emits stage s's backward part (with the regen step of its dropped input
/// first).
struct chain_reconstruction {
  static constexpr std::size_t no_regen = std::numeric_limits<std::size_t>::max();
  struct task {
    bool backward;
    std::size_t s, t, m, k;
    bool dropped;
    std::size_t regen_option;
  };
  const chain_tables& tab;
  std::vector<chain_step> steps;
  std::vector<task> todo;

  std::vector<chain_step> run() {
    todo.push_back({false, 0, tab.L - 1, tab.U, 0, false, no_regen});
    while (!todo.empty()) {
      const task x = todo.back();
      todo.pop_back();
      if (!x.backward) {
        rebuild(x.s, x.t, x.m, x.dropped, x.regen_option);
        continue;
      }
      if (x.dropped) steps.push_back({chain_step::kind::regen, x.s - 1, x.regen_option});
      steps.push_back({chain_step::kind::backward, x.s, x.k});
    }
    return std::move(steps);
  }

  void rebuild(std::size_t s, std::size_t t, std::size_t m, bool dropped, std::size_t regen_option) {
    const float target = (dropped ? tab.E : tab.C)[tab.id(s, t) + m];
    if (rebuild_with_option(s, t, m, dropped, regen_option, target)) return;
    assert(!dropped);
    rebuild_with_split(s, t, m, target);
  }

  /// The option candidates of the entry; whether one matched (its steps and tasks pushed).
  bool rebuild_with_option(std::size_t s, std::size_t t, std::size_t m, bool dropped, std::size_t regen_option, float target) {
    const std::size_t in = tab.in_of(s);
    for (std::size_t k = 0; k < tab.ou[s].size(); ++k) {
      const auto& o = tab.ou[s][k];
      if (s == t) {
        if (m >= in + tab.D[s] + std::max(o.fp, o.bp) && o.cost == target) {
          steps.push_back({chain_step::kind::forward, s, k});
          todo.push_back({true, s, t, m, k, dropped, regen_option});
          return true;
        }
        continue;
      }
      const std::size_t shift = dropped ? o.extra : in + o.extra;
      const std::size_t req = std::max({in + tab.D[t] + o.fp, in + tab.D[s] + o.bp, shift});
      if (m < req) continue;
      const std::size_t m2 = m - shift;
      const float held = tab.C[tab.id(s + 1, t) + m2];
      const float regen = tab.any_regen ? tab.E[tab.id(s + 1, t) + m2] + o.regen : chain_tables::inf;
      if (std::min(held, regen) + o.cost != target) continue;
      steps.push_back({chain_step::kind::forward, s, k});
      todo.push_back({true, s, t, m, k, dropped, regen_option});
      if (held <= regen)
        todo.push_back({false, s + 1, t, m2, 0, false, no_regen});
      else
        todo.push_back({false, s + 1, t, m2, 0, true, k});
      return true;
    }
    return false;
  }

  /// The forward-only candidates of an entry of C.
  void rebuild_with_split(std::size_t s, std::size_t t, std::size_t m, float target) {
    const std::size_t in = tab.in_of(s);
    std::size_t q = 0;
    for (std::size_t s2 = s + 1; s2 <= t; ++s2) {
      q = std::max(q, (s2 - 1 > s ? tab.X[s2 - 2] : 0) + tab.P[s2 - 1]);
      if (m < std::max(in + tab.D[t] + q, in)) continue;
      if ((tab.C[tab.id(s2, t) + m - in] + tab.C[tab.id(s, s2 - 1) + m]) + tab.ck_cost(s, s2) == target) {
        for (std::size_t i = s; i < s2; ++i) steps.push_back({chain_step::kind::forward_only, i, 0});
        todo.push_back({false, s, s2 - 1, m, 0, false, no_regen});  // second: the stack is last in, first out
        todo.push_back({false, s2, t, m - in, 0, false, no_regen});
        return;
      }
    }
  }
};

inline std::vector<chain_step> chain_tables::reconstruct() const { return chain_reconstruction{*this, {}, {}}.run(); }

/// A cheapest chain schedule within `budget` for the options `opts[k]` of each stage (one list per
/// stage), or nullopt (none in the model, or `stop()` said to stop). Memory in units of
/// (budget - pinned) / units, sizes rounded up; each stage's pinned bytes are added to its peaks.
/// With `allow_regen`, an option with a regen_cost may also drop its carry while the stages after
/// the next one run and recompute it before the next stage's backward part (a second table, E,
/// for the stages whose input is dropped so). `max_table_bytes` caps the tables (fewer units when
/// they would exceed it).
/// O(L^3 x units + L^2 x options x units) time, O(L^2 x units) memory, L stages.
template <class Stop>
std::optional<std::vector<chain_step>> chain_schedule(const chain_model& chain, const std::vector<std::vector<group_choice>>& opts,
                                                      std::int64_t budget, std::size_t units, std::int64_t max_table_bytes, Stop stop,
                                                      bool allow_regen = false) {
  assert(opts.size() == chain.stages.size());
  auto tab = chain_tables::make(chain, opts, budget, units, max_table_bytes, allow_regen);
  if (!tab) return std::nullopt;
  for (std::size_t len = 0; len < tab->L; ++len) {
    if (stop()) return std::nullopt;
    tab->fill(len);
  }
  if (!tab->feasible()) return std::nullopt;
  return tab->reconstruct();
}

}  // namespace memsched::detail::hiremate
