#pragma once
// The definitions of remat/hiremate.hpp's entry points (declared there). Header-only mode: that
// header includes this file at its end and they are compiled in the TUs that call them
// (core/config.hpp). With MEMSCHED_SEPARATE_COMPILATION only src/memsched.cpp includes it.

#include <memsched/remat/hiremate.hpp>

#include <array>
#include <atomic>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>

namespace memsched::detail::hiremate {

// Subgraph problems solved by earlier partitions (hiremate_plan_on's), by their class's canonical
// hash: a group of a later partition whose problem maps onto one of them (hiremate_subgraph_map,
// an exact check) takes its options instead of solving again. Node-based, so entries stay put
// while later partitions add theirs.
// How one subgraph problem's solve went (from its hiremate_subgraph_result), for the statistics.
struct solve_summary {
  bool cut = false;       // the time limit cut its solve short (stopped)
  bool serenity = false;  // its options hold the one along Serenity's order (serenity_lower)
  std::size_t solves = 0, proven = 0;
};
struct solved_problem {
  std::vector<std::size_t> group;  // forward vertices, canonical order
  hiremate_subgraph sub;
  std::vector<hiremate_option> options;
  solve_summary summary;
};
using solved_problems = std::unordered_multimap<std::uint64_t, solved_problem>;

// The problems solved by every nested hierarchy of one call with options.levels > 2, per mode
// (see plan_levels): the budgets of one class are solved by one hierarchy each, on the same
// subgraph problem, and their inner classes' options do not depend on the budget, so each is
// solved once. Classes are solved in parallel: lookups and insertions hold the mutex (entries
// never change once inserted, and the multimap's nodes stay put).
struct problem_cache {
  std::mutex mutex;
  std::array<solved_problems, 2> problems;
};

// hiremate_stats::lower_solver_calls, lower_solver_cheaper, nested_hierarchies and
// nested_partitions_tried of one hiremate_plan call: one set, created by the outermost
// plan_levels and counted into by every partition it tries and every nested hierarchy (from
// several threads).
struct lower_call_counts {
  std::atomic<std::size_t> calls{0}, cheaper{0}, nested{0}, nested_partitions{0};
};

// What a nested hierarchy shares with the call that runs it (plan_levels): the problems solved
// by the hierarchies of its level and the counts of the outermost call.
struct nesting_state {
  problem_cache& cache;
  lower_call_counts& counts;
};

// The hierarchy over one partition (hiremate_plan_on's partitions): partition, lowest level, top
// levels. `repeated` when merging leaves the groups of one of `earlier_groups` (partitions solved
// before): nothing is solved, and stats.max_lower says which M^l the partition reached (raised for
// max_chain_stages), so that the caller skips the grains that would reach it again. nullopt with
// `nested` when the partition has only level 0 (the two-level solve covers it).
struct partition_outcome {
  remat_result plan;  // status feasible when within the budget
  hiremate_stats stats;
  std::string why;    // why there is no plan
  std::vector<std::vector<std::size_t>> groups;
  bool repeated = false;
};

// What every step of one hiremate_plan_on call reads: the graph, budget, options and deadline,
// the cheapest plan reported to the observer so far and the outermost call's counts.
struct partition_context {
  const memory_graph& g;
  std::int64_t budget;
  const hiremate_options& options;
  const call_deadline& deadline;
  std::optional<double>& best_reported;
  lower_call_counts& lower_counts;

  [[nodiscard]] double elapsed() const { return deadline.elapsed(); }
  [[nodiscard]] bool out_of_time() const { return deadline.passed(); }
  // Reports a plan within the budget to the observer when it is cheaper than every one before.
  void report(double cost) const {
    if (!best_reported || cost < *best_reported) {
      best_reported = cost;
      options.observer.on_incumbent(elapsed(), cost);
    }
  }
};

// The problems solved by earlier partitions, and the mutex that guards them when the hierarchies
// of other threads share them (a nested hierarchy's problem_cache); none in the outermost call.
struct solved_store {
  solved_problems& problems;
  std::mutex* mutex = nullptr;

  [[nodiscard]] std::unique_lock<std::mutex> lock() const {
    return mutex ? std::unique_lock<std::mutex>(*mutex) : std::unique_lock<std::mutex>();
  }
};

// The level of one partition that the lowest level solves: its groups (forward vertices,
// canonical order) and their classes, after merge_spans.
struct level_groups {
  hiremate_partition_result part;  // its stats move to hiremate_stats::partition
  std::size_t level = 0;           // of the partition
  std::vector<std::vector<std::size_t>> groups;
  std::vector<std::size_t> group_class;
  merged_spans merged;

  // A class's canonical hash; a merged span's mixes its parts' hashes (equal hashes only propose
  // a problem to compare). None for the whole forward graph as one group.
  [[nodiscard]] std::optional<std::uint64_t> class_hash(std::size_t c) const {
    if (c < part.classes.size()) return part.classes[c].hash;
    const std::size_t k = c - part.classes.size();
    if (k >= merged.parts.size()) return std::nullopt;
    std::uint64_t h = 0x6d657267656473ULL;
    for (const std::size_t p : merged.parts[k]) h = mix_hash(h, part.classes[p].hash);
    return h;
  }
};

// H-Partition (phase "partition") and the groups of the level solved: level 0, or with `nested`
// level options.levels - 2 when the partition has it (else its highest), or the whole forward
// graph as one group. Sets stats.max_lower and stats.levels; nullopt with `nested` at level 0.
MEMSCHED_DECL std::optional<level_groups> level_to_solve(const partition_context& ctx, bool nested,
                                                         hiremate_partition_options& partition, hiremate_stats& st) {
  const memory_graph& g = ctx.g;
  const hiremate_options& options = ctx.options;
  options.observer.on_phase(ctx.elapsed(), "partition");
  level_groups out{.part = partition_on(g, partition)};
  hiremate_partition_result& part = out.part;
  auto level_solved = [&] { return nested && !part.levels.empty() ? std::min(options.levels - 2, part.levels.size() - 1) : std::size_t{0}; };
  // A long stack of blocks gives a long chain: coarser groups keep its cubic table small.
  // (part.stats.vertices: the forward vertices, the most one group can hold.)
  double partition_seconds = part.stats.seconds;
  while (options.tuning.chain_units > 0 && options.tuning.max_chain_stages > 0 && !part.levels.empty() &&
         part.levels[level_solved()].groups.size() > options.tuning.max_chain_stages && partition.max_lower < part.stats.vertices) {
    partition.max_lower *= 2;
    part = partition_on(g, partition);
    partition_seconds += part.stats.seconds;
  }
  part.stats.seconds = partition_seconds;
  st.max_lower = partition.max_lower;
  out.level = level_solved();
  if (nested && out.level == 0) return std::nullopt;  // the two-level solve of the same grain (hiremate_plan_on's mode 0)
  st.levels = out.level + 2;
  // The largest group the level may have: M^l^(level + 1) vertices (for merge_spans).
  std::size_t level_grain = partition.max_lower;
  for (std::size_t l = 0; l < out.level; ++l) level_grain = std::min(level_grain * partition.max_lower, part.stats.vertices);
  if (!part.levels.empty()) {
    for (auto& grp : part.levels[out.level].groups) out.groups.push_back(std::move(grp.vertices)), out.group_class.push_back(grp.subgraph_class);
  } else {
    std::vector<std::size_t> all;
    for (auto v : g.topological_order())
      if (g.is_forward(v)) all.push_back(v);
    out.groups.push_back(std::move(all));
    out.group_class.push_back(0);
  }
  out.merged = merged_spans{.num_classes = part.classes.size(), .parts = {}};
  if (options.tuning.merge_spans > 0) out.merged = merge_spans(g, out.groups, out.group_class, out.merged.num_classes, options.tuning.merge_spans * level_grain);
  return out;
}

// The lowest level's outputs, indexed by group.
struct lowest_level {
  std::vector<std::size_t> rep_of;  // the first group of each group's class
  std::vector<std::size_t> reps;    // the first group of each class, in group order
  // Per solved group: its problem, its class's options (the outputs-only one included), how its
  // solve went. subs also holds the problems of the reused representatives.
  std::vector<hiremate_subgraph> subs;
  std::vector<std::vector<hiremate_option>> class_options;
  std::vector<solve_summary> summaries;
  // Per representative whose class an earlier partition solved: that problem, and the map of its
  // vertices into subs[r].
  std::vector<const solved_problem*> reused;
  std::vector<std::vector<std::size_t>> reuse_map;
  std::vector<std::size_t> to_solve;  // representatives not reused
  std::vector<std::size_t> unshared;  // groups whose problem turned out different from their class's
  std::vector<std::vector<group_choice>> choices;  // options of every group, in original vertices
};

MEMSCHED_DECL lowest_level lowest_level_of(std::size_t groups, std::size_t num_classes, const std::vector<std::size_t>& group_class) {
  lowest_level out{.rep_of = std::vector<std::size_t>(groups), .reps = {}, .subs = std::vector<hiremate_subgraph>(groups),
                      .class_options = std::vector<std::vector<hiremate_option>>(groups), .summaries = std::vector<solve_summary>(groups),
                      .reused = std::vector<const solved_problem*>(groups, nullptr),
                      .reuse_map = std::vector<std::vector<std::size_t>>(groups), .to_solve = {}, .unshared = {},
                      .choices = std::vector<std::vector<group_choice>>(groups)};
  std::vector<std::size_t> first(num_classes + 1, groups);
  for (std::size_t i = 0; i < groups; ++i) {
    auto& f = first[group_class[i]];
    if (f == groups) f = i, out.reps.push_back(i);
    out.rep_of[i] = f;
  }
  return out;
}

// A class an earlier partition solved (equal canonical hash, and hiremate_subgraph_map accepts
// its first group) takes those options, mapped through reuse_map[r] into subs[r]; the other
// representatives go to to_solve.
MEMSCHED_DECL void find_reused(const memory_graph& g, const level_groups& lg, const solved_store& store, lowest_level& lowest) {
  const auto lock = store.lock();
  for (const std::size_t r : lowest.reps) {
    const auto hash = lg.class_hash(lg.group_class[r]);
    if (hash && store.problems.count(*hash) > 0) {
      hiremate_subgraph sub = make_hiremate_subgraph(g, lg.groups[r]);
      const auto [first_solved, end_solved] = store.problems.equal_range(*hash);
      for (auto it = first_solved; it != end_solved && !lowest.reused[r]; ++it) {
        try {
          lowest.reuse_map[r] = hiremate_subgraph_map(it->second.sub, it->second.group, sub, lg.groups[r]);
          lowest.reused[r] = &it->second;
          lowest.subs[r] = std::move(sub);
        } catch (const std::invalid_argument&) {
          // the same forward class, a different problem: try the next, else solve
        }
      }
    }
    if (!lowest.reused[r]) lowest.to_solve.push_back(r);
  }
}

// One solve_classes run: the lowest level's deadline, the solves still to run and the limits
// every solve starts from.
struct lower_run {
  const partition_context& ctx;
  const hiremate_lower_solver& nested;  // the solver above level 0
  std::size_t level = 0;
  std::optional<double> deadline;  // the lowest level's, in seconds since the call began
  call_deadline default_deadline;  // the same, for the default plans
  std::atomic<std::size_t> solves_left{0};
  unsigned threads = 1;  // run_tasks' count (at most one per task)
  hiremate_lower_limits base_limits;
};

// Each solve gets the time left to the lowest level's deadline divided among the solves still to
// run on each thread.
MEMSCHED_DECL hiremate_lower_limits limits_now(const lower_run& run) {
  hiremate_lower_limits l = run.base_limits;
  if (run.deadline) {
    const double left = std::max(0.0, *run.deadline - run.ctx.elapsed());
    const double per_thread = static_cast<double>(std::max<std::size_t>(1, (run.solves_left.load() + run.threads - 1) / run.threads));
    l.time_limit = std::chrono::duration<double>(left / per_thread);
  }
  return l;
}

// One solve of a subgraph problem at one budget: above level 0 a nested hierarchy, else the
// default plan (heuristics and DTR) or options.lower_solver, which may ask for the default plan.
MEMSCHED_DECL remat_result lower_solve(lower_run& run, const memory_graph& sg, std::int64_t b) {
  --run.solves_left;
  if (run.level > 0) return run.nested(sg, b, limits_now(run));
  const hiremate_options& options = run.ctx.options;
  auto default_plan = [&] { return heuristic_plan(sg, b, options.heuristics, options.dtr, run.default_deadline); };
  if (!options.lower_solver) return default_plan();
  std::optional<double> default_cost;  // of the default plan, when the solver asked for it and it has one
  hiremate_lower_limits limits = limits_now(run);
  limits.default_plan = [&] {
    remat_result r = default_plan();
    if (has_solution(r.status)) default_cost = r.total_cost;
    return r;
  };
  remat_result r = options.lower_solver(sg, b, limits);
  ++run.ctx.lower_counts.calls;
  if (has_solution(r.status) && default_cost && r.total_cost < *default_cost) ++run.ctx.lower_counts.cheaper;
  return r;
}

// Solves the problems of the groups `which` (their subs, class_options and summaries), in
// parallel, within 80% of the time limit (the top level and the expansion are linear).
MEMSCHED_DECL void solve_classes(const partition_context& ctx, const hiremate_lower_solver& nested, std::size_t level,
                                 const std::vector<std::vector<std::size_t>>& groups, const std::vector<std::size_t>& which,
                                 lowest_level& lowest) {
  const hiremate_options& options = ctx.options;
  // Above level 0 each squeezed solve is a whole nested hierarchy: nested_resident_levels of them.
  const std::size_t resident_levels = level > 0 ? options.tuning.nested_resident_levels : options.tuning.resident_levels;
  const hiremate_subgraph_options_config cfg{.budgets = options.tuning.budgets, .max_options = options.tuning.max_options, .resident_levels = resident_levels,
                                            .heuristics = options.heuristics, .serenity_states = options.tuning.serenity_states};
  const std::optional<double> lower_deadline = options.time_limit ? std::optional<double>(0.8 * options.time_limit->count()) : std::nullopt;
  lower_run run{.ctx = ctx, .nested = nested, .level = level, .deadline = lower_deadline,
                   .default_deadline = call_deadline(ctx.deadline.start(),
                                                     lower_deadline ? std::optional(std::chrono::duration<double>(*lower_deadline)) : std::nullopt)};
  const std::size_t per_class = options.tuning.budgets * (1 + resident_levels);
  run.solves_left = which.size() * per_class;
  run.threads = task_threads(options.threads, which.size());
  if (options.max_bytes) run.base_limits.max_bytes = std::max<std::int64_t>(1, *options.max_bytes / static_cast<std::int64_t>(run.threads));
  run_tasks(which.size(), run.threads, [&](std::size_t k) {
    const std::size_t i = which[k];
    hiremate_subgraph_options_config class_cfg = cfg;
    if (lower_deadline) class_cfg.time_limit = std::chrono::duration<double>(std::max(0.0, *lower_deadline - ctx.elapsed()));
    hiremate_subgraph_result r =
        hiremate_subgraph_options(ctx.g, groups[i], class_cfg, [&](const memory_graph& sg, std::int64_t b) { return lower_solve(run, sg, b); });
    // Equal budgets solved once and budgets the time limit left out: no longer to run.
    run.solves_left -= per_class - r.solves;
    lowest.summaries[i] = {.cut = r.stopped, .serenity = r.serenity_lower, .solves = r.solves, .proven = r.proven};
    if (r.options.empty() && r.stopped)
      lowest.class_options[i] = cheap_options(r.sub, options.tuning.max_options);
    else
      lowest.class_options[i] = class_options_of(r.sub, std::move(r.options), options.tuning.ladder_rungs, options.tuning.max_options);
    lowest.subs[i] = std::move(r.sub);
  });
}

// A class's options as a group's choices, mapped through `map` (nullptr: the group is the class's
// problem itself).
MEMSCHED_DECL std::vector<group_choice> to_choices(const std::vector<hiremate_option>& class_opts, const hiremate_subgraph& sub,
                                                   const std::vector<std::size_t>* map) {
  std::vector<group_choice> cs;
  for (const auto& o : class_opts) cs.push_back(choice_of(o, sub, map));
  return cs;
}

// Options of every group, in original vertices (a class's plans mapped to each member); a member
// whose problem differs from its class's (e.g. the gradients differ) goes to `unshared`.
MEMSCHED_DECL void map_choices(const memory_graph& g, const std::vector<std::vector<std::size_t>>& groups, lowest_level& lowest) {
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const std::size_t r = lowest.rep_of[i];
    const solved_problem* earlier = lowest.reused[r];
    if (r == i) {
      lowest.choices[i] = earlier ? to_choices(earlier->options, lowest.subs[i], &lowest.reuse_map[i])
                                  : to_choices(lowest.class_options[i], lowest.subs[i], nullptr);
      continue;
    }
    hiremate_subgraph sub = make_hiremate_subgraph(g, groups[i]);
    try {
      const auto map = earlier ? hiremate_subgraph_map(earlier->sub, earlier->group, sub, groups[i])
                               : hiremate_subgraph_map(lowest.subs[r], groups[r], sub, groups[i]);
      lowest.choices[i] = to_choices(earlier ? earlier->options : lowest.class_options[r], sub, &map);
    } catch (const std::invalid_argument&) {
      lowest.unshared.push_back(i);
    }
  }
}

// The lowest level's statistics and its hiremate_level_report.
MEMSCHED_DECL void lowest_stats(std::size_t level, const lowest_level& lowest, hiremate_stats& st) {
  st.classes_solved = lowest.to_solve.size() + lowest.unshared.size();
  st.classes_reused = lowest.reps.size() - lowest.to_solve.size();
  st.classes_cut = st.classes_serenity = 0;
  hiremate_level_report report{.level = level > 0 ? hiremate_report_level::nested : hiremate_report_level::lowest};
  auto count = [&](const solve_summary& s) {
    st.classes_cut += s.cut;
    st.classes_serenity += s.serenity;
    report.solves += s.solves;
    report.proven += s.proven;
  };
  for (const std::size_t r : lowest.reps) count(lowest.reused[r] ? lowest.reused[r]->summary : lowest.summaries[r]);
  for (const std::size_t i : lowest.unshared) count(lowest.summaries[i]);
  report.cut = st.classes_cut;
  st.level_reports.push_back(std::move(report));
}

// The problems solved here, for the next partitions (the entries `reused` points to stay where
// they are). Moves their subs and class_options.
MEMSCHED_DECL void record_solved(const level_groups& lg, lowest_level& lowest, const solved_store& store) {
  const auto lock = store.lock();
  for (const auto& just_solved : {std::cref(lowest.to_solve), std::cref(lowest.unshared)})
    for (const std::size_t i : just_solved.get())
      if (const auto hash = lg.class_hash(lg.group_class[i]))
        store.problems.emplace(*hash, solved_problem{lg.groups[i], std::move(lowest.subs[i]), std::move(lowest.class_options[i]), lowest.summaries[i]});
}

// The lowest level (phase "lower level"): one solve per class (the first group of it), in
// parallel, unless an earlier partition solved it; then every group's choices.
MEMSCHED_DECL lowest_level solve_lowest(const partition_context& ctx, const hiremate_lower_solver& nested, const level_groups& lg,
                                        const solved_store& store, hiremate_stats& st) {
  ctx.options.observer.on_phase(ctx.elapsed(), "lower level");
  lowest_level lowest = lowest_level_of(lg.groups.size(), lg.merged.num_classes, lg.group_class);
  find_reused(ctx.g, lg, store, lowest);
  solve_classes(ctx, nested, lg.level, lg.groups, lowest.to_solve, lowest);
  map_choices(ctx.g, lg.groups, lowest);
  solve_classes(ctx, nested, lg.level, lg.groups, lowest.unshared, lowest);
  for (auto i : lowest.unshared) lowest.choices[i] = to_choices(lowest.class_options[i], lowest.subs[i], nullptr);
  lowest_stats(lg.level, lowest, st);
  record_solved(lg, lowest, store);
  return lowest;
}

// What the top levels over one partition's groups read and write.
struct top_context {
  const partition_context& ctx;
  const std::vector<std::vector<std::size_t>>& groups;
  std::vector<std::vector<group_choice>>& choices;  // add_regen adds the carries' recomputation
  std::vector<std::size_t> owner;                       // group_owner(g, groups)
  hiremate_stats& stats;
  std::string& why;  // why there is no plan
};

// Each top level: choose under a target budget, expand, simulate; on overshoot, choose again
// under a target lowered by it. When a lowered target leaves no choice, the next one lies half
// way back to the last target that had one (the overshoot of one choice says little about the
// next). `choose(target)` gives a compute sequence or nullopt. The plan within the budget (its
// cost in `cost`, reported to the observer) or an empty result.
template <class Choose>
remat_result repaired(const top_context& top, Choose choose, std::optional<double>& cost) {
  const partition_context& ctx = top.ctx;
  const std::int64_t budget = ctx.budget;
  std::int64_t target = budget;
  std::int64_t overshot = budget;  // the last target whose choice overshot
  std::int64_t no_choice = 0;      // the highest target known to leave no choice
  for (std::size_t round = 0; round <= ctx.options.tuning.repair_rounds && (round == 0 || !ctx.out_of_time()); ++round) {
    auto seq = choose(target);
    if (!seq) {
      if (round == 0) break;
      no_choice = target;
      target += (overshot - target) / 2;
      if (target <= no_choice) break;
      continue;
    }
    remat_result r = finish_strategy_plan(ctx.g, std::move(*seq), budget, true, ctx.deadline.start());
    if (r.status == solve_status::feasible) {
      cost = r.total_cost;
      ctx.report(r.total_cost);
      return r;
    }
    ++top.stats.repair_rounds;
    const std::int64_t over = r.peak_bytes - budget;
    top.why = "the expanded plan's peak " + std::to_string(r.peak_bytes) + " exceeds the budget";
    overshot = target;
    target -= std::max<std::int64_t>(over, std::max<std::int64_t>(1, target / 64));
    if (target <= no_choice) target = no_choice + (overshot - no_choice) / 2;
    if (target <= no_choice || target <= 0) break;
  }
  return remat_result{};
}

// The groups DP's memory units: options.tuning.budget_units, fewer when its tables would exceed max_bytes.
MEMSCHED_DECL std::size_t top_units(const hiremate_options& options, std::size_t groups) {
  std::size_t units = options.tuning.budget_units;
  if (options.max_bytes) {
    // choose_options holds two rows of doubles and, per group and unit, a pick byte and a from index.
    const std::int64_t per = static_cast<std::int64_t>(groups) * 5 + 16;
    units = std::max<std::size_t>(16, std::min<std::size_t>(units, static_cast<std::size_t>(std::max<std::int64_t>(1, *options.max_bytes / per))));
  }
  return units;
}

// The groups top level: one option per group (choose_options), forward parts in group order, backward
// parts in reverse.
MEMSCHED_DECL remat_result top_groups(const top_context& top, std::size_t units) {
  return repaired(
      top,
      [&](std::int64_t target) -> std::optional<std::vector<std::size_t>> {
        const auto choice = choose_options(top.choices, target, units);
        if (!choice) {
          top.why = "no choice of the subgraphs' options fits the budget";
          return std::nullopt;
        }
        const std::size_t n = top.groups.size();
        std::vector<const std::vector<std::size_t>*> parts;
        for (std::size_t i = 0; i < n; ++i) parts.push_back(&top.choices[i][(*choice)[i]].forward);
        for (std::size_t i = n; i-- > 0;) parts.push_back(&top.choices[i][(*choice)[i]].backward);
        auto seq = expand_parts(top.ctx.g, parts, top.owner);
        if (!seq) top.why = "the groups' schedules cannot be put in one order";
        return seq;
      },
      top.stats.groups_cost);
}

// Two models of the pinned values (over their live ranges, and throughout), for the chain top
// level and as the H-ILP's starts, and the cap on their tables.
struct chain_models {
  std::vector<chain_model> models;
  std::int64_t table_cap = 0;
  // Some option can recompute its carry: only then does the second chain solve of each model
  // differ from the first.
  bool any_regen = false;
};

MEMSCHED_DECL chain_models make_chain_models(const top_context& top) {
  const hiremate_options& options = top.ctx.options;
  chain_models out;
  out.table_cap = options.max_bytes.value_or(std::int64_t{1} << 28);
  if (options.tuning.chain_units > 0) {
    out.models.push_back(make_chain(top.ctx.g, top.groups, top.owner));
    if (out.models.front().pinned_ranged > 0) out.models.push_back(pinned_throughout(out.models.front()));
    if (options.tuning.regenerate_carries) add_regen(top.ctx.g, out.models.front(), top.owner, top.choices);
  }
  out.any_regen = std::ranges::any_of(top.choices, [](const auto& stage) {
    return std::ranges::any_of(stage, [](const group_choice& c) { return c.regen_cost.has_value(); });
  });
  return out;
}

// One chain schedule under `target`, expanded; nullopt (and why in `chain_why`) when there is none.
MEMSCHED_DECL std::optional<std::vector<std::size_t>> chain_choice(const top_context& top, const chain_model& chain, std::int64_t table_cap,
                                                                   bool regen, std::int64_t target, std::string& chain_why) {
  const partition_context& ctx = top.ctx;
  auto out_of_time = [&ctx] { return ctx.out_of_time(); };
  const auto steps = chain_schedule(chain, top.choices, target, ctx.options.tuning.chain_units, table_cap, out_of_time, regen);
  if (!steps) {
    chain_why = ctx.out_of_time() ? "the time limit stopped the chain schedule" : "no chain schedule fits the budget";
    return std::nullopt;
  }
  std::vector<const std::vector<std::size_t>*> parts;
  for (const auto& step : *steps) {
    const auto& c = top.choices[step.stage][step.option];
    using kind = chain_step::kind;
    parts.push_back(step.what == kind::forward_only ? chain.stages[step.stage].forward
                    : step.what == kind::forward    ? &c.forward
                    : step.what == kind::regen      ? &c.regen
                                                    : &c.backward);
  }
  auto seq = expand_parts(ctx.g, parts, top.owner);
  if (!seq) chain_why = "the chain schedule cannot be put in one order";
  return seq;
}

// The chain top level (phase "top level (chain)"): the cheapest expanded plan of the two models,
// each with and without recomputed carries (the spare-memory pass after the expansion favours
// either, depending on the graph and the budget, so both are expanded and simulated). Replaces
// `hier` when cheaper.
MEMSCHED_DECL void top_chain(const top_context& top, const chain_models& chains, remat_result& hier) {
  const partition_context& ctx = top.ctx;
  ctx.options.observer.on_phase(ctx.elapsed(), "top level (chain)");
  std::string chain_why;
  remat_result by_chain;
  for (const chain_model& chain : chains.models)
    for (const bool regen : {false, true}) {
      if (ctx.out_of_time() || (regen && !chains.any_regen)) break;
      std::optional<double> cost;
      remat_result r = repaired(
          top, [&](std::int64_t target) { return chain_choice(top, chain, chains.table_cap, regen, target, chain_why); }, cost);
      if (r.status == solve_status::feasible && (by_chain.status != solve_status::feasible || r.total_cost < by_chain.total_cost)) {
        by_chain = std::move(r);
        top.stats.chain_cost = cost;
      }
    }
  if (by_chain.status == solve_status::feasible && (hier.status != solve_status::feasible || by_chain.total_cost < hier.total_cost)) {
    hier = std::move(by_chain);
    top.stats.top_method = hiremate_top_method::chain;
  } else if (hier.status != solve_status::feasible && !chain_why.empty()) {
    top.why = top.why.empty() ? chain_why : top.why + "; " + chain_why;
  }
}

// A schedule's vertex lists in order.
MEMSCHED_DECL std::vector<const std::vector<std::size_t>*> hilp_parts(const hilp_problem& problem, const hilp_schedule& schedule) {
  std::vector<const std::vector<std::size_t>*> parts;
  for (const auto& stage : schedule)
    for (const auto& [k, o] : stage) parts.push_back(problem.variants[k][o].vertices);
  return parts;
}

// The H-ILP's starts: the other top levels' schedules at `target`.
MEMSCHED_DECL std::vector<hilp_schedule> hilp_starts(const top_context& top, const chain_models& chains, std::size_t units,
                                                     const hilp_problem& problem, std::int64_t target) {
  const partition_context& ctx = top.ctx;
  auto out_of_time = [&ctx] { return ctx.out_of_time(); };
  std::vector<hilp_schedule> starts;
  if (auto c = choose_options(top.choices, target, units)) starts.push_back(hilp_schedule_of_choice(top.groups.size(), *c));
  for (const auto& chain : chains.models)
    if (auto steps = chain_schedule(chain, top.choices, target, ctx.options.tuning.chain_units, chains.table_cap, out_of_time))
      if (auto s = hilp_schedule_of_chain(problem, *steps)) starts.push_back(std::move(*s));
  return starts;
}

// One H-ILP solve under `target` (within the time left), its statistics, expanded; nullopt when
// the backend gave nothing and no start is left to fall back on.
MEMSCHED_DECL std::optional<std::vector<std::size_t>> hilp_choice(const top_context& top, const chain_models& chains, std::size_t units,
                                                                  const hilp_problem& problem, std::int64_t target) {
  const partition_context& ctx = top.ctx;
  const hiremate_options& options = ctx.options;
  hiremate_stats& st = top.stats;
  const std::vector<hilp_schedule> starts = hilp_starts(top, chains, units, problem, target);
  solver_options so = options.top_solver_options;
  if (ctx.deadline.limited()) {
    const double left = backend_limit_within(ctx.deadline.left());
    if (left <= 0) return std::nullopt;
    so.time_limit = std::chrono::duration<double>(so.time_limit ? std::min(so.time_limit->count(), left) : left);
  }
  // The starts' simulated peaks calibrate the model's memory (see solve_hilp).
  std::vector<std::int64_t> real_peaks;
  for (const auto& s : starts) {
    const auto seq = expand_parts(ctx.g, hilp_parts(problem, s), top.owner);
    real_peaks.push_back(seq ? sequence_peak_cost(ctx.g, *seq).first : -1);
  }
  const auto outcome = solve_hilp(problem, target, starts, real_peaks, options.top_solver, so,
                                     options.max_bytes ? static_cast<std::uint64_t>(*options.max_bytes) : default_max_bytes(),
                                     options.tuning.hilp_free_values);
  if (!outcome.message.empty()) top.why = top.why.empty() ? outcome.message : top.why + "; " + outcome.message;
  st.hilp_status = outcome.status;
  st.hilp_variables = outcome.variables, st.hilp_constraints = outcome.constraints;
  st.hilp_budget_raised = outcome.budget_raised;
  st.hilp_start_objective = outcome.start_objective;
  st.hilp_objective = outcome.objective, st.hilp_bound = outcome.bound;
  // No answer although the backend ran (no start fits the model: their expanded plans overshoot
  // the budget): the first start, so that the simulator's overshoot lowers the target as it does
  // for the other top levels.
  if (!outcome.schedule && (starts.empty() || outcome.status == solve_status::unsupported || outcome.status == solve_status::error))
    return std::nullopt;
  return expand_parts(ctx.g, hilp_parts(problem, outcome.schedule ? *outcome.schedule : starts.front()), top.owner);
}

// The H-ILP top level (phase "top level (H-ILP)"), started from the other two. Replaces `hier`
// when cheaper.
MEMSCHED_DECL void top_hilp(const top_context& top, const chain_models& chains, std::size_t units, remat_result& hier) {
  const partition_context& ctx = top.ctx;
  ctx.options.observer.on_phase(ctx.elapsed(), "top level (H-ILP)");
  const auto hilp_start = std::chrono::steady_clock::now();
  const auto problem = make_hilp(ctx.g, top.groups, top.owner, top.choices);
  std::optional<double> cost;
  remat_result r;
  if (problem)
    r = repaired(top, [&](std::int64_t target) { return hilp_choice(top, chains, units, *problem, target); }, cost);
  top.stats.hilp_seconds = seconds_since(hilp_start);
  if (r.status == solve_status::feasible) {
    top.stats.hilp_cost = cost;
    if (hier.status != solve_status::feasible || r.total_cost < hier.total_cost) {
      hier = std::move(r);
      top.stats.top_method = hiremate_top_method::hilp;
    }
  }
}

// The top levels (phase "top level"): choose, expand, simulate; tighten on overshoot. The
// cheapest plan of the groups DP, the chain and (with options.top_solver) the H-ILP goes to
// out.plan, with its hiremate_level_report.
MEMSCHED_DECL void plan_top(const partition_context& ctx, const std::vector<std::vector<std::size_t>>& groups,
                            std::vector<std::vector<group_choice>>& choices, partition_outcome& out) {
  const auto top_start = std::chrono::steady_clock::now();
  const top_context top{.ctx = ctx, .groups = groups, .choices = choices, .owner = group_owner(ctx.g, groups), .stats = out.stats, .why = out.why};
  hiremate_stats& st = out.stats;
  remat_result& hier = out.plan;
  const bool every_group = std::ranges::none_of(choices, [](const auto& c) { return c.empty(); });
  if (!every_group) out.why = "a subgraph has no option";
  if (every_group) {
    ctx.options.observer.on_phase(ctx.elapsed(), "top level");
    const std::size_t units = top_units(ctx.options, groups.size());
    hier = top_groups(top, units);
    if (hier.status == solve_status::feasible) st.top_method = hiremate_top_method::groups;
    const chain_models chains = make_chain_models(top);
    if (ctx.options.tuning.chain_units > 0 && !ctx.out_of_time()) top_chain(top, chains, hier);
    if (ctx.options.top_solver && groups.size() <= ctx.options.tuning.hilp_max_groups && !ctx.out_of_time()) top_hilp(top, chains, units, hier);
    if (hier.status == solve_status::feasible) {
      st.hierarchy_cost = hier.total_cost;
      // The DPs are exact over their models (tests: brute force); the H-ILP when its backend proved it.
      const bool proven = st.top_method != hiremate_top_method::hilp || st.hilp_status == solve_status::optimal;
      st.level_reports.push_back(hiremate_level_report{
          .level = hiremate_report_level::top, .method = st.top_method, .solves = 1, .proven = proven ? 1U : 0U, .cut = ctx.out_of_time() ? 1U : 0U});
    }
  }
  st.top_seconds = seconds_since(top_start);
}

// The hierarchy over one partition (see partition_outcome). `nested` (options.levels > 2): the
// solver of the groups of level options.levels - 2 of the partition (its highest level when it
// has fewer), a hierarchy of one level less.
MEMSCHED_DECL std::optional<partition_outcome> plan_over_partition(const partition_context& ctx, const hiremate_lower_solver& nested,
                                                                   hiremate_partition_options partition,
                                                                   const std::vector<std::vector<std::vector<std::size_t>>>& earlier_groups,
                                                                   const solved_store& store) {
  partition_outcome out;
  hiremate_stats& st = out.stats;
  std::optional<level_groups> lg = level_to_solve(ctx, static_cast<bool>(nested), partition, st);
  if (!lg) return std::nullopt;
  if (std::ranges::find(earlier_groups, lg->groups) != earlier_groups.end()) {
    out.repeated = true;
    return out;
  }
  st.partition = std::move(lg->part.stats);
  st.groups = lg->groups.size();
  const auto lower_start = std::chrono::steady_clock::now();
  lowest_level lowest = solve_lowest(ctx, nested, *lg, store, st);
  st.lower_seconds = seconds_since(lower_start);
  plan_top(ctx, lg->groups, lowest.choices, out);
  out.groups = std::move(lg->groups);
  return out;
}

MEMSCHED_DECL levels_result plan_levels(const memory_graph& g, std::int64_t budget, const hiremate_options& options,
                                               hiremate_partition_options partition, std::chrono::steady_clock::time_point start,
                                               const nesting_state* nesting);

// More than two levels: the groups of a higher partition level are solved per budget by
// hierarchies of one level less (the paper's recursion; the innermost uses lower_solver). Called
// only within the call that made it (plan_over_partition), so it may refer to `counts`.
MEMSCHED_DECL hiremate_lower_solver nested_solver(const hiremate_options& options, lower_call_counts& counts) {
  hiremate_options inner = options;
  inner.levels = options.levels - 1;
  inner.tuning.partitions = options.tuning.nested_partitions;
  inner.tuning.chain_units = options.tuning.nested_chain_units;
  inner.threads = 1;  // the classes are already solved in parallel
  inner.observer = {};
  inner.partition.ops.clear();  // indexed by the vertices of `g`, not of a subgraph problem
  return [inner = std::move(inner), shared = std::make_shared<problem_cache>(), counts = &counts](
             const memory_graph& sub, std::int64_t sub_budget, const hiremate_lower_limits& limits) {
    ++counts->nested;
    hiremate_options one = inner;
    one.time_limit = limits.time_limit;
    one.max_bytes = limits.max_bytes;
    const nesting_state within{*shared, *counts};
    levels_result r = plan_levels(sub, sub_budget, one, one.partition, std::chrono::steady_clock::now(), &within);
    counts->nested_partitions += r.stats.partitions_tried;
    return std::move(r.result);
  };
}

// The start: the best heuristic, DTR and the eviction greedy on the whole graph. It reads only
// the graph, so with a second thread it runs beside the hierarchy (on a long GPT stack it takes
// longer than the hierarchy at low budgets) and is taken when the hierarchy is done; the same
// plans either way (nothing else reads it), its incumbent reported when taken.
struct heuristic_start {
  remat_result plan;
  std::string method;  // "best-heuristic", "dtr:<score>" or "eviction greedy <k>" (result.stats.start_source)
  std::optional<double> cost;
  double seconds = 0;
  bool beside = false;  // runs in `thread`
  std::exception_ptr error;
  std::jthread thread;  // last: joins before the rest goes, also when the hierarchy throws
};

// Takes the start's plan (joins its thread): its cost, method and incumbent.
MEMSCHED_DECL void take_start(const partition_context& ctx, heuristic_start& s) {
  if (s.thread.joinable()) s.thread.join();
  if (s.error) std::rethrow_exception(s.error);
  s.seconds = s.plan.stats.seconds;
  if (s.plan.status != solve_status::feasible) return;
  s.cost = s.plan.total_cost;
  s.method = s.plan.stats.method;
  ctx.report(s.plan.total_cost);
}

// Runs the start (phase "heuristic start") when options.heuristic_start: beside the hierarchy
// with a second thread (take_start takes it later), else now. A nested hierarchy (not
// `outermost`) runs DTR in it only with nested_start_dtr.
MEMSCHED_DECL void begin_start(const partition_context& ctx, bool outermost, heuristic_start& s) {
  const hiremate_options& options = ctx.options;
  if (!options.heuristic_start) return;
  const bool start_dtr = options.dtr && (outermost || options.tuning.nested_start_dtr);
  auto run = [&ctx, &s, start_dtr] {
    const hiremate_options& o = ctx.options;
    // At most half the time limit: the lowest level's deadline (80%) comes after it.
    const std::optional<std::chrono::duration<double>> share = o.time_limit ? std::optional(*o.time_limit * 0.5) : std::nullopt;
    try {
      s.plan = start_plan(ctx.g, ctx.budget, o.heuristics, start_dtr, call_deadline(ctx.deadline.start(), share));
    } catch (...) {
      s.error = std::current_exception();
    }
  };
  s.beside = task_threads(options.threads, 2) > 1;
  options.observer.on_phase(ctx.elapsed(), "heuristic start");
  if (s.beside) {
    s.thread = std::jthread(run);
  } else {
    run();
    take_start(ctx, s);
  }
}

// The hierarchy's plan: the cheapest over the partitions tried, with the statistics of its
// partition.
struct hierarchy_plan {
  remat_result plan;
  std::string why;  // why there is no plan
  std::size_t tried = 0;
  double seconds = 0;
};

// The hierarchy over M^l, 2 M^l, ... (options.tuning.partitions of them): the cheapest expanded plan is
// the hierarchy's, with the statistics of its partition (in `st`). A grain the max_chain_stages
// cap already coarsened past is skipped, as is a partition whose groups an earlier one had.
// Later partitions start only within half the time limit, and take the options of the problems
// earlier ones solved (in a nested hierarchy also those the other budgets' hierarchies solved:
// `nesting`). With more than two levels each grain is solved both ways (mode 0: two levels,
// mode 1: `nested` over a higher partition level), so that more levels never lose a plan the
// two-level solve finds; each mode keeps its own solved problems and grains. With
// also_full_rounds each grain is also partitioned with every round finished (rounds 1), each
// kind of rounds with its own grains, so that either kind's plan is found as it would be alone.
MEMSCHED_DECL hierarchy_plan try_partitions(const partition_context& ctx, const hiremate_lower_solver& nested,
                                            hiremate_partition_options partition, const nesting_state* nesting, hiremate_stats& st) {
  const hiremate_options& options = ctx.options;
  const call_deadline& deadline = ctx.deadline;
  hierarchy_plan hier;
  const std::size_t modes = nested ? 2 : 1;
  const bool both_rounds = options.tuning.also_full_rounds && partition.stop_at_max_top && nesting == nullptr;
  std::array<std::vector<std::vector<std::vector<std::size_t>>>, 2> earlier_groups;  // per mode
  std::array<solved_problems, 2> own_solved;
  std::array<solved_problems, 2>& solved = nesting ? nesting->cache.problems : own_solved;
  std::array<std::array<std::size_t, 2>, 2> solved_max_lower{};  // per mode and rounds: the coarsest M^l solved so far
  const std::size_t base_max_lower = partition.max_lower;
  const bool given_stop = partition.stop_at_max_top;
  const auto forward_vertices = static_cast<std::size_t>(std::ranges::count_if(ctx.g.topological_order(), [&](auto v) { return ctx.g.is_forward(v); }));
  for (std::size_t k = 0; k < options.tuning.partitions; ++k) {
    partition.max_lower = base_max_lower << k;
    if (k > 0 && deadline.limited() && ctx.elapsed() >= 0.5 * deadline.limit()) break;
    for (std::size_t rounds = 0; rounds < (both_rounds ? 2U : 1U); ++rounds) {
      if (rounds > 0 && deadline.limited() && ctx.elapsed() >= 0.5 * deadline.limit()) break;
      partition.stop_at_max_top = rounds == 0 ? given_stop : false;
      for (std::size_t mode = 0; mode < modes; ++mode) {
        std::size_t& coarsest = solved_max_lower[mode][rounds];
        if (k > 0) {
          if (partition.max_lower <= coarsest) continue;
          if (coarsest >= forward_vertices) continue;  // one group could hold the whole forward graph
        }
        const double partition_start = ctx.elapsed();
        const solved_store store{.problems = solved[mode], .mutex = nesting ? &nesting->cache.mutex : nullptr};
        auto one = plan_over_partition(ctx, mode == 1 ? nested : hiremate_lower_solver{}, partition, earlier_groups[mode], store);
        hier.seconds += ctx.elapsed() - partition_start;
        if (!one) continue;  // a partition without the level: nothing to solve
        coarsest = one->stats.max_lower;  // raised for max_chain_stages
        if (one->repeated) continue;      // an earlier partition's groups: nothing new to solve
        ++hier.tried;
        const bool cheaper = one->plan.status == solve_status::feasible &&
                             (hier.plan.status != solve_status::feasible || one->plan.total_cost < hier.plan.total_cost);
        if (hier.tried == 1 || cheaper) {
          st = std::move(one->stats);
          hier.plan = std::move(one->plan);
          hier.why = std::move(one->why);
        }
        earlier_groups[mode].push_back(std::move(one->groups));
      }
    }
  }
  return hier;
}

// The call's message: the hierarchy's size, where the plan came from, why the hierarchy has none,
// and which levels' solves were proven.
MEMSCHED_DECL std::string plan_message(const hiremate_stats& st, const std::string& start_method, bool hier_ok, const std::string& why) {
  std::string msg = "hiremate: " + std::to_string(st.groups) + " groups, " + std::to_string(st.classes_solved) + " subgraph problems solved, " +
                    std::to_string(st.partition.levels) + " partition levels";
  if (st.classes_cut > 0) msg += "; the time limit cut " + std::to_string(st.classes_cut) + " subgraph problems short";
  if (!st.source.empty()) msg += "; plan from the " + st.source + (st.source == "heuristic" ? " (" + start_method + ")" : "");
  if (!hier_ok && !why.empty()) msg += "; hierarchy: " + why;
  if (!st.level_reports.empty()) {
    msg += "; solves proven for their own problems:";
    for (const auto& l : st.level_reports)
      msg += " " + std::string(to_string(l.level)) + " " + std::to_string(l.proven) + "/" + std::to_string(l.solves);
  }
  return msg;
}

// The cheaper of the hierarchy's and the start's plans (the hierarchy's on a tie), its source, and
// the call's message; `infeasible` when neither has a plan and the budget is below what every
// plan needs.
MEMSCHED_DECL void pick_plan(const partition_context& ctx, heuristic_start& heur, hierarchy_plan& hier, levels_result& out) {
  hiremate_stats& st = out.stats;
  const bool hier_ok = hier.plan.status == solve_status::feasible;
  const bool heur_ok = heur.plan.status == solve_status::feasible;
  if (hier_ok && (!heur_ok || hier.plan.total_cost <= heur.plan.total_cost)) {
    out.result = std::move(hier.plan);
    st.source = "hierarchy";
  } else if (heur_ok) {
    out.result = std::move(heur.plan);
    st.source = "heuristic";
  } else {
    out.result = remat_result{};
    if (auto lb = budget_below_lower_bound(ctx.g, ctx.budget)) {
      out.result.status = solve_status::infeasible;
      hier.why = *lb;
    }
  }
  out.result.stats.seconds = ctx.elapsed();
  out.result.stats.start_source = heur_ok ? heur.method : "";
  if (heur_ok) out.result.stats.start_cost = *heur.cost;
  out.result.message = plan_message(st, heur.method, hier_ok, hier.why);
}

// hiremate_plan_on, as the outermost call (`nesting` nullptr, its stats report the counts) or as a
// nested hierarchy: then it shares the problems solved with the other nested hierarchies of its
// level and counts the lower solver's calls into the outermost call's counts.
MEMSCHED_DEF levels_result plan_levels(const memory_graph& g, std::int64_t budget, const hiremate_options& options,
                                              hiremate_partition_options partition, std::chrono::steady_clock::time_point start,
                                              const nesting_state* nesting) {
  if (!g.has_training_roles()) throw std::invalid_argument("hiremate_plan: the graph has no training roles (make_training_graph first)");
  const call_deadline deadline(start, options.time_limit);
  levels_result out;
  lower_call_counts own_counts;
  lower_call_counts& lower_counts = nesting ? nesting->counts : own_counts;
  const hiremate_lower_solver nested = options.levels > 2 ? nested_solver(options, lower_counts) : hiremate_lower_solver{};
  std::optional<double> best_reported;
  const partition_context ctx{
      .g = g, .budget = budget, .options = options, .deadline = deadline, .best_reported = best_reported, .lower_counts = lower_counts};
  hiremate_stats& st = out.stats;
  heuristic_start heur;
  begin_start(ctx, nesting == nullptr, heur);
  hierarchy_plan hier = try_partitions(ctx, nested, std::move(partition), nesting, st);
  if (heur.beside) take_start(ctx, heur);
  st.heuristic_cost = heur.cost;
  st.heuristic_seconds = heur.seconds;
  st.partitions_tried = hier.tried;
  st.hierarchy_seconds = hier.seconds;
  st.lower_solver_calls = lower_counts.calls.load();
  st.nested_hierarchies = lower_counts.nested.load();
  st.nested_partitions_tried = lower_counts.nested_partitions.load();
  st.lower_solver_cheaper = lower_counts.cheaper.load();
  pick_plan(ctx, heur, hier, out);
  return out;
}

}  // namespace memsched::detail::hiremate

namespace memsched::detail {

MEMSCHED_DEF remat_result hiremate_plan_on(const memory_graph& g, std::int64_t budget, const hiremate_options& options,
                                        hiremate_partition_options partition, std::chrono::steady_clock::time_point start) {
  // No step ever holds more than every value and the largest workspace (total_bytes bounds it):
  // a budget above that constrains nothing, and the tables in units of the budget stay small.
  hiremate::levels_result r =
      hiremate::plan_levels(g, std::min(budget, std::max<std::int64_t>(g.total_bytes(), 0)), options, std::move(partition), start, nullptr);
  r.result.stats.hiremate = std::move(r.stats);
  return std::move(r.result);
}

}  // namespace memsched::detail
