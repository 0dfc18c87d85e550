#pragma once
// The segment solver of serenity_order: one graph (a segment, or the whole graph without divide
// and conquer) solved by the baseline orders, a beam seed, the decision searches and the layered
// search, in the order the soft-budget mode asks. Internal; see order/serenity.hpp and
// docs/serenity.md.

#include <memsched/core/status.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/order/detail/deadline_clock.hpp>
#include <memsched/order/detail/serenity_decision.hpp>
#include <memsched/order/detail/serenity_dp.hpp>
#include <memsched/order/detail/serenity_memory_pool.hpp>
#include <memsched/order/detail/serenity_progress.hpp>
#include <memsched/order/detail/window_reorder.hpp>
#include <memsched/order/dfs.hpp>
#include <memsched/order/greedy.hpp>
#include <memsched/order/kahn.hpp>
#include <memsched/order/order_result.hpp>
#include <memsched/order/serenity_options.hpp>
#include <memsched/sim/simulate_order.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <vector>

#ifdef MEMSCHED_SERENITY_TRACE
#include <cstdio>
#endif

namespace memsched::detail {

struct serenity_segment_answer {
  std::vector<std::size_t> order;  // local indices
  std::int64_t peak = 0;
  std::int64_t lower_bound = 0;
  solve_status status = solve_status::feasible;
  order_stats stats;
};

inline void add_stats(order_stats& to, const order_stats& s) {
  to.states_expanded += s.states_expanded;
  to.states_stored += s.states_stored;
}

/// Solves one graph (a segment or the whole graph). `budget` excludes the segment's base.
class serenity_solver {
 public:
  /// `target`: a segment peak up to this value does not raise the whole graph's peak above a proven
  /// lower bound of the whole graph, so the search may stop there (lowest(): exact per segment).
  /// `lower_bound`: peak_lower_bound(g), computed once by the caller. `progress`, when given, hears
  /// every better incumbent and bound as segment `segment`.
  serenity_solver(const memory_graph& g, const serenity_options& opt, std::optional<std::int64_t> budget,
                  std::chrono::steady_clock::time_point deadline, serenity_memory_pool& pool, std::int64_t lower_bound,
                  std::int64_t target = std::numeric_limits<std::int64_t>::lowest(), serenity_progress* progress = nullptr,
                  std::size_t segment = 0)
      : g_(g), opt_(opt), budget_(budget), deadline_(deadline), pool_(pool), target_(target), lb_(lower_bound),
        progress_(progress && progress->active() ? progress : nullptr), segment_(segment) {}

  serenity_segment_answer solve() {
    serenity_segment_answer a;
    // Incumbents: Kahn (the paper's tau_max), greedy, DFS, and a narrow beam search.
    const auto kahn = kahn_order_of(g_);
    kahn_peak_ = order_peak_unchecked(g_, kahn);
    consider(kahn, kahn_peak_);
    const auto greedy = greedy_order_of(g_);
    consider(greedy, order_peak_unchecked(g_, greedy));
    const auto dfs = dfs_order_of(g_);
    consider(dfs, order_peak_unchecked(g_, dfs));
    if (opt_.beam_width > 0 && best_peak_ > lb_) {
      serenity_dp_request r = request(best_peak_ - 1, opt_.beam_width, true);
      auto ans = run_serenity_dp(g_, r);
      add_stats(a.stats, ans.stats);
      if (ans.outcome == serenity_dp_outcome::solved) consider(ans.order, ans.peak);
    }
    // Local search over orders (detail/window_reorder.hpp): a lower incumbent for the proof, and
    // the answer when a limit stops it.
    if (opt_.reorder_window > 0 && g_.size() >= 2 && best_peak_ > std::max(lb_, target_)) {
      const window_reorder_request r{.max_window = std::min(opt_.reorder_window, g_.size()),
                                     .max_attempts = opt_.reorder_attempts, .deadline = deadline_, .pool = &pool_};
      const auto ans = window_reorder(g_, r).run(best_order_);
      a.stats.states_expanded += ans.states_expanded;
      consider(ans.order, ans.peak);
    }
    if (budget_ && lb_ > *budget_) return finish_infeasible(a, *budget_ + 1);
    if (best_peak_ > std::max(lb_, target_)) {
      switch (opt_.soft_budget) {
        case soft_budget_mode::off: solve_off(a); break;
        case soft_budget_mode::paper: solve_paper(a); break;
        case soft_budget_mode::bounded: solve_bounded(a); break;
      }
    } else {
      proven_ = true;
    }
    if (infeasible_) return finish_infeasible(a, lb_);
    if (budget_ && best_peak_ > *budget_) {
      // The budget is below every order we found, but not proven infeasible.
      a.order = best_order_;
      a.peak = best_peak_;
      a.lower_bound = lb_;
      a.status = proven_ ? solve_status::infeasible : solve_status::time_limit;
      return a;
    }
    a.order = best_order_;
    a.peak = best_peak_;
    a.lower_bound = proven_ ? best_peak_ : std::min(lb_, best_peak_);
    a.status = proven_ || a.lower_bound == a.peak ? solve_status::optimal : solve_status::feasible;
    if (a.status == solve_status::optimal) a.lower_bound = a.peak;
    return a;
  }

 private:
  // decision: the search only has to find *an* order with peak <= limit (or prove there is none),
  // so free moves may go up to the limit itself (see docs/serenity.md).
  serenity_dp_request request(std::int64_t limit, std::size_t beam, bool decision,
                              std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max()) {
    serenity_dp_request r;
    r.limit = limit;
    r.free_threshold = decision ? limit : std::max(lb_, target_);
    r.free_moves = opt_.free_moves;
    r.beam_width = beam;
    r.deadline = std::min(deadline, deadline_);
    r.max_states = opt_.max_states;
    r.pool = &pool_;
    return r;
  }

  void consider(const std::vector<std::size_t>& order, std::int64_t peak) {
    if (best_order_.empty() || peak < best_peak_) {
      best_order_ = order;
      best_peak_ = peak;
      report();
    }
  }

  // Tells the progress (if any) the incumbent and the bound; it reports only improvements.
  void report() const {
    if (progress_) progress_->update(segment_, best_peak_, std::min(lb_, best_peak_));
  }

  serenity_segment_answer finish_infeasible(serenity_segment_answer& a, std::int64_t lb) {
    a.order = best_order_;
    a.peak = best_peak_;
    a.lower_bound = std::max(lb, lb_);
    a.status = solve_status::infeasible;
    return a;
  }

  // One exact search with limit `tau`: returns the outcome and updates incumbent / bounds.
  // decision = false: an order found is the optimum (Algorithm 1 with budget tau). decision = true:
  // an order found has peak <= tau; no_solution still proves optimum > tau.
  serenity_dp_outcome attempt(serenity_segment_answer& a, std::int64_t tau, bool decision,
                              std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max()) {
    auto ans = run_serenity_dp(g_, request(tau, 0, decision, deadline));
    last_out_of_time_ = ans.out_of_time;
    add_stats(a.stats, ans.stats);
    search_bytes_ = std::max<std::uint64_t>(search_bytes_, ans.stats.search_bytes);
    a.stats.search_bytes = search_bytes_;
    if (ans.outcome == serenity_dp_outcome::solved) {
      consider(ans.order, ans.peak);
      if (!decision) {
        // An exact search that finds an order finds the minimum (every optimal order survives a
        // limit >= the optimum, and free moves below a proven lower bound keep one of them).
        lb_ = std::max(lb_, ans.peak);
        proven_ = true;
      }
    } else if (ans.outcome == serenity_dp_outcome::no_solution || !decision) {
      // A stopped decision search proves nothing: its free moves may exceed the optimum.
      lb_ = std::max(lb_, ans.lower_bound);
    }
    report();
    return ans.outcome;
  }

  // The soft-budget modes' time per attempt (doubled when a round ends without a proof): at least
  // 1 us, so that doubling reaches a useful time in a few dozen rounds whatever the option says.
  std::chrono::duration<double> attempt_limit() const {
    return std::max(opt_.attempt_time_limit, std::chrono::duration<double>(1e-6));
  }

  std::int64_t budget_cap() const { return budget_ ? *budget_ : std::numeric_limits<std::int64_t>::max(); }

  void solve_off(serenity_segment_answer& a) {
    // Two exact methods in turn. First the bisection with decision searches (untimed): they
    // settle graphs with a tight spot near one end in a few thousand signatures, but cost several
    // times more per signature than the layered search, so after decision_budget signatures the
    // layered search (Algorithm 1) finishes the proof from the better incumbent and lower bound.
    if (opt_.decision_budget > 0) {
      serenity_decider decider(g_, pool_, opt_.max_states, deadline_, opt_.free_moves);
      if (decider.usable() && !bisect(a, decider, false)) return;  // stopped by a limit
    }
    if (settled_by_bounds()) return;
    const std::int64_t limit = std::min(best_peak_ - 1, budget_cap());
    const auto out = attempt(a, limit, false);
    if (out == serenity_dp_outcome::no_solution) {
      if (limit == best_peak_ - 1) proven_ = true;  // nothing beats the incumbent
      else infeasible_ = true;                      // nothing fits the budget
    }
  }

  // Bisection over tau in [lower bound, incumbent - 1] with exact decisions
  // (detail/serenity_decision.hpp): a yes lowers the incumbent to the order found, a no raises the
  // lower bound to tau + 1. Every peak is a sum of bytes and workspaces, so only multiples of their
  // gcd are asked. Untimed (soft_budget off): the first question is whether the incumbent is
  // optimal, and the bisection hands over (returns true) when decision_budget is spent. Timed
  // (soft_budget bounded): each decision gets attempt_time_limit; one that times out lowers the top
  // of the window (smaller taus prune more), and a window that closes without a proof reopens
  // with twice the time. Returns false when a global limit stopped the search.
  bool bisect(serenity_segment_answer& a, serenity_decider& decider, bool timed) {
    std::int64_t step = 0;
    for (std::size_t v = 0; v < g_.size(); ++v) step = std::gcd(step, std::gcd(g_.bytes(v), g_.workspace(v)));
    step = std::max<std::int64_t>(step, 1);
    const auto round_up = [&](std::int64_t x) { return x % step == 0 ? x : x + (step - x % step); };
    const auto round_down = [&](std::int64_t x) { return x - ((x % step) + step) % step; };
    auto per_attempt = attempt_limit();
    std::int64_t hi = std::numeric_limits<std::int64_t>::max();  // the window's top
    bool first = !timed, round_timed_out = false, go_on = true;
    while (std::max(lb_, target_) < best_peak_) {
      lb_ = round_up(lb_);
      const std::int64_t cap = round_down(std::min(best_peak_ - 1, budget_cap()));  // look for peaks <= cap
      if (lb_ > cap) break;
      hi = std::min(hi, cap);
      if (hi < lb_) {
        if (!round_timed_out) break;  // only memory limits stopped attempts: more time will not help
        round_timed_out = false;
        hi = cap;
        per_attempt *= 2;
      }
      const std::int64_t lo = std::min(hi, round_up(std::max(lb_, target_)));
      const std::int64_t tau = first ? hi : lo + (hi - lo) / step / 2 * step;
      first = false;
      if (!timed && decider.expanded() >= opt_.decision_budget) break;
      const auto out = timed ? decider.decide(tau, std::numeric_limits<std::uint64_t>::max(), deadline_after(std::chrono::steady_clock::now(), per_attempt))
                             : decider.decide(tau, opt_.decision_budget - decider.expanded());
#ifdef MEMSCHED_SERENITY_TRACE
      std::fprintf(stderr, "decide %lld in [%lld, %lld]: %d, expanded %llu stored %llu\n", (long long)tau, (long long)lo,
                   (long long)hi, (int)out, (unsigned long long)decider.expanded(), (unsigned long long)decider.stored());
#endif
      if (out == serenity_decision::yes) {
        consider(decider.order(), order_peak_unchecked(g_, decider.order()));
      } else if (out == serenity_decision::no) {
        lb_ = tau + 1;
        report();
      } else if (out == serenity_decision::paused) {
        break;  // the decision budget is spent: the layered search goes on
      } else if (std::chrono::steady_clock::now() >= deadline_ || !timed) {
        last_out_of_time_ = decider.out_of_time();
        go_on = false;
        break;
      } else {
        round_timed_out |= decider.out_of_time();
        hi = tau - step;
      }
    }
    a.stats.states_expanded += decider.expanded();
    a.stats.states_stored += decider.stored();
    search_bytes_ = std::max<std::uint64_t>(search_bytes_, static_cast<std::uint64_t>(decider.peak_bytes()));
    a.stats.search_bytes = search_bytes_;
    (void)settled_by_bounds();
    return go_on;
  }

  // True when the bounds alone settle the segment: the incumbent is proven optimal (or good
  // enough for the target), or nothing at or below min(incumbent - 1, budget) exists.
  bool settled_by_bounds() {
    if (std::max(lb_, target_) >= best_peak_) {
      proven_ = true;
      return true;
    }
    if (lb_ > std::min(best_peak_ - 1, budget_cap())) {
      if (budget_ && *budget_ < best_peak_) infeasible_ = true;  // nothing fits the budget
      else proven_ = true;                                      // nothing beats the incumbent
      return true;
    }
    return false;
  }

  void solve_paper(serenity_segment_answer& a) {
    // Algorithm 2 of the paper: tau starts at Kahn's peak; an attempt that times out halves tau
    // (tau_old = tau); one that proves there is no solution moves tau half way back to tau_old. Two
    // additions make it terminate: an attempt at tau < the proven lower bound is answered "no
    // solution" without running, and when the interval (tau, tau_old) is exhausted tau_old is reset
    // to tau_max and the attempt time doubles. The first attempt that finds an order finds the
    // optimum (an exact search with a budget >= the optimum keeps an optimal order).
    const std::int64_t tau_max = std::min(kahn_peak_, budget_cap());
    std::int64_t tau = tau_max, tau_old = tau_max;
    bool round_timed_out = false;
    auto per_attempt = attempt_limit();
    while (std::chrono::steady_clock::now() < deadline_) {
      const auto out = tau < lb_ ? serenity_dp_outcome::no_solution
                                 : attempt(a, tau, false, deadline_after(std::chrono::steady_clock::now(), per_attempt));
      if (out == serenity_dp_outcome::solved) return;
      if (out == serenity_dp_outcome::no_solution) {
        if (tau >= tau_max) {  // only when the budget is below Kahn's peak
          infeasible_ = true;
          return;
        }
        std::int64_t next = tau + (tau_old - tau) / 2;
        if (next == tau) {
          if (!round_timed_out) return;  // only memory limits stopped attempts: more time will not help
          round_timed_out = false;
          tau_old = tau_max;
          per_attempt *= 2;
          next = tau + (tau_old - tau + 1) / 2;
        }
        tau = next;
      } else {
        round_timed_out |= last_out_of_time_;
        tau_old = tau;
        tau = tau / 2;
      }
    }
  }

  void solve_bounded(serenity_segment_answer& a) {
    // The bisection with timed decisions; graphs over 4096 vertices are not searched.
    serenity_decider decider(g_, pool_, opt_.max_states, deadline_, opt_.free_moves);
    if (decider.usable()) (void)bisect(a, decider, true);
  }

  const memory_graph& g_;
  const serenity_options& opt_;
  std::optional<std::int64_t> budget_;
  std::chrono::steady_clock::time_point deadline_;
  serenity_memory_pool& pool_;
  std::vector<std::size_t> best_order_;
  std::int64_t best_peak_ = 0, kahn_peak_ = 0;
  std::uint64_t search_bytes_ = 0;
  std::int64_t target_;
  std::int64_t lb_;
  serenity_progress* progress_;
  std::size_t segment_;
  bool last_out_of_time_ = false;
  bool proven_ = false, infeasible_ = false;
};

}  // namespace memsched::detail
