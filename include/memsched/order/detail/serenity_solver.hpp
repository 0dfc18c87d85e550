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
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
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

/// The baseline orders every solve starts from (Kahn's, the greedy's, the DFS's, in that order)
/// and their peaks; serenity_baselines::of computes them.
struct serenity_baselines {
  std::array<std::vector<std::size_t>, 3> orders;
  std::array<std::int64_t, 3> peaks{};
  /// The order functions, in the order of `orders`.
  static constexpr std::array<std::vector<std::size_t> (*)(const memory_graph&), 3> order_of{
      &kahn_order_of, &greedy_order_of, &dfs_order_of};

  /// Computes baseline i of g and its peak. O(n + m) (greedy: O((n + m) log n)).
  void compute(const memory_graph& g, std::size_t i) {
    orders[i] = order_of[i](g);
    peaks[i] = order_peak_unchecked(g, orders[i]);
  }

  static serenity_baselines of(const memory_graph& g) {
    serenity_baselines b;
    for (std::size_t i = 0; i < order_of.size(); ++i) b.compute(g, i);
    return b;
  }
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

  /// Starts from these baselines (of this graph, as computed by solve()) instead of computing them.
  serenity_solver& with_baselines(const serenity_baselines* baselines) {
    baselines_ = baselines;
    return *this;
  }

  serenity_segment_answer solve() {
    serenity_segment_answer a;
    // Incumbents: Kahn (the paper's tau_max), greedy, DFS, and a narrow beam search.
    const serenity_baselines computed = baselines_ ? serenity_baselines{} : serenity_baselines::of(g_);
    const serenity_baselines& base = baselines_ ? *baselines_ : computed;
    kahn_peak_ = base.peaks[0];
    for (std::size_t i = 0; i < base.orders.size(); ++i) consider(base.orders[i], base.peaks[i]);
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

  // One exact layered search (Algorithm 1) with limit `tau`: returns the outcome and updates the
  // incumbent and the bounds.
  serenity_dp_outcome attempt(serenity_segment_answer& a, std::int64_t tau,
                              std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max()) {
    auto ans = run_serenity_dp(g_, request(tau, 0, false, deadline));
    add_stats(a.stats, ans.stats);
    search_bytes_ = std::max<std::uint64_t>(search_bytes_, ans.stats.search_bytes);
    a.stats.search_bytes = search_bytes_;
    learn(ans);
    return ans.outcome;
  }

  // What an exact layered search that ended (solved, no solution or stopped) proves.
  void learn(const serenity_dp_answer& ans) {
    last_out_of_time_ = ans.out_of_time;
    if (ans.outcome == serenity_dp_outcome::solved) {
      consider(ans.order, ans.peak);
      // An exact search that finds an order finds the minimum (every optimal order survives a
      // limit >= the optimum, and free moves below a proven lower bound keep one of them).
      lb_ = std::max(lb_, ans.peak);
      proven_ = true;
    } else {
      lb_ = std::max(lb_, ans.lower_bound);
    }
    report();
  }

  // No order at or below `limit` = min(incumbent - 1, budget) exists.
  void conclude_none_below(std::int64_t limit) {
    if (limit == best_peak_ - 1) proven_ = true;  // nothing beats the incumbent
    else infeasible_ = true;                      // nothing fits the budget
  }

  // The soft-budget modes' time per attempt (doubled when a round ends without a proof): at least
  // 1 us, so that doubling reaches a useful time in a few dozen rounds whatever the option says.
  std::chrono::duration<double> attempt_limit() const {
    return std::max(opt_.attempt_time_limit, std::chrono::duration<double>(1e-6));
  }

  std::int64_t budget_cap() const { return budget_ ? *budget_ : std::numeric_limits<std::int64_t>::max(); }

  void solve_off(serenity_segment_answer& a) {
    // Two exact methods in alternating slices of expanded signatures, doubling from
    // decision_budget: the bisection with decision searches and the layered search (Algorithm 1).
    // Which one proves a graph first depends on the graph (a tight spot near one end favours the
    // decisions; RandWire stages favour either, by seed, by up to 20x), and a signature costs
    // about the same in both, so the time stays within a small multiple of the faster method's.
    // Counted, hence deterministic. A better incumbent from the decisions lowers the paused
    // layered search's limit; the decider keeps its memo and the paused search its layers.
    std::optional<serenity_decider> decider;
    if (opt_.decision_budget > 0) {
      decider.emplace(g_, pool_, opt_.max_states, deadline_, opt_.free_moves);
      if (!decider->usable()) decider.reset();
    }
    if (!decider) return solve_layered(a);
    bisection b = start_bisection(false);
    std::unique_ptr<serenity_dp> dp;
    order_stats dp_stats;  // the layered search's so far
    const auto finish = [&] {
      add_stats(a.stats, dp_stats);
      search_bytes_ = std::max<std::uint64_t>(search_bytes_, dp_stats.search_bytes);
      add_decider_stats(a, *decider);
    };
    for (std::uint64_t slice = opt_.decision_budget;; slice = slice > (~std::uint64_t{0} >> 1) ? ~std::uint64_t{0} : 2 * slice) {
      const std::uint64_t until = slice > ~decider->expanded() ? ~std::uint64_t{0} : decider->expanded() + slice;
      const bisect_end end = bisect(*decider, false, b, until);
      if (end != bisect_end::paused || settled_by_bounds()) return finish();
      const std::int64_t limit = std::min(best_peak_ - 1, budget_cap());
      if (!dp) dp = std::make_unique<serenity_dp>(g_, request(limit, 0, false));
      dp->lower_limit(limit);
      const serenity_dp_answer ans = dp->run(slice);
      dp_stats = ans.stats;
      if (ans.outcome == serenity_dp_outcome::paused) continue;
      learn(ans);
      if (ans.outcome == serenity_dp_outcome::no_solution) conclude_none_below(limit);
      return finish();
    }
  }

  // The layered search alone (Algorithm 1), pruned at the incumbent and the budget.
  void solve_layered(serenity_segment_answer& a) {
    if (settled_by_bounds()) return;
    const std::int64_t limit = std::min(best_peak_ - 1, budget_cap());
    if (attempt(a, limit) == serenity_dp_outcome::no_solution) conclude_none_below(limit);
  }

  // The state of a bisection that goes on over several calls (slices).
  struct bisection {
    std::int64_t step = 1;           // the gcd of every bytes and workspace: peaks are its multiples
    std::int64_t hi = std::numeric_limits<std::int64_t>::max();  // the window's top
    bool first = true;               // untimed: the first question is whether the incumbent is optimal
    bool round_timed_out = false;    // timed: an attempt of this round ran out of time
    std::chrono::duration<double> per_attempt{0};  // timed: the time of one decision
  };
  enum class bisect_end { settled, paused, stopped };

  bisection start_bisection(bool timed) const {
    bisection b;
    std::int64_t step = 0;
    for (std::size_t v = 0; v < g_.size(); ++v) step = std::gcd(step, std::gcd(g_.bytes(v), g_.workspace(v)));
    b.step = std::max<std::int64_t>(step, 1);
    b.first = !timed;
    b.per_attempt = attempt_limit();
    return b;
  }

  // The decider's counts and memory in the segment's stats (once, when it is done).
  void add_decider_stats(serenity_segment_answer& a, const serenity_decider& decider) {
    a.stats.states_expanded += decider.expanded();
    a.stats.states_stored += decider.stored();
    search_bytes_ = std::max<std::uint64_t>(search_bytes_, static_cast<std::uint64_t>(decider.peak_bytes()));
    a.stats.search_bytes = search_bytes_;
  }

  // Bisection over tau in [lower bound, incumbent - 1] with exact decisions
  // (detail/serenity_decision.hpp): a yes lowers the incumbent to the order found, a no raises the
  // lower bound to tau + 1. Every peak is a sum of bytes and workspaces, so only multiples of their
  // gcd are asked. Untimed (soft_budget off): the first question is whether the incumbent is
  // optimal, and the bisection pauses when the decider has expanded `until` signatures in all (the
  // next call with the same `b` asks the same tau, which goes on where it paused). Timed
  // (soft_budget bounded): each decision gets attempt_time_limit; one that times out lowers the top
  // of the window (smaller taus prune more), and a window that closes without a proof reopens
  // with twice the time. stopped when a global limit stopped the search.
  bisect_end bisect(serenity_decider& decider, bool timed, bisection& b,
                    std::uint64_t until = std::numeric_limits<std::uint64_t>::max()) {
    const std::int64_t step = b.step;
    const auto round_up = [&](std::int64_t x) { return x % step == 0 ? x : x + (step - x % step); };
    const auto round_down = [&](std::int64_t x) { return x - ((x % step) + step) % step; };
    bisect_end end = bisect_end::settled;
    while (std::max(lb_, target_) < best_peak_) {
      lb_ = round_up(lb_);
      const std::int64_t cap = round_down(std::min(best_peak_ - 1, budget_cap()));  // look for peaks <= cap
      if (lb_ > cap) break;
      b.hi = std::min(b.hi, cap);
      if (b.hi < lb_) {
        if (!b.round_timed_out) break;  // only memory limits stopped attempts: more time will not help
        b.round_timed_out = false;
        b.hi = cap;
        b.per_attempt *= 2;
      }
      const std::int64_t lo = std::min(b.hi, round_up(std::max(lb_, target_)));
      const std::int64_t tau = b.first ? b.hi : lo + (b.hi - lo) / step / 2 * step;
      if (!timed && decider.expanded() >= until) {
        end = bisect_end::paused;
        break;
      }
      const auto out = timed ? decider.decide(tau, std::numeric_limits<std::uint64_t>::max(),
                                              deadline_after(std::chrono::steady_clock::now(), b.per_attempt))
                             : decider.decide(tau, until - decider.expanded());
#ifdef MEMSCHED_SERENITY_TRACE
      std::fprintf(stderr, "decide %lld in [%lld, %lld]: %d, expanded %llu stored %llu\n", (long long)tau, (long long)lo,
                   (long long)b.hi, (int)out, (unsigned long long)decider.expanded(), (unsigned long long)decider.stored());
#endif
      if (out == serenity_decision::paused) {
        end = bisect_end::paused;  // the same tau is asked again at the next call
        break;
      }
      b.first = false;
      if (out == serenity_decision::yes) {
        consider(decider.order(), order_peak_unchecked(g_, decider.order()));
      } else if (out == serenity_decision::no) {
        lb_ = tau + 1;
        report();
      } else if (std::chrono::steady_clock::now() >= deadline_ || !timed) {
        last_out_of_time_ = decider.out_of_time();
        end = bisect_end::stopped;
        break;
      } else {
        b.round_timed_out |= decider.out_of_time();
        b.hi = tau - step;
      }
    }
    if (end != bisect_end::paused) (void)settled_by_bounds();
    return end;
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
                                 : attempt(a, tau, deadline_after(std::chrono::steady_clock::now(), per_attempt));
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
    if (!decider.usable()) return;
    bisection b = start_bisection(true);
    (void)bisect(decider, true, b);
    add_decider_stats(a, decider);
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
  const serenity_baselines* baselines_ = nullptr;
  bool last_out_of_time_ = false;
  bool proven_ = false, infeasible_ = false;
};

}  // namespace memsched::detail
