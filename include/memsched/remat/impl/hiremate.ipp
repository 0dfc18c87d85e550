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

namespace memsched::detail {

// Subgraph problems solved by earlier partitions (hiremate_plan_on's), by their class's canonical
// hash: a group of a later partition whose problem maps onto one of them (hiremate_subgraph_map,
// an exact check) takes its options instead of solving again. Node-based, so entries stay put
// while later partitions add theirs.
// How one subgraph problem's solve went (from its hiremate_subgraph_result), for the statistics.
struct hm_solve_summary {
  bool cut = false;       // the time limit cut its solve short (stopped)
  bool serenity = false;  // its options hold the one along Serenity's order (serenity_lower)
  std::size_t solves = 0, proven = 0;
};
struct hm_solved_problem {
  std::vector<std::size_t> group;  // forward vertices, canonical order
  hiremate_subgraph sub;
  std::vector<hiremate_option> options;
  hm_solve_summary summary;
};
using hm_solved_problems = std::unordered_multimap<std::uint64_t, hm_solved_problem>;

// The problems solved by every nested hierarchy of one call with options.levels > 2, per mode
// (see hm_plan_levels): the budgets of one class are solved by one hierarchy each, on the same
// subgraph problem, and their inner classes' options do not depend on the budget, so each is
// solved once. Classes are solved in parallel: lookups and insertions hold the mutex (entries
// never change once inserted, and the multimap's nodes stay put).
struct hm_problem_cache {
  std::mutex mutex;
  std::array<hm_solved_problems, 2> problems;
};

// hiremate_stats::lower_solver_calls, lower_solver_cheaper, nested_hierarchies and
// nested_partitions_tried of one hiremate_plan call: one set, created by the outermost
// hm_plan_levels and counted into by every partition it tries and every nested hierarchy (from
// several threads).
struct hm_lower_counts {
  std::atomic<std::size_t> calls{0}, cheaper{0}, nested{0}, nested_partitions{0};
};

// What a nested hierarchy shares with the call that runs it (hm_plan_levels): the problems solved
// by the hierarchies of its level and the counts of the outermost call.
struct hm_nesting {
  hm_problem_cache& cache;
  hm_lower_counts& counts;
};

// The hierarchy over one partition (hiremate_plan_on's partitions): partition, lowest level, top
// levels. `repeated` when merging leaves the groups of one of `earlier_groups` (partitions solved
// before): nothing is solved, and stats.max_lower says which M^l the partition reached (raised for
// max_chain_stages), so that the caller skips the grains that would reach it again. nullopt with
// `nested` when the partition has only level 0 (the two-level solve covers it).
struct hm_partition_outcome {
  remat_result plan;  // status feasible when within the budget
  hiremate_stats stats;
  std::string why;    // why there is no plan
  std::vector<std::vector<std::size_t>> groups;
  bool repeated = false;
};
// `nested` (options.levels > 2): the solver of the groups of level options.levels - 2 of the
// partition (its highest level when it has fewer), a hierarchy of one level less.
MEMSCHED_DECL std::optional<hm_partition_outcome> hm_plan_over_partition(const memory_graph& g, std::int64_t budget, const hiremate_options& options,
                                                                    const hiremate_lower_solver& nested,
                                                                    hiremate_partition_options partition, const call_deadline& deadline,
                                                                    const std::vector<std::vector<std::vector<std::size_t>>>& earlier_groups,
                                                                    hm_solved_problems& solved, std::mutex* solved_mutex,
                                                                    std::optional<double>& best_reported, hm_lower_counts& lower_counts) {
  auto lock_solved = [&] { return solved_mutex ? std::unique_lock<std::mutex>(*solved_mutex) : std::unique_lock<std::mutex>(); };
  using clock = std::chrono::steady_clock;
  const auto start = deadline.start();
  auto elapsed = [&] { return deadline.elapsed(); };
  auto out_of_time = [&] { return deadline.passed(); };
  hm_partition_outcome out;
  hiremate_stats& st = out.stats;

  // H-Partition; the level solved is level 0, or with `nested` level options.levels - 2 when the
  // partition has it (else its highest), or the whole forward graph as one group.
  options.observer.on_phase(elapsed(), "partition");
  hiremate_partition_result part = hm_partition_on(g, partition);
  auto level_solved = [&] { return nested && !part.levels.empty() ? std::min(options.levels - 2, part.levels.size() - 1) : std::size_t{0}; };
  // A long stack of blocks gives a long chain: coarser groups keep its cubic table small.
  // (part.stats.vertices: the forward vertices, the most one group can hold.)
  double partition_seconds = part.stats.seconds;
  while (options.chain_units > 0 && options.max_chain_stages > 0 && !part.levels.empty() &&
         part.levels[level_solved()].groups.size() > options.max_chain_stages && partition.max_lower < part.stats.vertices) {
    partition.max_lower *= 2;
    part = hm_partition_on(g, partition);
    partition_seconds += part.stats.seconds;
  }
  part.stats.seconds = partition_seconds;
  st.max_lower = partition.max_lower;
  const std::size_t level = level_solved();
  if (nested && level == 0) return std::nullopt;  // the two-level solve of the same grain (hiremate_plan_on's mode 0)
  st.levels = level + 2;
  // The largest group the level may have: M^l^(level + 1) vertices (for merge_spans).
  std::size_t level_grain = partition.max_lower;
  for (std::size_t l = 0; l < level; ++l) level_grain = std::min(level_grain * partition.max_lower, part.stats.vertices);
  std::vector<std::vector<std::size_t>> groups;  // forward vertices, canonical order
  std::vector<std::size_t> group_class;
  if (!part.levels.empty()) {
    for (auto& grp : part.levels[level].groups) groups.push_back(std::move(grp.vertices)), group_class.push_back(grp.subgraph_class);
  } else {
    std::vector<std::size_t> all;
    for (auto v : g.topological_order())
      if (g.is_forward(v)) all.push_back(v);
    groups.push_back(std::move(all));
    group_class.push_back(0);
  }
  detail::hm_merged_spans merged{.num_classes = part.classes.size(), .parts = {}};
  if (options.merge_spans > 0) merged = detail::hm_merge_spans(g, groups, group_class, merged.num_classes, options.merge_spans * level_grain);
  const std::size_t num_classes = merged.num_classes;
  if (std::ranges::find(earlier_groups, groups) != earlier_groups.end()) {
    out.repeated = true;
    return out;
  }
  st.partition = std::move(part.stats);
  st.groups = groups.size();

  // Lowest level: one solve per class (the first group of it), in parallel.
  const auto lower_start = clock::now();
  options.observer.on_phase(elapsed(), "lower level");
  std::vector<std::size_t> rep_of(groups.size());
  std::vector<std::size_t> reps;
  {
    std::vector<std::size_t> first(num_classes + 1, groups.size());
    for (std::size_t i = 0; i < groups.size(); ++i) {
      auto& f = first[group_class[i]];
      if (f == groups.size()) f = i, reps.push_back(i);
      rep_of[i] = f;
    }
  }
  // Above level 0 each squeezed solve is a whole nested hierarchy: nested_resident_levels of them.
  const std::size_t resident_levels = level > 0 ? options.nested_resident_levels : options.resident_levels;
  const hiremate_subgraph_options_config cfg{.budgets = options.budgets, .max_options = options.max_options, .resident_levels = resident_levels,
                                            .heuristics = options.heuristics, .serenity_states = options.serenity_states};
  // The lowest level may use 80% of the time limit (the top level and the expansion are linear).
  const std::optional<double> lower_deadline = options.time_limit ? std::optional<double>(0.8 * options.time_limit->count()) : std::nullopt;
  const detail::call_deadline lower_call_deadline(
      start, lower_deadline ? std::optional(std::chrono::duration<double>(*lower_deadline)) : std::nullopt);
  std::atomic<std::size_t> solves_left{0};
  unsigned threads = 1;  // of the current solve_all: run_tasks' count (at most one per task)
  hiremate_lower_limits base_limits;
  // Each solve gets the time left to the lowest level's deadline divided among the solves still to
  // run on each thread.
  auto limits_now = [&] {
    hiremate_lower_limits l = base_limits;
    if (lower_deadline) {
      const double left = std::max(0.0, *lower_deadline - elapsed());
      const double per_thread = static_cast<double>(std::max<std::size_t>(1, (solves_left.load() + threads - 1) / threads));
      l.time_limit = std::chrono::duration<double>(left / per_thread);
    }
    return l;
  };
  // Per solved group: its problem and its class's options (the outputs-only one included).
  std::vector<hiremate_subgraph> subs(groups.size());
  std::vector<std::vector<hiremate_option>> class_options(groups.size());
  std::vector<hm_solve_summary> summaries(groups.size());  // per solved group
  auto solve_all = [&](const std::vector<std::size_t>& which) {
    const std::size_t per_class = options.budgets * (1 + resident_levels);
    solves_left = which.size() * per_class;
    threads = detail::task_threads(options.threads, which.size());
    base_limits.max_bytes.reset();
    if (options.max_bytes) base_limits.max_bytes = std::max<std::int64_t>(1, *options.max_bytes / static_cast<std::int64_t>(threads));
    detail::run_tasks(which.size(), threads, [&](std::size_t k) {
      const std::size_t i = which[k];
      hiremate_subgraph_options_config class_cfg = cfg;
      if (lower_deadline) class_cfg.time_limit = std::chrono::duration<double>(std::max(0.0, *lower_deadline - elapsed()));
      auto solve = [&](const memory_graph& sg, std::int64_t b) {
        --solves_left;
        if (level > 0) return nested(sg, b, limits_now());
        auto default_plan = [&] { return detail::hm_heuristic_plan(sg, b, options.heuristics, options.dtr, lower_call_deadline); };
        if (!options.lower_solver) return default_plan();
        std::optional<double> default_cost;  // of the default plan, when the solver asked for it and it has one
        hiremate_lower_limits limits = limits_now();
        limits.default_plan = [&] {
          remat_result r = default_plan();
          if (has_solution(r.status)) default_cost = r.total_cost;
          return r;
        };
        remat_result r = options.lower_solver(sg, b, limits);
        ++lower_counts.calls;
        if (has_solution(r.status) && default_cost && r.total_cost < *default_cost) ++lower_counts.cheaper;
        return r;
      };
      hiremate_subgraph_result r = hiremate_subgraph_options(g, groups[i], class_cfg, solve);
      // Equal budgets solved once and budgets the time limit left out: no longer to run.
      solves_left -= per_class - r.solves;
      summaries[i] = {.cut = r.stopped, .serenity = r.serenity_lower, .solves = r.solves, .proven = r.proven};
      if (r.options.empty() && r.stopped)
        class_options[i] = detail::hm_cheap_options(r.sub, options.max_options);
      else
        class_options[i] = detail::hm_class_options(r.sub, std::move(r.options), options.ladder_rungs, options.max_options);
      subs[i] = std::move(r.sub);
    });
  };
  // A class an earlier partition solved (equal canonical hash, and hiremate_subgraph_map accepts
  // its first group) takes those options, mapped through reuse_map[r] into subs[r].
  // A merged span's hash mixes its parts' hashes (equal hashes only propose a problem to compare).
  auto class_hash = [&](std::size_t c) -> std::optional<std::uint64_t> {
    if (c < part.classes.size()) return part.classes[c].hash;
    const std::size_t k = c - part.classes.size();
    if (k >= merged.parts.size()) return std::nullopt;  // the whole forward graph as one group
    std::uint64_t h = 0x6d657267656473ULL;
    for (const std::size_t p : merged.parts[k]) h = detail::hm_mix(h, part.classes[p].hash);
    return h;
  };
  std::vector<const hm_solved_problem*> reused(groups.size(), nullptr);
  std::vector<std::vector<std::size_t>> reuse_map(groups.size());
  std::vector<std::size_t> to_solve;
  auto lookup_lock = lock_solved();
  for (const std::size_t r : reps) {
    const auto hash = class_hash(group_class[r]);
    if (hash && solved.count(*hash) > 0) {
      hiremate_subgraph sub = make_hiremate_subgraph(g, groups[r]);
      const auto [first_solved, end_solved] = solved.equal_range(*hash);
      for (auto it = first_solved; it != end_solved && !reused[r]; ++it) {
        try {
          reuse_map[r] = hiremate_subgraph_map(it->second.sub, it->second.group, sub, groups[r]);
          reused[r] = &it->second;
          subs[r] = std::move(sub);
        } catch (const std::invalid_argument&) {
          // the same forward class, a different problem: try the next, else solve
        }
      }
    }
    if (!reused[r]) to_solve.push_back(r);
  }
  if (lookup_lock.owns_lock()) lookup_lock.unlock();
  solve_all(to_solve);
  // Options of every group, in original vertices (a class's plans mapped to each member).
  std::vector<std::vector<detail::hm_group_choice>> choices(groups.size());
  std::vector<std::size_t> unshared;  // groups whose problem turned out different from their class's
  auto to_choices = [&](const std::vector<hiremate_option>& class_opts, const hiremate_subgraph& sub, const std::vector<std::size_t>* map) {
    std::vector<detail::hm_group_choice> cs;
    for (const auto& o : class_opts) cs.push_back(detail::hm_choice_of(o, sub, map));
    return cs;
  };
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const std::size_t r = rep_of[i];
    const hm_solved_problem* earlier = reused[r];
    if (r == i) {
      choices[i] = earlier ? to_choices(earlier->options, subs[i], &reuse_map[i]) : to_choices(class_options[i], subs[i], nullptr);
      continue;
    }
    hiremate_subgraph sub = make_hiremate_subgraph(g, groups[i]);
    try {
      const auto map = earlier ? hiremate_subgraph_map(earlier->sub, earlier->group, sub, groups[i])
                               : hiremate_subgraph_map(subs[r], groups[r], sub, groups[i]);
      choices[i] = to_choices(earlier ? earlier->options : class_options[r], sub, &map);
    } catch (const std::invalid_argument&) {
      unshared.push_back(i);  // same forward class, different problem (e.g. the gradients differ)
    }
  }
  solve_all(unshared);
  for (auto i : unshared) choices[i] = to_choices(class_options[i], subs[i], nullptr);
  st.classes_solved = to_solve.size() + unshared.size();
  st.classes_reused = reps.size() - to_solve.size();
  st.classes_cut = st.classes_serenity = 0;
  hiremate_level_report lowest{.level = level > 0 ? "nested" : "lowest"};
  auto count = [&](const hm_solve_summary& s) {
    st.classes_cut += s.cut;
    st.classes_serenity += s.serenity;
    lowest.solves += s.solves;
    lowest.proven += s.proven;
  };
  for (const std::size_t r : reps) count(reused[r] ? reused[r]->summary : summaries[r]);
  for (const std::size_t i : unshared) count(summaries[i]);
  lowest.cut = st.classes_cut;
  st.level_reports.push_back(std::move(lowest));
  // For the next partitions (the entries `reused` points to stay where they are).
  {
    const auto insert_lock = lock_solved();
    for (const auto& just_solved : {std::cref(to_solve), std::cref(unshared)})
      for (const std::size_t i : just_solved.get())
        if (const auto hash = class_hash(group_class[i]))
          solved.emplace(*hash, hm_solved_problem{groups[i], std::move(subs[i]), std::move(class_options[i]), summaries[i]});
  }
  st.lower_seconds = detail::seconds_since(lower_start);

  // Top level: choose, expand, simulate; tighten on overshoot.
  const auto top_start = clock::now();
  const std::vector<std::size_t> owner = detail::hm_group_owner(g, groups);
  remat_result& hier = out.plan;
  std::string& why = out.why;
  bool every_group = true;
  for (const auto& c : choices) every_group = every_group && !c.empty();
  if (!every_group) why = "a subgraph has no option";
  // Each top level: choose under a target budget, expand, simulate; on overshoot, choose again
  // under a target lowered by it. When a lowered target leaves no choice, the next one lies half
  // way back to the last target that had one (the overshoot of one choice says little about the
  // next). `choose(target)` gives a compute sequence or nullopt.
  auto repaired = [&](auto choose, std::optional<double>& cost) {
    std::int64_t target = budget;
    std::int64_t overshot = budget;  // the last target whose choice overshot
    std::int64_t no_choice = 0;      // the highest target known to leave no choice
    for (std::size_t round = 0; round <= options.repair_rounds && (round == 0 || !out_of_time()); ++round) {
      auto seq = choose(target);
      if (!seq) {
        if (round == 0) break;
        no_choice = target;
        target += (overshot - target) / 2;
        if (target <= no_choice) break;
        continue;
      }
      remat_result r = detail::finish_strategy_plan(g, std::move(*seq), budget, true, start);
      if (r.status == solve_status::feasible) {
        cost = r.total_cost;
        if (!best_reported || r.total_cost < *best_reported) {
          best_reported = r.total_cost;
          options.observer.on_incumbent(elapsed(), r.total_cost);
        }
        return r;
      }
      ++st.repair_rounds;
      const std::int64_t over = r.peak_bytes - budget;
      why = "the expanded plan's peak " + std::to_string(r.peak_bytes) + " exceeds the budget";
      overshot = target;
      target -= std::max<std::int64_t>(over, std::max<std::int64_t>(1, target / 64));
      if (target <= no_choice) target = no_choice + (overshot - no_choice) / 2;
      if (target <= no_choice || target <= 0) break;
    }
    return remat_result{};
  };
  if (every_group) {
    options.observer.on_phase(elapsed(), "top level");
    std::size_t units = options.budget_units;
    if (options.max_bytes) {
      // hm_choose holds two rows of doubles and, per group and unit, a pick byte and a from index.
      const std::int64_t per = static_cast<std::int64_t>(groups.size()) * 5 + 16;
      units = std::max<std::size_t>(16, std::min<std::size_t>(units, static_cast<std::size_t>(std::max<std::int64_t>(1, *options.max_bytes / per))));
    }
    hier = repaired(
        [&](std::int64_t target) -> std::optional<std::vector<std::size_t>> {
          const auto choice = detail::hm_choose(choices, target, units);
          if (!choice) {
            why = "no choice of the subgraphs' options fits the budget";
            return std::nullopt;
          }
          std::vector<const std::vector<std::size_t>*> parts;
          for (std::size_t i = 0; i < groups.size(); ++i) parts.push_back(&choices[i][(*choice)[i]].forward);
          for (std::size_t i = groups.size(); i-- > 0;) parts.push_back(&choices[i][(*choice)[i]].backward);
          auto seq = detail::hm_expand(g, parts, owner);
          if (!seq) why = "the groups' schedules cannot be put in one order";
          return seq;
        },
        st.groups_cost);
    if (hier.status == solve_status::feasible) st.top_method = "groups";
    // Two models of the pinned values (over their live ranges, and throughout), for the chain top
    // level and as the H-ILP's starts.
    std::vector<detail::hm_chain> models;
    const std::int64_t table_cap = options.max_bytes.value_or(std::int64_t{1} << 28);
    if (options.chain_units > 0) {
      models.push_back(detail::hm_make_chain(g, groups, owner));
      if (models.front().pinned_ranged > 0) models.push_back(detail::hm_pinned_throughout(models.front()));
      if (options.regenerate_carries) detail::hm_add_regen(g, models.front(), owner, choices);
    }
    // The second chain solve of each model differs from the first only when some option can
    // recompute its carry.
    const bool any_regen = std::ranges::any_of(choices, [](const auto& stage) {
      return std::ranges::any_of(stage, [](const detail::hm_group_choice& c) { return c.regen_cost.has_value(); });
    });
    if (options.chain_units > 0 && !out_of_time()) {
      options.observer.on_phase(elapsed(), "top level (chain)");
      // The cheapest expanded plan of the two models, each with and without recomputed carries,
      // is the chain's (the spare-memory pass after the expansion favours either, by graph and
      // budget: docs/hiremate.md, "Recomputed carries").
      std::string chain_why;
      remat_result by_chain;
      for (const detail::hm_chain& chain : models)
        for (const bool regen : {false, true}) {
          if (out_of_time() || (regen && !any_regen)) break;
          std::optional<double> cost;
          remat_result r = repaired(
              [&](std::int64_t target) -> std::optional<std::vector<std::size_t>> {
                const auto steps = detail::hm_chain_schedule(chain, choices, target, options.chain_units, table_cap, out_of_time, regen);
                if (!steps) {
                  chain_why = out_of_time() ? "the time limit stopped the chain schedule" : "no chain schedule fits the budget";
                  return std::nullopt;
                }
                std::vector<const std::vector<std::size_t>*> parts;
                for (const auto& step : *steps) {
                  const auto& c = choices[step.stage][step.option];
                  using kind = detail::hm_chain_step::kind;
                  parts.push_back(step.what == kind::forward_only ? chain.stages[step.stage].forward
                                  : step.what == kind::forward                ? &c.forward
                                  : step.what == kind::regen                  ? &c.regen
                                                                              : &c.backward);
                }
                auto seq = detail::hm_expand(g, parts, owner);
                if (!seq) chain_why = "the chain schedule cannot be put in one order";
                return seq;
              },
              cost);
          if (r.status == solve_status::feasible && (by_chain.status != solve_status::feasible || r.total_cost < by_chain.total_cost)) {
            by_chain = std::move(r);
            st.chain_cost = cost;
          }
        }
      if (by_chain.status == solve_status::feasible &&
          (hier.status != solve_status::feasible || by_chain.total_cost < hier.total_cost)) {
        hier = std::move(by_chain);
        st.top_method = "chain";
      } else if (hier.status != solve_status::feasible && !chain_why.empty()) {
        why = why.empty() ? chain_why : why + "; " + chain_why;
      }
    }
    if (options.top_solver && groups.size() <= options.hilp_max_groups && !out_of_time()) {
      options.observer.on_phase(elapsed(), "top level (H-ILP)");
      const auto hilp_start = clock::now();
      const auto problem = detail::hm_make_hilp(g, groups, owner, choices);
      std::optional<double> cost;
      remat_result r;
      if (problem) {
        // A schedule's vertex lists in order.
        auto parts_of = [&](const detail::hm_hilp_schedule& schedule) {
          std::vector<const std::vector<std::size_t>*> parts;
          for (const auto& stage : schedule)
            for (const auto& [k, o] : stage) parts.push_back(problem->variants[k][o].vertices);
          return parts;
        };
        r = repaired(
            [&](std::int64_t target) -> std::optional<std::vector<std::size_t>> {
              // Starts: the other top levels' schedules at this target.
              std::vector<detail::hm_hilp_schedule> starts;
              if (auto c = detail::hm_choose(choices, target, units)) starts.push_back(detail::hm_hilp_schedule_of_choice(groups.size(), *c));
              for (const auto& chain : models)
                if (auto steps = detail::hm_chain_schedule(chain, choices, target, options.chain_units, table_cap, out_of_time))
                  if (auto s = detail::hm_hilp_schedule_of_chain(*problem, *steps)) starts.push_back(std::move(*s));
              solver_options so = options.top_solver_options;
              if (deadline.limited()) {
                const double left = detail::backend_limit_within(deadline.left());
                if (left <= 0) return std::nullopt;
                so.time_limit = std::chrono::duration<double>(so.time_limit ? std::min(so.time_limit->count(), left) : left);
              }
              // The starts' simulated peaks calibrate the model's memory (see hm_solve_hilp).
              std::vector<std::int64_t> real_peaks;
              for (const auto& s : starts) {
                const auto seq = detail::hm_expand(g, parts_of(s), owner);
                real_peaks.push_back(seq ? detail::sequence_peak_cost(g, *seq).first : -1);
              }
              const auto outcome = detail::hm_solve_hilp(*problem, target, starts, real_peaks, options.top_solver, so,
                                                        options.max_bytes ? static_cast<std::uint64_t>(*options.max_bytes) : default_max_bytes(),
                                                        options.hilp_free_values);
              if (!outcome.message.empty()) why = why.empty() ? outcome.message : why + "; " + outcome.message;
              st.hilp_status = std::string(to_string(outcome.status));
              st.hilp_variables = outcome.variables, st.hilp_constraints = outcome.constraints;
              st.hilp_budget_raised = outcome.budget_raised;
              st.hilp_start_objective = outcome.start_objective;
              st.hilp_objective = outcome.objective, st.hilp_bound = outcome.bound;
              // No answer although the backend ran (no start fits the model: their expanded plans
              // overshoot the budget): the first start, so that the simulator's overshoot lowers
              // the target as it does for the other top levels.
              if (!outcome.schedule && (starts.empty() || outcome.status == solve_status::unsupported || outcome.status == solve_status::error))
                return std::nullopt;
              return detail::hm_expand(g, parts_of(outcome.schedule ? *outcome.schedule : starts.front()), owner);
            },
            cost);
      }
      st.hilp_seconds = detail::seconds_since(hilp_start);
      if (r.status == solve_status::feasible) {
        st.hilp_cost = cost;
        if (hier.status != solve_status::feasible || r.total_cost < hier.total_cost) {
          hier = std::move(r);
          st.top_method = "hilp";
        }
      }
    }
    if (hier.status == solve_status::feasible) {
      st.hierarchy_cost = hier.total_cost;
      // The DPs are exact over their models (tests: brute force); the H-ILP when its backend proved it.
      const bool proven = st.top_method != "hilp" || st.hilp_status == to_string(solve_status::optimal);
      st.level_reports.push_back(hiremate_level_report{
          .level = "top", .method = st.top_method, .solves = 1, .proven = proven ? 1U : 0U, .cut = out_of_time() ? 1U : 0U});
    }
  }
  st.top_seconds = detail::seconds_since(top_start);
  out.groups = std::move(groups);
  return out;
}

// hiremate_plan_on, as the outermost call (`nesting` nullptr, its stats report the counts) or as a
// nested hierarchy: then it shares the problems solved with the other nested hierarchies of its
// level and counts the lower solver's calls into the outermost call's counts.
MEMSCHED_DECL hiremate_plan_result hm_plan_levels(const memory_graph& g, std::int64_t budget, const hiremate_options& options,
                                              hiremate_partition_options partition, std::chrono::steady_clock::time_point start,
                                              const hm_nesting* nesting) {
  if (!g.has_training_roles()) throw std::invalid_argument("hiremate_plan: the graph has no training roles (make_training_graph first)");
  const call_deadline deadline(start, options.time_limit);
  auto elapsed = [&] { return deadline.elapsed(); };
  hiremate_plan_result out;
  // More than two levels: the groups of a higher partition level are solved per budget by
  // hierarchies of one level less (the paper's recursion; the innermost uses lower_solver).
  hiremate_lower_solver nested;
  hm_lower_counts own_counts;
  hm_lower_counts& lower_counts = nesting ? nesting->counts : own_counts;
  if (options.levels > 2) {
    hiremate_options inner = options;
    inner.levels = options.levels - 1;
    inner.partitions = options.nested_partitions;
    inner.chain_units = options.nested_chain_units;
    inner.threads = 1;  // the classes are already solved in parallel
    inner.observer = {};
    inner.partition.ops.clear();  // indexed by the vertices of `g`, not of a subgraph problem
    // Called only within this call (hm_plan_over_partition), so it may refer to lower_counts.
    nested = [inner = std::move(inner), shared = std::make_shared<hm_problem_cache>(), counts = &lower_counts](
                 const memory_graph& sub, std::int64_t sub_budget, const hiremate_lower_limits& limits) {
      ++counts->nested;
      hiremate_options one = inner;
      one.time_limit = limits.time_limit;
      one.max_bytes = limits.max_bytes;
      const hm_nesting within{*shared, *counts};
      hiremate_plan_result r = hm_plan_levels(sub, sub_budget, one, one.partition, std::chrono::steady_clock::now(), &within);
      counts->nested_partitions += r.stats.partitions_tried;
      return std::move(r.result);
    };
  }
  hiremate_stats& st = out.stats;

  // The start: the best heuristic, DTR and the eviction greedy on the whole graph. It reads only
  // the graph, so with a second thread it runs beside the hierarchy (on an 11,534-node GPT stack
  // it takes longer than the hierarchy at 20-40% of the peak) and is taken when the hierarchy is
  // done; the same plans either way (nothing else reads it), its incumbent reported when taken.
  remat_result heur;
  std::string start_method;  // the start's method: "best-heuristic", "dtr:<score>" or "eviction greedy <k>" (result.stats.start_source)
  std::optional<double> heuristic_cost;
  double heuristic_seconds = 0;
  std::optional<double> best_reported;
  std::exception_ptr start_error;
  std::jthread start_thread;  // joins on the way out, also when the hierarchy throws
  // A nested hierarchy runs DTR in its start only with nested_start_dtr.
  const bool start_dtr = options.dtr && (nesting == nullptr || options.nested_start_dtr);
  auto run_start = [&] {
    // At most half the time limit: the lowest level's deadline (80%) comes after it.
    const std::optional<std::chrono::duration<double>> share =
        options.time_limit ? std::optional(*options.time_limit * 0.5) : std::nullopt;
    try {
      heur = detail::hm_start_plan(g, budget, options.heuristics, start_dtr, detail::call_deadline(start, share));
    } catch (...) {
      start_error = std::current_exception();
    }
  };
  auto take_start = [&] {
    if (start_thread.joinable()) start_thread.join();
    if (start_error) std::rethrow_exception(start_error);
    heuristic_seconds = heur.stats.seconds;
    if (heur.status != solve_status::feasible) return;
    heuristic_cost = heur.total_cost;
    start_method = heur.stats.method;
    if (!best_reported || heur.total_cost < *best_reported) {
      best_reported = heur.total_cost;
      options.observer.on_incumbent(elapsed(), heur.total_cost);
    }
  };
  const bool start_beside = options.heuristic_start && detail::task_threads(options.threads, 2) > 1;
  if (options.heuristic_start) {
    options.observer.on_phase(elapsed(), "heuristic start");
    if (start_beside) {
      start_thread = std::jthread(run_start);
    } else {
      run_start();
      take_start();
    }
  }

  // The hierarchy over M^l, 2 M^l, ... (options.partitions of them): the cheapest expanded plan is
  // the hierarchy's, with the statistics of its partition. A grain the max_chain_stages cap
  // already coarsened past is skipped, as is a partition whose groups an earlier one had.
  // Later partitions start only within half the time limit, and take the options of the problems
  // earlier ones solved (in a nested hierarchy also those the other budgets' hierarchies solved:
  // `nesting`). With more than two levels each grain is solved both ways (mode 0: two
  // levels, mode 1: `nested` over a higher partition level), so that more levels never lose a
  // plan the two-level solve finds; each mode keeps its own solved problems and grains. With
  // also_full_rounds each grain is also partitioned with every round finished (rounds 1), each
  // kind of rounds with its own grains, so that either kind's plan is found as it would be alone.
  remat_result hier;
  std::string why;
  const std::size_t modes = nested ? 2 : 1;
  const bool both_rounds = options.also_full_rounds && partition.stop_at_max_top && nesting == nullptr;
  std::array<std::vector<std::vector<std::vector<std::size_t>>>, 2> earlier_groups;  // per mode
  std::array<hm_solved_problems, 2> own_solved;
  std::array<hm_solved_problems, 2>& solved = nesting ? nesting->cache.problems : own_solved;
  std::array<std::array<std::size_t, 2>, 2> solved_max_lower{};  // per mode and rounds: the coarsest M^l solved so far
  const std::size_t base_max_lower = partition.max_lower;
  const bool given_stop = partition.stop_at_max_top;
  const auto forward_vertices = static_cast<std::size_t>(std::ranges::count_if(g.topological_order(), [&](auto v) { return g.is_forward(v); }));
  std::size_t tried = 0;
  double hierarchy_seconds = 0;
  for (std::size_t k = 0; k < options.partitions; ++k) {
    partition.max_lower = base_max_lower << k;
    if (k > 0 && deadline.limited() && elapsed() >= 0.5 * deadline.limit()) break;
    for (std::size_t rounds = 0; rounds < (both_rounds ? 2U : 1U); ++rounds) {
      if (rounds > 0 && deadline.limited() && elapsed() >= 0.5 * deadline.limit()) break;
      partition.stop_at_max_top = rounds == 0 ? given_stop : false;
      for (std::size_t mode = 0; mode < modes; ++mode) {
        std::size_t& coarsest = solved_max_lower[mode][rounds];
        if (k > 0) {
          if (partition.max_lower <= coarsest) continue;
          if (coarsest >= forward_vertices) continue;  // one group could hold the whole forward graph
        }
        const double partition_start = elapsed();
        auto one = detail::hm_plan_over_partition(g, budget, options, mode == 1 ? nested : hiremate_lower_solver{}, partition, deadline,
                                                  earlier_groups[mode], solved[mode], nesting ? &nesting->cache.mutex : nullptr,
                                                  best_reported, lower_counts);
        hierarchy_seconds += elapsed() - partition_start;
        if (!one) continue;  // a partition without the level: nothing to solve
        coarsest = one->stats.max_lower;  // raised for max_chain_stages
        if (one->repeated) continue;      // an earlier partition's groups: nothing new to solve
        ++tried;
        const bool cheaper = one->plan.status == solve_status::feasible &&
                             (hier.status != solve_status::feasible || one->plan.total_cost < hier.total_cost);
        if (tried == 1 || cheaper) {
          st = std::move(one->stats);
          hier = std::move(one->plan);
          why = std::move(one->why);
        }
        earlier_groups[mode].push_back(std::move(one->groups));
      }
    }
  }
  if (start_beside) take_start();
  st.heuristic_cost = heuristic_cost;
  st.heuristic_seconds = heuristic_seconds;
  st.partitions_tried = tried;
  st.hierarchy_seconds = hierarchy_seconds;
  st.lower_solver_calls = lower_counts.calls.load();
  st.nested_hierarchies = lower_counts.nested.load();
  st.nested_partitions_tried = lower_counts.nested_partitions.load();
  st.lower_solver_cheaper = lower_counts.cheaper.load();

  const bool hier_ok = hier.status == solve_status::feasible;
  const bool heur_ok = heur.status == solve_status::feasible;
  if (hier_ok && (!heur_ok || hier.total_cost <= heur.total_cost)) {
    out.result = std::move(hier);
    st.source = "hierarchy";
  } else if (heur_ok) {
    out.result = std::move(heur);
    st.source = "heuristic";
  } else {
    out.result = remat_result{};
    if (auto lb = detail::budget_below_lower_bound(g, budget)) {
      out.result.status = solve_status::infeasible;
      why = *lb;
    }
  }
  out.result.stats.seconds = elapsed();
  out.result.stats.start_source = heur_ok ? start_method : "";
  if (heur_ok) out.result.stats.start_cost = *heuristic_cost;
  std::string msg = "hiremate: " + std::to_string(st.groups) + " groups, " + std::to_string(st.classes_solved) + " subgraph problems solved, " +
                    std::to_string(st.partition.levels) + " partition levels";
  if (st.classes_cut > 0) msg += "; the time limit cut " + std::to_string(st.classes_cut) + " subgraph problems short";
  if (!st.source.empty()) msg += "; plan from the " + st.source + (st.source == "heuristic" ? " (" + start_method + ")" : "");
  if (!hier_ok && !why.empty()) msg += "; hierarchy: " + why;
  if (!st.level_reports.empty()) {
    msg += "; solves proven for their own problems:";
    for (const auto& l : st.level_reports)
      msg += " " + l.level + " " + std::to_string(l.proven) + "/" + std::to_string(l.solves);
  }
  out.result.message = msg;
  return out;
}

MEMSCHED_DEF hiremate_plan_result hiremate_plan_on(const memory_graph& g, std::int64_t budget, const hiremate_options& options,
                                                hiremate_partition_options partition,
                                                std::chrono::steady_clock::time_point start) {
  // No step ever holds more than every value and the largest workspace (total_bytes bounds it):
  // a budget above that constrains nothing, and the tables in units of the budget stay small.
  return hm_plan_levels(g, std::min(budget, std::max<std::int64_t>(g.total_bytes(), 0)), options, std::move(partition), start, nullptr);
}

}  // namespace memsched::detail
