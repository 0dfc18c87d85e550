#pragma once
// Gecode 6 backend for cp_model (link memsched::gecode). Two searches: branch and bound (proves
// optima on small models) and large-neighbourhood search from a start assignment (how Gecode, which
// has no clause learning, gets anywhere on real graphs). See docs/moccasin.md for the mapping.

#include <memsched/solver/cp_concepts.hpp>
#include <memsched/solver/cp_model.hpp>
#include <memsched/solver/solver_options.hpp>

#include <gecode/int.hh>
#include <gecode/minimodel.hh>
#include <gecode/search.hh>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace memsched {

/// How gecode_backend searches.
enum class gecode_search : unsigned char {
  automatic,         ///< Branch and bound for a share of the time (proof), then LNS from its best or the start.
  branch_and_bound,  ///< Complete branch and bound only.
  lns,               ///< Large-neighbourhood search only (needs a start or finds one by branch and bound).
};

/// Options of the Gecode backend beyond solver_options.
struct gecode_options {
  gecode_search search = gecode_search::automatic;
  std::uint64_t seed = 1;               ///< LNS neighbourhoods are drawn from this seed.
  double proof_share = 0.05;            ///< automatic: share of the time limit given to branch and bound first.
  unsigned long proof_fail_limit = 200000;  ///< automatic: failures allowed to that first branch and bound.
  double lns_fraction = 0.1;            ///< Initial share of the groups freed per neighbourhood (adapted).
  unsigned long lns_fail_limit = 300;   ///< Failures allowed per neighbourhood search.
  std::optional<unsigned long> lns_iterations;  ///< Stop LNS after this many neighbourhoods (determinism without a clock).
};

namespace detail {

class gecode_space : public Gecode::Space {
 public:
  Gecode::IntVarArray x;
  Gecode::IntVar obj;

  gecode_space() = default;
  gecode_space(gecode_space& other) : Gecode::Space(other) {
    x.update(*this, other.x);
    obj.update(*this, other.obj);
  }
  Gecode::Space* copy() override { return new gecode_space(*this); }
  void constrain(const Gecode::Space& best) override {
    Gecode::rel(*this, obj, Gecode::IRT_LE, static_cast<const gecode_space&>(best).obj.val());
  }
};

struct gecode_unsupported {
  std::string what;
};

/// Posts a cp_model into a gecode_space. Throws gecode_unsupported on numbers out of Gecode's range.
class gecode_builder {
 public:
  std::int64_t obj_scale = 1;
  std::int64_t obj_offset = 0;

  gecode_builder(const cp_model& m, gecode_space& s) : m_(m), s_(s) {}

  void build() {
    using namespace Gecode;
    const std::size_t n = m_.num_variables();
    s_.x = IntVarArray(s_, static_cast<int>(n));
    bools_.assign(n, BoolVar());
    negs_.assign(n, BoolVar());
    has_bool_.assign(n, 0);
    has_neg_.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      const auto& v = m_.variables()[i];
      if (!fits(v.lower) || !fits(v.upper)) unsupported("variable " + std::to_string(i) + " (" + v.name + ") has bounds outside Gecode's int range");
      if (v.domain.empty()) {
        s_.x[idx(i)] = IntVar(s_, static_cast<int>(v.lower), static_cast<int>(v.upper));
      } else {
        IntArgs vals;
        for (auto d : v.domain) vals << static_cast<int>(d);
        s_.x[idx(i)] = IntVar(s_, IntSet(vals));
      }
    }
    for (const auto& iv : m_.intervals()) {
      rel(s_, s_.x[idx(iv.length)], IRT_GQ, 0);
      post_linear({{iv.start, 1}, {iv.length, 1}, {iv.end, -1}}, 0, 0,
                  iv.presence ? std::vector<cp_literal>{{*iv.presence, true}} : std::vector<cp_literal>{});
    }
    for (const auto& c : m_.linears()) post_linear(c.terms, c.lower, c.upper, c.enforce);
    for (const auto& c : m_.clauses()) {
      BoolVarArgs pos, neg;
      for (const auto& l : c.literals) (l.positive ? pos : neg) << bool_of(l.variable);
      clause(s_, BOT_OR, pos, neg, 1);
    }
    for (const auto& c : m_.cumulatives()) post_cumulative(c);
    for (const auto& c : m_.all_differents()) {
      IntVarArgs xs;
      for (auto v : c.variables) xs << s_.x[idx(v)];
      if (c.presence.empty()) {
        distinct(s_, xs);
      } else {
        BoolVarArgs bs;
        for (auto p : c.presence) bs << bool_of(p);
        distinct(s_, bs, xs);
      }
    }
    for (const auto& c : m_.elements()) {
      IntArgs table;
      for (auto t : c.table) {
        if (!fits(t)) unsupported("element table value outside Gecode's int range");
        table << static_cast<int>(t);
      }
      element(s_, table, s_.x[idx(c.index)], s_.x[idx(c.result)]);
    }
    for (const auto& c : m_.covers()) post_cover(c);
    post_objective();
    // Branching: the hinted variables in order, then the rest, then the helper booleans.
    IntVarArgs first;
    std::vector<char> hinted(n, 0);
    for (auto v : m_.branch_order)
      if (v < n && !hinted[v]) {
        hinted[v] = 1;
        first << s_.x[idx(v)];
      }
    IntVarArgs rest;
    for (std::size_t i = 0; i < n; ++i)
      if (!hinted[i]) rest << s_.x[idx(i)];
    if (first.size() > 0) branch(s_, first, INT_VAR_NONE(), INT_VAL_MIN());
    if (rest.size() > 0) branch(s_, rest, INT_VAR_SIZE_MIN(), INT_VAL_MIN());
    if (helpers_.size() > 0) branch(s_, helpers_, BOOL_VAR_NONE(), BOOL_VAL_MAX());
    branch(s_, s_.obj, INT_VAL_MIN());
  }

 private:
  static constexpr std::int64_t lim = Gecode::Int::Limits::max;
  static bool fits(std::int64_t v) { return v >= -lim && v <= lim; }
  static int idx(std::size_t i) { return static_cast<int>(i); }
  [[noreturn]] static void unsupported(std::string what) { throw gecode_unsupported{"gecode_backend: " + std::move(what)}; }

  Gecode::BoolVar bool_of(std::size_t v) {
    if (!has_bool_[v]) {
      bools_[v] = Gecode::BoolVar(s_, 0, 1);
      Gecode::channel(s_, bools_[v], s_.x[idx(v)]);
      has_bool_[v] = 1;
    }
    return bools_[v];
  }
  Gecode::BoolVar literal(const cp_literal& l) {
    if (l.positive) return bool_of(l.variable);
    if (!has_neg_[l.variable]) {
      negs_[l.variable] = Gecode::BoolVar(s_, 0, 1);
      Gecode::rel(s_, bool_of(l.variable), Gecode::IRT_NQ, negs_[l.variable]);
      has_neg_[l.variable] = 1;
    }
    return negs_[l.variable];
  }
  /// The conjunction of the literals as one boolean (nullopt: no literal, always enforced).
  std::optional<Gecode::BoolVar> conjunction(const std::vector<cp_literal>& lits) {
    if (lits.empty()) return std::nullopt;
    if (lits.size() == 1) return literal(lits[0]);
    Gecode::BoolVarArgs pos, neg;
    for (const auto& l : lits) (l.positive ? pos : neg) << bool_of(l.variable);
    Gecode::BoolVar z(s_, 0, 1);
    Gecode::clause(s_, Gecode::BOT_AND, pos, neg, z);
    return z;
  }

  static std::int64_t floor_div(std::int64_t a, std::int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
  static std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return -floor_div(-a, b); }

  void post_linear(const std::vector<cp_term>& terms_in, std::int64_t lower, std::int64_t upper, const std::vector<cp_literal>& enforce) {
    using namespace Gecode;
    // Merge duplicate variables, drop zero coefficients, divide by the gcd.
    std::vector<cp_term> terms = terms_in;
    std::sort(terms.begin(), terms.end(), [](const cp_term& a, const cp_term& b) { return a.variable < b.variable; });
    std::vector<cp_term> merged;
    for (const auto& t : terms) {
      if (!merged.empty() && merged.back().variable == t.variable) merged.back().coefficient += t.coefficient;
      else merged.push_back(t);
    }
    std::erase_if(merged, [](const cp_term& t) { return t.coefficient == 0; });
    std::int64_t g = 0;
    for (const auto& t : merged) g = std::gcd(g, t.coefficient);
    __int128 lo_sum = 0, hi_sum = 0;
    for (auto& t : merged) {
      t.coefficient /= g;
      if (!fits(t.coefficient)) unsupported("linear coefficient outside Gecode's int range");
      const auto& v = m_.variables()[t.variable];
      const __int128 a = static_cast<__int128>(t.coefficient) * v.lower, b = static_cast<__int128>(t.coefficient) * v.upper;
      lo_sum += std::min(a, b);
      hi_sum += std::max(a, b);
    }
    const auto cond = conjunction(enforce);
    auto fail_if_enforced = [&] {
      if (cond) rel(s_, *cond, IRT_EQ, 0);
      else s_.fail();
    };
    if (merged.empty()) {
      if (lower > 0 || upper < 0) fail_if_enforced();
      return;
    }
    const bool has_lo = lower != cp_model::min_value, has_hi = upper != cp_model::max_value;
    std::int64_t lo = has_lo ? ceil_div(lower, g) : 0, hi = has_hi ? floor_div(upper, g) : 0;
    const bool need_lo = has_lo && lo_sum < lo, need_hi = has_hi && hi_sum > hi;
    if (has_lo && has_hi && lo > hi) {
      fail_if_enforced();
      return;
    }
    if ((need_lo && !fits(lo)) || (need_hi && !fits(hi)) || hi_sum - lo_sum > static_cast<__int128>(std::numeric_limits<int>::max()) * 64)
      unsupported("linear constraint with a range outside Gecode's int range");
    IntArgs a;
    IntVarArgs xs;
    for (const auto& t : merged) {
      a << static_cast<int>(t.coefficient);
      xs << s_.x[idx(t.variable)];
    }
    auto post = [&](IntRelType r, std::int64_t c) {
      if (cond) linear(s_, a, xs, r, static_cast<int>(c), Reify(*cond, RM_IMP));
      else linear(s_, a, xs, r, static_cast<int>(c));
    };
    if (need_lo && need_hi && lo == hi) {
      post(IRT_EQ, lo);
      return;
    }
    if (need_lo) post(IRT_GQ, lo);
    if (need_hi) post(IRT_LQ, hi);
  }

  void post_cumulative(const cp_cumulative& c) {
    using namespace Gecode;
    std::int64_t g = 0;
    for (const auto& t : c.tasks) g = std::gcd(g, t.demand);
    if (g == 0) return;  // No demand: nothing to constrain.
    IntVarArgs st, len, en;
    IntArgs use;
    BoolVarArgs mand;
    for (const auto& t : c.tasks) {
      if (t.demand == 0) continue;
      const auto& iv = m_.intervals()[t.interval];
      if (!fits(t.demand / g)) unsupported("cumulative demand outside Gecode's int range");
      st << s_.x[idx(iv.start)];
      len << s_.x[idx(iv.length)];
      en << s_.x[idx(iv.end)];
      use << static_cast<int>(t.demand / g);
      mand << (iv.presence ? bool_of(*iv.presence) : BoolVar(s_, 1, 1));
    }
    IntVar cap;
    if (c.capacity_variable) {
      const auto& v = m_.variables()[*c.capacity_variable];
      IntVar C = s_.x[idx(*c.capacity_variable)];
      if (g == 1) {
        cap = C;
      } else {  // cap = floor(C / g): g*cap <= C <= g*cap + g - 1.
        cap = IntVar(s_, static_cast<int>(floor_div(v.lower, g)), static_cast<int>(floor_div(v.upper, g)));
        if (!fits(g)) unsupported("cumulative demand gcd outside Gecode's int range");
        linear(s_, IntArgs{static_cast<int>(g), -1}, IntVarArgs{cap, C}, IRT_LQ, 0);
        linear(s_, IntArgs{static_cast<int>(g), -1}, IntVarArgs{cap, C}, IRT_GQ, static_cast<int>(1 - g));
      }
      rel(s_, cap, IRT_GQ, 0);
    } else {
      const std::int64_t k = floor_div(c.capacity, g);
      if (k < 0) {
        s_.fail();
        return;
      }
      cap = IntVar(s_, static_cast<int>(std::min(k, lim)), static_cast<int>(std::min(k, lim)));
    }
    cumulative(s_, cap, st, len, en, use, mand);
  }

  // Reservoir-style cover: present(target) -> OR_c h_c, h_c -> present(c) & start(c) < start(target) < end(c).
  void post_cover(const cp_cover& c) {
    using namespace Gecode;
    const auto& t = m_.intervals()[c.target];
    BoolVarArgs pos, neg;
    if (t.presence) neg << bool_of(*t.presence);
    for (auto i : c.candidates) {
      const auto& iv = m_.intervals()[i];
      BoolVar h(s_, 0, 1);
      helpers_ << h;
      pos << h;
      if (iv.presence) rel(s_, h, BOT_IMP, bool_of(*iv.presence), 1);
      linear(s_, IntArgs{1, -1}, IntVarArgs{s_.x[idx(iv.start)], s_.x[idx(t.start)]}, IRT_LQ, -1, Reify(h, RM_IMP));
      linear(s_, IntArgs{1, -1}, IntVarArgs{s_.x[idx(iv.end)], s_.x[idx(t.start)]}, IRT_GQ, 1, Reify(h, RM_IMP));
    }
    clause(s_, BOT_OR, pos, neg, 1);
  }

  void post_objective() {
    using namespace Gecode;
    std::vector<cp_term> terms;
    for (const auto& t : m_.objective)
      if (t.coefficient != 0) terms.push_back(t);
    obj_offset = m_.objective_offset;
    std::int64_t g = 0;
    for (const auto& t : terms) g = std::gcd(g, t.coefficient);
    obj_scale = g == 0 ? 1 : std::abs(g);
    __int128 lo = 0, hi = 0;
    IntArgs a;
    IntVarArgs xs;
    for (const auto& t : terms) {
      const std::int64_t c = t.coefficient / obj_scale;
      if (!fits(c)) unsupported("objective coefficient outside Gecode's int range");
      const auto& v = m_.variables()[t.variable];
      lo += std::min(static_cast<__int128>(c) * v.lower, static_cast<__int128>(c) * v.upper);
      hi += std::max(static_cast<__int128>(c) * v.lower, static_cast<__int128>(c) * v.upper);
      a << static_cast<int>(c);
      xs << s_.x[idx(t.variable)];
    }
    if (lo < -lim || hi > lim) unsupported("objective range outside Gecode's int range (scale the costs)");
    s_.obj = IntVar(s_, static_cast<int>(lo), static_cast<int>(hi));
    if (xs.size() > 0) linear(s_, a, xs, IRT_EQ, s_.obj);
  }

  const cp_model& m_;
  gecode_space& s_;
  std::vector<Gecode::BoolVar> bools_, negs_;
  std::vector<char> has_bool_, has_neg_;
  Gecode::BoolVarArgs helpers_;
};

/// The search nodes one solve may spend over all its Gecode engines (solver_options::node_limit).
struct gecode_node_budget {
  std::optional<std::uint64_t> limit;
  std::uint64_t used = 0;  ///< Nodes of the engines that have finished.
  bool hit = false;
  [[nodiscard]] bool exhausted() const noexcept { return limit && used >= *limit; }
};

/// Stops a search at a deadline, after a number of failures (0: no failure limit), or when the
/// solve's node budget (if any) is spent.
class gecode_stop : public Gecode::Search::Stop {
 public:
  using clock = std::chrono::steady_clock;
  gecode_stop(std::optional<clock::time_point> deadline, unsigned long fail_limit, gecode_node_budget* nodes = nullptr)
      : deadline_(deadline), fail_limit_(fail_limit), nodes_(nodes) {}
  bool stop(const Gecode::Search::Statistics& s, const Gecode::Search::Options&) override {
    if (fail_limit_ != 0 && s.fail > fail_limit_) return true;
    if (nodes_ != nullptr && nodes_->limit && nodes_->used + s.node >= *nodes_->limit) {
      nodes_->hit = true;
      return true;
    }
    // The clock every 16 calls, from the first (an expired limit stops at once).
    if (deadline_ && (calls_++ & 15) == 0 && clock::now() >= *deadline_) timed_out_ = true;
    return timed_out_;
  }
  [[nodiscard]] bool timed_out() const noexcept { return timed_out_; }

 private:
  std::optional<clock::time_point> deadline_;
  unsigned long fail_limit_;
  gecode_node_budget* nodes_;
  unsigned long calls_ = 0;
  bool timed_out_ = false;
};

/// One gecode_backend::solve: its clock, its node budget and the best solution so far, and the
/// steps that search from the root space (the start's completion, branch and bound) and turn what
/// they found into `result`.
struct gecode_solve_state {
  using clock = std::chrono::steady_clock;

  gecode_solve_state(const cp_model& m, const solver_options& o, solver_result& r, clock::time_point start,
                     std::optional<clock::time_point> end, std::int64_t scale, std::int64_t offset)
      : model(m), options(o), result(r), t0(start), deadline(end), obj_scale(scale), obj_offset(offset), nodes{o.node_limit} {}

  const cp_model& model;
  const solver_options& options;
  solver_result& result;  ///< result.bound is the root's bound during the search.
  clock::time_point t0;
  std::optional<clock::time_point> deadline;
  std::int64_t obj_scale, obj_offset;  ///< Of the builder: objective = scaled * obj_scale + obj_offset.
  std::int64_t root_bound = 0;         ///< The root space's objective lower bound, scaled.
  gecode_node_budget nodes;
  std::vector<std::int64_t> best;
  std::optional<std::int64_t> best_obj;
  bool proven = false;

  [[nodiscard]] double seconds() const { return std::chrono::duration<double>(clock::now() - t0).count(); }
  [[nodiscard]] double real(std::int64_t scaled) const { return static_cast<double>(scaled * obj_scale + obj_offset); }

  /// Makes solution `s` the incumbent and reports it to the observer.
  void record(const gecode_space& s) {
    std::vector<std::int64_t> vals(model.num_variables());
    for (std::size_t i = 0; i < vals.size(); ++i) vals[i] = s.x[static_cast<int>(i)].val();
    best = std::move(vals);
    best_obj = s.obj.val();
    options.observer.on_incumbent(seconds(), real(*best_obj), result.bound);
  }

  /// True when the incumbent meets the root bound or the relative gap.
  [[nodiscard]] bool gap_closed() const {
    if (!best_obj) return false;
    const double z = real(*best_obj), b = result.bound;
    return *best_obj <= root_bound || (std::abs(z) > 0 && (z - b) / std::abs(z) <= options.relative_gap);
  }

  /// The start assignment, completed (helper variables) by a short search.
  void complete_start(const gecode_space& root) {
    if (!model.start || model.start->size() != model.num_variables()) return;
    std::unique_ptr<gecode_space> s(static_cast<gecode_space*>(root.clone()));
    bool ok = true;
    for (std::size_t i = 0; i < model.num_variables() && ok; ++i) {
      const std::int64_t v = (*model.start)[i];
      if (v == cp_model::unset) continue;
      if (v < s->x[static_cast<int>(i)].min() || v > s->x[static_cast<int>(i)].max()) ok = false;
      else Gecode::rel(*s, s->x[static_cast<int>(i)], Gecode::IRT_EQ, static_cast<int>(v));
    }
    if (ok && s->status() != Gecode::SS_FAILED) {
      gecode_stop stop(deadline, 10000, &nodes);
      Gecode::Search::Options o;
      o.stop = &stop;
      Gecode::DFS<gecode_space> e(s.get(), o);
      if (std::unique_ptr<gecode_space> sol{e.next()}) record(*sol);
      nodes.used += e.statistics().node;
    }
    if (!best_obj && options.verbosity > 0) std::cerr << "gecode_backend: the start assignment is not feasible\n";
  }

  /// Branch and bound below the incumbent: the whole time (branch_and_bound, or lns without a
  /// start until a first solution), or a share of it (automatic). True when it exhausted the space.
  bool branch_and_bound(const gecode_space& root, const gecode_options& config, std::optional<std::chrono::duration<double>> limit) {
    std::optional<clock::time_point> bab_deadline = deadline;
    unsigned long fails = 0;
    if (config.search == gecode_search::automatic) {
      fails = config.proof_fail_limit;
      if (deadline) bab_deadline = t0 + std::chrono::duration_cast<clock::duration>(*limit * config.proof_share);
    }
    std::unique_ptr<gecode_space> s(static_cast<gecode_space*>(root.clone()));
    if (best_obj) Gecode::rel(*s, s->obj, Gecode::IRT_LE, static_cast<int>(*best_obj));
    bool exhausted = false;
    for (bool again = true; again;) {
      again = false;
      gecode_stop stop(bab_deadline, fails, &nodes);
      Gecode::Search::Options o;
      o.stop = &stop;
      o.threads = static_cast<double>(solver_threads(options));
      if (s->status() == Gecode::SS_FAILED) {
        exhausted = true;
        break;
      }
      Gecode::BAB<gecode_space> e(s.get(), o);
      while (std::unique_ptr<gecode_space> sol{e.next()}) {
        record(*sol);
        if (gap_closed()) break;
      }
      nodes.used += e.statistics().node;
      if (!e.stopped() && !gap_closed()) exhausted = true;
      // automatic or lns without any solution yet: keep searching until one is found or time is up.
      if (!exhausted && !best_obj && config.search != gecode_search::branch_and_bound && !nodes.exhausted() &&
          (!deadline || clock::now() < *deadline) && (bab_deadline != deadline || fails != 0)) {
        bab_deadline = deadline;
        fails = 0;
        again = true;
      }
    }
    return exhausted;
  }

  /// The result of the search: the incumbent (re-checked against the model), its status, and notes
  /// on ignored threads and a reached node limit.
  void fill_result(const gecode_options& config) {
    result.seconds = seconds();
    if (best_obj) {
      result.objective = real(*best_obj);
      if (proven) result.bound = result.objective;
      result.status = (proven || gap_closed()) ? solve_status::optimal : solve_status::feasible;
      result.values.assign(best.begin(), best.end());
      if (auto bad = model.first_violation(best)) {
        result.status = solve_status::error;
        result.message = "gecode_backend: solution violates the model: " + *bad;
      }
    } else {
      result.status = proven ? solve_status::infeasible : solve_status::time_limit;
    }
    if (solver_threads(options) > 1 && config.search != gecode_search::branch_and_bound)
      result.message = "threads are used by branch and bound only, not by large-neighbourhood search";
    if (nodes.hit) result.message += std::string(result.message.empty() ? "" : "; ") + "node limit reached";
  }
};

/// LNS neighbourhood: the groups running nearest a random time of the incumbent's schedule,
/// widening the window until k.
inline std::vector<std::size_t> lns_window_groups(const cp_model& model, const std::vector<std::int64_t>& best, std::size_t ng, std::size_t k,
                                                  std::mt19937_64& rng) {
  std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = std::numeric_limits<std::int64_t>::min();
  for (const auto& iv : model.intervals()) {
    lo = std::min(lo, best[iv.start]);
    hi = std::max(hi, best[iv.end]);
  }
  const std::int64_t t = lo + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(std::max<std::int64_t>(1, hi - lo)));
  std::vector<std::pair<std::int64_t, std::size_t>> dist;  // distance of each group's nearest interval to t
  for (std::size_t g = 0; g < ng && g < model.group_intervals.size(); ++g) {
    std::int64_t d = std::numeric_limits<std::int64_t>::max();
    for (auto i : model.group_intervals[g]) {
      const auto& iv = model.intervals()[i];
      if (iv.presence && best[*iv.presence] == 0) continue;
      const std::int64_t s0 = best[iv.start], e0 = best[iv.end];
      d = std::min(d, t < s0 ? s0 - t : (t >= e0 ? t - e0 + 1 : 0));
    }
    dist.emplace_back(d, g);
  }
  std::shuffle(dist.begin(), dist.end(), rng);
  std::stable_sort(dist.begin(), dist.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::size_t> pick;
  for (std::size_t i = 0; i < dist.size() && pick.size() < k; ++i) pick.push_back(dist[i].second);
  return pick;
}

/// LNS neighbourhood: k groups breadth-first along group_neighbours from a random group, topped
/// up with random groups. `seen` (one entry per group, all 0) is scratch space.
inline std::vector<std::size_t> lns_neighbour_groups(const cp_model& model, std::size_t ng, std::size_t k, std::mt19937_64& rng,
                                                     std::vector<char>& seen) {
  std::vector<std::size_t> queue{static_cast<std::size_t>(rng() % ng)};
  seen[queue[0]] = 1;
  for (std::size_t head = 0; head < queue.size() && queue.size() < k; ++head) {
    if (queue[head] >= model.group_neighbours.size()) continue;
    auto nb = model.group_neighbours[queue[head]];
    std::shuffle(nb.begin(), nb.end(), rng);
    for (auto g : nb)
      if (g < ng && !seen[g] && queue.size() < k) {
        seen[g] = 1;
        queue.push_back(g);
      }
  }
  while (queue.size() < k) {  // Top up with random groups.
    const std::size_t g = static_cast<std::size_t>(rng() % ng);
    if (!seen[g]) {
      seen[g] = 1;
      queue.push_back(g);
    }
  }
  return queue;
}

/// The k groups (of ng) one LNS iteration frees, of a kind drawn from `rng`: a time window (when
/// the model has group_intervals), random groups, a run of consecutive groups, or neighbours
/// (when it has group_neighbours). `scratch` holds one entry per group.
inline std::vector<std::size_t> lns_neighbourhood(const cp_model& model, const std::vector<std::int64_t>& best, std::size_t ng, std::size_t k,
                                                  std::mt19937_64& rng, std::vector<char>& scratch) {
  std::fill(scratch.begin(), scratch.end(), 0);
  const bool windows = !model.group_intervals.empty();
  unsigned kind = static_cast<unsigned>(rng() % (model.group_neighbours.empty() ? 2 : 3));
  if (windows && rng() % 2 == 0) kind = 3;
  if (kind == 3) return lns_window_groups(model, best, ng, k, rng);
  if (kind == 0) {  // Random groups.
    std::vector<std::size_t> all(ng);
    std::iota(all.begin(), all.end(), 0);
    std::shuffle(all.begin(), all.end(), rng);
    all.resize(k);
    return all;
  }
  if (kind == 1) {  // A run of consecutive groups.
    std::vector<std::size_t> pick;
    const std::size_t a = static_cast<std::size_t>(rng() % (ng - k + 1));
    for (std::size_t g = a; g < a + k; ++g) pick.push_back(g);
    return pick;
  }
  return lns_neighbour_groups(model, ng, k, rng, scratch);
}

/// Marks in `freed` the picked groups and in `fixed_var` the variables of the other groups (a
/// variable in a freed group stays free even when another group fixes it).
inline void lns_fixed_variables(const std::vector<std::vector<std::size_t>>& groups, const std::vector<std::size_t>& pick, std::vector<char>& freed,
                                std::vector<char>& fixed_var) {
  const std::size_t ng = groups.size();
  std::fill(freed.begin(), freed.end(), 0);
  for (auto g : pick) freed[g] = 1;
  std::fill(fixed_var.begin(), fixed_var.end(), 0);
  for (std::size_t g = 0; g < ng; ++g)
    if (!freed[g])
      for (auto v : groups[g]) fixed_var[v] = 1;
  for (std::size_t g = 0; g < ng; ++g)
    if (freed[g])
      for (auto v : groups[g]) fixed_var[v] = 0;
}

}  // namespace detail

/// Solves cp_model with Gecode 6. Models cp_backend. Thread-safe (each solve has its own spaces).
class gecode_backend {
 public:
  gecode_options config;

  gecode_backend() = default;
  explicit gecode_backend(gecode_options o) : config(o) {}

  [[nodiscard]] static constexpr std::string_view name() noexcept { return "gecode"; }

  /// Solves `model`: see gecode_search for the strategy. Honours time_limit (exactly, checked
  /// during search), node_limit (search nodes over every engine of the solve: the start's
  /// completion, branch and bound, each LNS neighbourhood), threads (branch and bound only),
  /// relative_gap, verbosity (LNS statistics on stderr) and observer.on_incumbent (each better
  /// solution). values[i] is variable i. Returns
  /// `unsupported` when a number does not fit Gecode's 32-bit integers after dividing each
  /// constraint by its gcd, `error` on a Gecode exception. Never throws.
  [[nodiscard]] solver_result solve(const cp_model& model, const solver_options& options) const {
    using clock = std::chrono::steady_clock;
    const auto t0 = clock::now();
    std::optional<clock::time_point> deadline;
    const auto limit = detail::effective_time_limit(options.time_limit);
    if (limit) deadline = t0 + std::chrono::duration_cast<clock::duration>(*limit);
    solver_result result;
    try {
      std::unique_ptr<detail::gecode_space> root(new detail::gecode_space);
      detail::gecode_builder builder(model, *root);
      builder.build();
      detail::gecode_solve_state state(model, options, result, t0, deadline, builder.obj_scale, builder.obj_offset);
      if (root->status() == Gecode::SS_FAILED) {
        result.status = solve_status::infeasible;
        result.seconds = state.seconds();
        return result;
      }
      state.root_bound = root->obj.min();
      result.bound = state.real(state.root_bound);
      state.complete_start(*root);
      const bool lns_only = config.search == gecode_search::lns && state.best_obj;
      if (!lns_only && !state.gap_closed()) state.proven = state.branch_and_bound(*root, config, limit);
      if (!state.proven && state.best_obj && !state.gap_closed() && config.search != gecode_search::branch_and_bound) {
        auto record = [&state](const detail::gecode_space& s) { state.record(s); };
        state.proven = lns(model, *root, state.best, state.best_obj, record, deadline, state.nodes, options, state.root_bound);
      }
      state.fill_result(config);
      return result;
    } catch (const detail::gecode_unsupported& e) {
      result.status = solve_status::unsupported;
      result.message = e.what;
    } catch (const Gecode::Exception& e) {
      result.status = solve_status::error;
      result.message = std::string("gecode_backend: Gecode exception: ") + e.what();
    } catch (const std::exception& e) {
      result.status = solve_status::error;
      result.message = std::string("gecode_backend: ") + e.what();
    }
    result.seconds = std::chrono::duration<double>(clock::now() - t0).count();
    return result;
  }

 private:
  // Large-neighbourhood search: fix every group outside a neighbourhood to the incumbent, search the
  // rest for a better objective with a failure limit. Returns true when a neighbourhood covering
  // every group was searched exhaustively (the incumbent is optimal).
  template <class Record>
  bool lns(const cp_model& model, detail::gecode_space& root, std::vector<std::int64_t>& best,
           std::optional<std::int64_t>& best_obj, Record& record, std::optional<std::chrono::steady_clock::time_point> deadline,
           detail::gecode_node_budget& nodes, const solver_options& options, std::int64_t root_bound) const {
    using clock = std::chrono::steady_clock;
    std::vector<std::vector<std::size_t>> groups = model.groups;
    if (groups.empty())
      for (std::size_t i = 0; i < model.num_variables(); ++i) groups.push_back({i});
    const std::size_t ng = groups.size();
    std::mt19937_64 rng(config.seed);
    double fraction = std::clamp(config.lns_fraction, 0.0, 1.0);
    unsigned long iterations = 0, improvements = 0;
    std::vector<char> freed(ng), fixed_var(model.num_variables());
    while (true) {
      if (deadline && clock::now() >= *deadline) break;
      if (nodes.exhausted()) break;
      if (config.lns_iterations && iterations >= *config.lns_iterations) break;
      if (*best_obj <= root_bound) return true;
      ++iterations;
      const std::size_t k = std::clamp<std::size_t>(static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(ng))), 1, ng);
      const std::vector<std::size_t> pick = detail::lns_neighbourhood(model, best, ng, k, rng, freed);
      detail::lns_fixed_variables(groups, pick, freed, fixed_var);
      std::unique_ptr<detail::gecode_space> s(static_cast<detail::gecode_space*>(root.clone()));
      for (std::size_t i = 0; i < fixed_var.size(); ++i)
        if (fixed_var[i]) Gecode::rel(*s, s->x[static_cast<int>(i)], Gecode::IRT_EQ, static_cast<int>(best[i]));
      Gecode::rel(*s, s->obj, Gecode::IRT_LE, static_cast<int>(*best_obj));
      const auto [improved, complete] = search_neighbourhood(*s, record, deadline, nodes);
      if (improved) ++improvements;
      if (complete && k == ng) return true;  // Nothing fixed and exhausted: proven.
      // Adapt: exhausted neighbourhoods grow, neighbourhoods stopped by the failure limit shrink.
      if (complete && !improved) fraction = std::min(1.0, fraction * 1.05 + 1.0 / static_cast<double>(ng));
      else if (!complete && !improved) fraction = std::max(1.0 / static_cast<double>(ng), fraction * 0.97);
    }
    if (options.verbosity > 0)
      std::cerr << "gecode_backend: LNS " << iterations << " neighbourhoods, " << improvements << " improvements, final fraction "
                << fraction << "\n";
    return false;
  }

  /// Branch and bound in one neighbourhood's space `s` under the failure limit, recording every
  /// better solution. Returns {improved, complete}: complete when the search was not stopped (a
  /// failed space is complete).
  template <class Record>
  std::pair<bool, bool> search_neighbourhood(detail::gecode_space& s, Record& record, std::optional<std::chrono::steady_clock::time_point> deadline,
                                             detail::gecode_node_budget& nodes) const {
    if (s.status() == Gecode::SS_FAILED) return {false, true};
    bool improved = false;
    detail::gecode_stop stop(deadline, config.lns_fail_limit, &nodes);
    Gecode::Search::Options o;
    o.stop = &stop;
    Gecode::BAB<detail::gecode_space> e(&s, o);
    while (std::unique_ptr<detail::gecode_space> sol{e.next()}) {
      record(*sol);
      improved = true;
    }
    nodes.used += e.statistics().node;
    return {improved, !e.stopped()};
  }
};

static_assert(cp_backend<gecode_backend>);

}  // namespace memsched
