#pragma once
// The options of serenity_order (order/serenity.hpp), in their own header so that the segment
// solver (order/detail/serenity_solver.hpp) can read them without the driver.

#include <memsched/core/observer.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>

namespace memsched {

/// How serenity_order narrows the budget of its searches.
enum class soft_budget_mode {
  off,     ///< One exact search pruned at the best heuristic peak (and at `budget`).
  paper,   ///< Algorithm 2 as published: tau = Kahn's peak; timeout: tau /= 2; no solution: tau = (tau + tau_old) / 2.
  bounded  ///< Bisection with timed decision searches between the best lower bound and the best known peak; keeps the proof.
};

/// Options of serenity_order (a plain aggregate: use designated initializers).
struct serenity_options {
  /// Hard budget: only orders whose peak is <= budget are searched. Status infeasible when none exists.
  std::optional<std::int64_t> budget;
  soft_budget_mode soft_budget = soft_budget_mode::off;
  /// Split the graph at its single-node cuts and solve the segments independently.
  bool divide = true;
  /// Whole-run wall-clock limit; when it stops the proof the best order found is returned (feasible).
  std::optional<std::chrono::duration<double>> time_limit;
  /// Time limit of one search attempt of the soft budgeting modes (the paper's T). Default 1 s.
  std::chrono::duration<double> attempt_time_limit = std::chrono::duration<double>(1.0);
  /// Cap on the partial schedules stored by one search (all layers). Reaching it stops the proof.
  std::uint64_t max_states = std::numeric_limits<std::uint64_t>::max();
  /// Cap on the memory all searches hold at the same time. Reaching it stops the proof.
  std::uint64_t max_bytes = std::uint64_t{4} << 30;
  /// Threads solving segments in parallel (0: hardware concurrency). Results do not depend on it.
  unsigned threads = 1;
  /// Schedule "free moves" (a ready vertex that frees at least what it allocates and does not raise
  /// the peak) without branching. Keeps optimality (docs/serenity.md). Off gives the plain dynamic
  /// program, which branches on those vertices too: it exists to check the pruning against (the
  /// tests compare both).
  bool free_moves = true;
  /// Width of the beam search that seeds the upper bound (0: none; Kahn and greedy orders only).
  std::size_t beam_width = 64;
  /// Local search over orders after the beam seed: windows of up to this many consecutive vertices
  /// around the peak step re-ordered by a small dynamic program, and single vertices moved next to
  /// their producers or readers, while that removes a peak step (0: off; at most 64; 32 is a good
  /// value). Off by default: it changes which optimal order is returned, and the remat algorithms
  /// that plan along Serenity's order were measured with the orders found without it.
  std::size_t reorder_window = 0;
  /// Windows and moves the local search may try per segment: a counted limit, so that the order
  /// found does not depend on the machine (the time limit still stops it).
  std::uint64_t reorder_attempts = 4096;
  /// The first slice, in expanded signatures, of the two exact searches that take turns on a
  /// segment: the decision searches (forward and backward depth first, bisection over the peak)
  /// and the layered dynamic program; slices double after each turn of both (0: layered only).
  std::uint64_t decision_budget = std::uint64_t{1} << 19;
  /// Let the decision searches take turns on training segments too (those holding a backward or
  /// loss vertex). Off by default: there the layered DP runs alone, as it proved every training
  /// graph measured faster than the two in turns (1-8x; docs/serenity.md, "Training segments").
  bool decisions_on_training = false;
  /// Progress: on_incumbent(seconds, peak bytes, lower bound) for every better order of the whole
  /// graph and on_bound(seconds, lower bound) for every better lower bound, one call at a time
  /// (serialised when segments are solved in parallel). See docs/serenity.md ("Progress").
  observer_ref observer;
};

}  // namespace memsched
