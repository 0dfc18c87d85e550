#pragma once
// Serenity (Ahn et al., "Ordering Chaos: Memory-Aware Scheduling of Irregularly Wired Neural
// Networks for Edge Devices", MLSys 2020): the peak-memory-optimal order of a dataflow graph by
// dynamic programming over signatures (Algorithm 1), adaptive soft budgeting (Algorithm 2) and
// divide and conquer over single-node cuts. See docs/serenity.md.

#include <memsched/core/status.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/order/detail/serenity_decision.hpp>
#include <memsched/order/detail/serenity_dp.hpp>
#include <memsched/order/dfs.hpp>
#include <memsched/order/greedy.hpp>
#include <memsched/order/kahn.hpp>
#include <memsched/order/order_result.hpp>
#include <memsched/order/peak_lower_bound.hpp>
#include <memsched/order/single_node_cuts.hpp>
#include <memsched/sim/simulate_order.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

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
  /// the peak) without branching. Keeps optimality (docs/serenity.md); off only for experiments.
  bool free_moves = true;
  /// Width of the beam search that seeds the upper bound (0: none; Kahn and greedy orders only).
  std::size_t beam_width = 64;
  /// Signatures the decision searches (forward and backward depth first, bisection over the peak)
  /// may expand per segment before the layered dynamic program takes over (0: layered only).
  std::uint64_t decision_budget = std::uint64_t{1} << 19;
};

namespace detail {

struct serenity_segment {
  memory_graph graph;                  // the lead cut (if any) first, then the segment's vertices
  std::vector<std::size_t> global;     // local index -> index in the whole graph
  bool has_lead = false;               // local vertex 0 is the previous cut, already run
  std::int64_t base = 0;               // outputs resident from earlier segments
};

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
  serenity_solver(const memory_graph& g, const serenity_options& opt, std::optional<std::int64_t> budget,
                  std::chrono::steady_clock::time_point deadline, serenity_memory_pool& pool,
                  std::int64_t target = std::numeric_limits<std::int64_t>::lowest())
      : g_(g), opt_(opt), budget_(budget), deadline_(deadline), pool_(pool), target_(target) {}

  serenity_segment_answer solve() {
    serenity_segment_answer a;
    const std::int64_t lb0 = peak_lower_bound(g_);
    lb_ = lb0;
    // Incumbents: Kahn (the paper's tau_max), greedy, and a narrow beam search.
    const auto kahn = kahn_order(g_);
    kahn_peak_ = kahn.peak_bytes;
    consider(kahn.order, kahn.peak_bytes);
    auto greedy = serenity_greedy_order(g_);
    consider(greedy, order_peak_unchecked(g_, greedy));
    const auto dfs = dfs_order(g_);
    consider(dfs.order, dfs.peak_bytes);
    const auto greedy2 = greedy_order(g_);
    consider(greedy2.order, greedy2.peak_bytes);
    if (opt_.beam_width > 0 && best_peak_ > lb_) {
      serenity_dp_request r = request(best_peak_ - 1, opt_.beam_width, true);
      auto ans = run_serenity_dp(g_, r);
      add_stats(a.stats, ans.stats);
      if (ans.outcome == serenity_dp_outcome::solved) consider(ans.order, ans.peak);
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
    }
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
    return ans.outcome;
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
    auto per_attempt = std::chrono::duration_cast<std::chrono::steady_clock::duration>(opt_.attempt_time_limit);
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
      const auto out = timed ? decider.decide(tau, std::numeric_limits<std::uint64_t>::max(), std::chrono::steady_clock::now() + per_attempt)
                             : decider.decide(tau, opt_.decision_budget - decider.expanded());
#ifdef MEMSCHED_SERENITY_TRACE
      std::fprintf(stderr, "decide %lld in [%lld, %lld]: %d, expanded %llu stored %llu\n", (long long)tau, (long long)lo,
                   (long long)hi, (int)out, (unsigned long long)decider.expanded(), (unsigned long long)decider.stored());
#endif
      if (out == serenity_decision::yes) {
        consider(decider.order(), order_peak_unchecked(g_, decider.order()));
      } else if (out == serenity_decision::no) {
        lb_ = tau + 1;
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
    auto per_attempt = std::chrono::duration_cast<std::chrono::steady_clock::duration>(opt_.attempt_time_limit);
    while (std::chrono::steady_clock::now() < deadline_) {
      const auto out = tau < lb_ ? serenity_dp_outcome::no_solution
                                 : attempt(a, tau, false, std::chrono::steady_clock::now() + per_attempt);
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
  std::int64_t best_peak_ = 0, lb_ = 0, kahn_peak_ = 0;
  std::uint64_t search_bytes_ = 0;
  std::int64_t target_;
  bool last_out_of_time_ = false;
  bool proven_ = false, infeasible_ = false;
};

/// Splits g at its single-node cuts (or returns one segment holding g).
inline std::vector<serenity_segment> serenity_segments(const memory_graph& g, bool divide) {
  std::vector<serenity_segment> segs;
  const std::size_t n = g.size();
  const auto& topo = g.topological_order();
  std::vector<std::size_t> ends;  // exclusive end positions of segments
  if (divide) {
    for (std::size_t c : single_node_cut_positions(g))
      if (c > 0) ends.push_back(c + 1);
  }
  if (ends.empty() || ends.back() != n) ends.push_back(n);
  std::vector<std::uint32_t> local(n, std::numeric_limits<std::uint32_t>::max());
  // Outputs at positions before the lead cut stay resident through the segment.
  std::vector<std::int64_t> out_prefix(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) out_prefix[i + 1] = out_prefix[i] + (g.is_output(topo[i]) ? g.bytes(topo[i]) : 0);
  std::size_t begin = 0;
  for (std::size_t end : ends) {
    serenity_segment s;
    s.has_lead = begin > 0;
    if (s.has_lead) s.global.push_back(topo[begin - 1]);
    for (std::size_t i = begin; i < end; ++i) s.global.push_back(topo[i]);
    for (std::size_t k = 0; k < s.global.size(); ++k) local[s.global[k]] = static_cast<std::uint32_t>(k);
    memory_graph_data d;
    d.num_nodes = s.global.size();
    d.bytes.resize(d.num_nodes);
    d.workspace.resize(d.num_nodes);
    d.cost.resize(d.num_nodes);
    d.ids.resize(d.num_nodes);
    std::vector<std::size_t> outs;
    for (std::size_t k = 0; k < d.num_nodes; ++k) {
      const std::size_t v = s.global[k];
      d.bytes[k] = g.bytes(v);
      d.workspace[k] = g.workspace(v);
      d.cost[k] = g.cost(v);
      d.ids[k] = g.id(v);
      if (g.is_output(v) || (end < n && k + 1 == d.num_nodes)) outs.push_back(k);
      for (auto w : g.successors(v))
        if (local[w] != std::numeric_limits<std::uint32_t>::max() && (k > 0 || !s.has_lead || local[w] > 0))
          d.edges.emplace_back(k, local[w]);
    }
    d.outputs = outs;
    s.base = s.has_lead ? out_prefix[begin - 1] : 0;
    for (std::size_t v : s.global) local[v] = std::numeric_limits<std::uint32_t>::max();
    s.graph = memory_graph(std::move(d), "serenity_order");
    segs.push_back(std::move(s));
    begin = end;
  }
  return segs;
}

}  // namespace detail

/// The order of minimum peak memory (the model of simulate_order), by Serenity's dynamic program
/// over signatures with divide and conquer at single-node cuts and optional soft budgeting.
///
/// Returns status optimal with lower_bound == peak_bytes when the search completes; feasible with
/// the best order found and a proven lower bound when time_limit, max_states or max_bytes stop it;
/// infeasible when `budget` is below the optimum (the order is then the best one found);
/// time_limit when a budget was given and no order within it was found before a limit.
/// Worst case exponential (O(number of down-closed vertex sets * width)); memory is capped by
/// max_bytes. Deterministic for the same input and options unless a time limit interrupts.
/// Throws std::invalid_argument naming the option on a negative budget or zero limits, and what
/// make_memory_graph throws (cycle_error, graph_error).
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] order_result serenity_order(const G& graph, const serenity_options& options, const Maps&... maps) {
  const auto start = std::chrono::steady_clock::now();
  if (options.budget && *options.budget < 0) throw std::invalid_argument("serenity_order: budget must be >= 0");
  if (options.time_limit && options.time_limit->count() < 0)
    throw std::invalid_argument("serenity_order: time_limit must be >= 0");
  if (options.attempt_time_limit.count() <= 0)
    throw std::invalid_argument("serenity_order: attempt_time_limit must be > 0");
  if (options.max_states == 0) throw std::invalid_argument("serenity_order: max_states must be > 0");
  if (options.max_bytes == 0) throw std::invalid_argument("serenity_order: max_bytes must be > 0");
  const memory_graph& g = detail::to_memory_graph(graph, maps...);

  order_result result;
  if (g.empty()) {
    result.status = solve_status::optimal;
    return result;
  }
  // The baselines first: when one meets the simple lower bound there is nothing to search.
  {
    const std::int64_t lb = peak_lower_bound(g);
    for (order_result base : {kahn_order(g), greedy_order(g), dfs_order(g)}) {
      if (base.peak_bytes == lb && (!options.budget || lb <= *options.budget)) {
        result.order = std::move(base.order);
        result.peak_bytes = lb;
        result.lower_bound = lb;
        result.status = solve_status::optimal;
        result.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return result;
      }
    }
  }
  auto deadline = std::chrono::steady_clock::time_point::max();
  if (options.time_limit)
    deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                           std::min(*options.time_limit, std::chrono::duration<double>(1e9)));
  detail::serenity_memory_pool pool;
  pool.cap = static_cast<std::int64_t>(std::min<std::uint64_t>(options.max_bytes, std::numeric_limits<std::int64_t>::max()));

  std::vector<detail::serenity_segment> segs = detail::serenity_segments(g, options.divide);
  std::vector<detail::serenity_segment_answer> answers(segs.size());
  // A proven lower bound of the whole graph: a segment need not go below it (minus its base).
  std::int64_t whole_lb = peak_lower_bound(g);
  for (const auto& s : segs) whole_lb = std::max(whole_lb, s.base + peak_lower_bound(s.graph));
  auto solve_one = [&](std::size_t k) {
    std::optional<std::int64_t> budget;
    if (options.budget) budget = *options.budget - segs[k].base;
    if (budget && *budget < 0) {
      answers[k].status = solve_status::infeasible;
      answers[k].order = kahn_order(segs[k].graph).order;
      answers[k].peak = detail::order_peak_unchecked(segs[k].graph, answers[k].order);
      answers[k].lower_bound = peak_lower_bound(segs[k].graph);
      return;
    }
    answers[k] = detail::serenity_solver(segs[k].graph, options, budget, deadline, pool, whole_lb - segs[k].base).solve();
  };
  // Largest segments first; each thread takes the next one. Results land in fixed slots.
  std::vector<std::size_t> by_size(segs.size());
  for (std::size_t k = 0; k < segs.size(); ++k) by_size[k] = k;
  std::stable_sort(by_size.begin(), by_size.end(),
                   [&](std::size_t a, std::size_t b) { return segs[a].graph.size() > segs[b].graph.size(); });
  unsigned threads = options.threads == 0 ? std::max(1u, std::thread::hardware_concurrency()) : options.threads;
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, segs.size()));
  if (threads <= 1) {
    for (std::size_t k : by_size) solve_one(k);
  } else {
    std::atomic<std::size_t> next{0};
    std::vector<std::exception_ptr> errors(threads);
    std::vector<std::thread> pool_threads;
    for (unsigned t = 0; t < threads; ++t)
      pool_threads.emplace_back([&, t] {
        try {
          for (std::size_t i; (i = next.fetch_add(1)) < by_size.size();) solve_one(by_size[i]);
        } catch (...) {
          errors[t] = std::current_exception();
        }
      });
    for (auto& th : pool_threads) th.join();
    for (auto& e : errors)
      if (e) std::rethrow_exception(e);
  }

  // Concatenate; the peak is the largest (base + segment peak), and so is the bound.
  bool all_optimal = true, any_infeasible = false, any_time_limit = false;
  result.order.reserve(g.size());
  for (std::size_t k = 0; k < segs.size(); ++k) {
    const auto& a = answers[k];
    for (std::size_t v : a.order)
      if (!(segs[k].has_lead && v == 0)) result.order.push_back(segs[k].global[v]);
    result.lower_bound = std::max(result.lower_bound, segs[k].base + a.lower_bound);
    all_optimal &= a.status == solve_status::optimal;
    any_infeasible |= a.status == solve_status::infeasible;
    any_time_limit |= a.status == solve_status::time_limit;
    detail::add_stats(result.stats, a.stats);
  }
  result.peak_bytes = detail::order_peak_unchecked(g, result.order);
  result.lower_bound = std::max(result.lower_bound, peak_lower_bound(g));
  if (any_infeasible) {
    result.status = solve_status::infeasible;
  } else if (any_time_limit || (options.budget && result.peak_bytes > *options.budget)) {
    result.status = solve_status::time_limit;
  } else if (all_optimal || result.lower_bound >= result.peak_bytes) {
    result.status = solve_status::optimal;
    result.lower_bound = result.peak_bytes;
  } else {
    result.status = solve_status::feasible;
  }
  result.lower_bound = std::min(result.lower_bound, result.status == solve_status::infeasible
                                                        ? result.lower_bound
                                                        : result.peak_bytes);
  result.stats.search_bytes = static_cast<std::uint64_t>(pool.peak.load());
  result.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

namespace detail {
template <class... Maps>
inline constexpr bool starts_with_serenity_options = false;
template <class First, class... Rest>
inline constexpr bool starts_with_serenity_options<First, Rest...> = std::is_same_v<std::remove_cvref_t<First>, serenity_options>;
}  // namespace detail

/// serenity_order with default options.
template <class G, class... Maps>
  requires(!detail::starts_with_serenity_options<Maps...>) && memory_graph_source<G, Maps...>
[[nodiscard]] order_result serenity_order(const G& graph, const Maps&... maps) {
  return serenity_order(graph, serenity_options{}, maps...);
}

}  // namespace memsched
