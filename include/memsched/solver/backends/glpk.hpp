#pragma once
// memsched::glpk_backend: solves a milp_model (and its LP relaxation) with GLPK 5. Needs the CMake
// target memsched::glpk (Debian: libglpk-dev). GLPK is GPL-3+: a program that links it is bound
// by the GPL, which is why the backend is opt-in (link memsched::glpk only if that suits you).
//
//   const auto r = memsched::glpk_backend{}.solve(model, {.time_limit = std::chrono::seconds(10)});
//
// GLPK keeps its state per thread, so solves on different threads may run concurrently.

#include <memsched/core/status.hpp>
#include <memsched/solver/concepts.hpp>
#include <memsched/solver/detail/backend_support.hpp>
#include <memsched/solver/detail/process_isolation.hpp>
#include <memsched/solver/milp_model.hpp>
#include <memsched/solver/solver_options.hpp>

#include <glpk.h>

#include <algorithm>
#include <cmath>
#include <csetjmp>
#include <cstdint>
#include <chrono>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memsched {

namespace detail {

/// Everything one GLPK solve touches, prepared before the setjmp: a GLPK error that longjmps back
/// skips no destructor.
struct glpk_run {
  const milp_model* model = nullptr;
  solve_session* session = nullptr;
  bool integer = true;                 ///< false: LP relaxation only.
  int verbosity = 0;
  double gap = 0;
  std::uint64_t node_limit = 0;        ///< Subproblems the search may select; 0: no limit.
  std::uint64_t nodes = 0;             ///< Subproblems selected so far.
  bool node_limit_hit = false;
  std::jmp_buf env{};
  glp_prob* lp = nullptr;
  std::vector<int> col_type, row_type, kind;  ///< 0-based: GLP_FR/LO/UP/DB/FX, GLP_CV/IV.
  std::vector<double> col_lb, col_ub, row_lb, row_ub;
  std::vector<int> ia, ja;             ///< 1-based triplets (index 0 unused).
  std::vector<double> ar, start;       ///< start: 1-based, integer columns rounded.
  bool empty_domain = false;
  bool start_offered = false;
  double bound = std::numeric_limits<double>::quiet_NaN();
  int simplex_ret = 0, lp_status = 0, intopt_ret = 0, mip_status = 0;
  bool ran_intopt = false;
  std::vector<double> values;          ///< 0-based result.
};

inline void glpk_error_hook(void* info) { std::longjmp(static_cast<glpk_run*>(info)->env, 1); }

inline void glpk_bounds(double lower, double upper, int& type, double& lb, double& ub) {
  lb = std::isfinite(lower) ? lower : 0;
  ub = std::isfinite(upper) ? upper : 0;
  if (std::isfinite(lower) && std::isfinite(upper)) type = lower == upper ? GLP_FX : GLP_DB;
  else if (std::isfinite(lower)) type = GLP_LO;
  else if (std::isfinite(upper)) type = GLP_UP;
  else type = GLP_FR;
}

/// Fills the arrays of `run` from the model (pure C++, no GLPK call). Integer columns get their
/// bounds rounded inwards (GLPK wants integral bounds); duplicate terms of a row are summed.
inline void glpk_prepare(glpk_run& run) {
  const milp_model& m = *run.model;
  const auto& vars = m.variables();
  const auto& rows = m.constraints();
  const std::size_t n = vars.size();
  run.col_type.resize(n);
  run.kind.resize(n);
  run.col_lb.resize(n);
  run.col_ub.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    double lower = vars[i].lower, upper = vars[i].upper;
    const bool is_int = run.integer && vars[i].type != variable_type::continuous;
    run.kind[i] = is_int ? GLP_IV : GLP_CV;
    if (is_int) {
      lower = std::ceil(lower - 1e-9);
      upper = std::floor(upper + 1e-9);
      if (lower > upper) {
        run.empty_domain = true;
        upper = lower;
      }
    }
    glpk_bounds(lower, upper, run.col_type[i], run.col_lb[i], run.col_ub[i]);
  }
  run.row_type.resize(rows.size());
  run.row_lb.resize(rows.size());
  run.row_ub.resize(rows.size());
  run.ia.assign(1, 0);
  run.ja.assign(1, 0);
  run.ar.assign(1, 0.0);
  std::vector<std::size_t> position(n, 0);  // 1-based position of a column's term in the current row
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const std::size_t row_begin = run.ar.size();
    for (const auto& t : rows[r].terms) {
      const std::size_t p = position[t.variable];
      if (p >= row_begin && p != 0) {
        run.ar[p] += t.coefficient;
      } else {
        position[t.variable] = run.ar.size();
        run.ia.push_back(static_cast<int>(r) + 1);
        run.ja.push_back(static_cast<int>(t.variable) + 1);
        run.ar.push_back(t.coefficient);
      }
    }
    glpk_bounds(rows[r].lower, rows[r].upper, run.row_type[r], run.row_lb[r], run.row_ub[r]);
  }
  // glp_ios_heur_sol does not check rows: offer only a start that satisfies the model.
  if (run.integer && run.session->valid_start_objective()) {
    run.start.assign(n + 1, 0.0);
    for (std::size_t i = 0; i < n; ++i)
      run.start[i + 1] = run.kind[i] == GLP_IV ? std::round((*m.start)[i]) : (*m.start)[i];
  }
  run.values.assign(n, 0.0);
}

/// GLPK's branch-and-cut callback: offers the start once, reports improving incumbents, tracks
/// the bound and stops the search at the wall-clock deadline or once it would select one more
/// subproblem than the node limit allows.
inline void glpk_callback(glp_tree* tree, void* info) {
  glpk_run& run = *static_cast<glpk_run*>(info);
  const int reason = glp_ios_reason(tree);
  if (reason == GLP_IHEUR && !run.start_offered && !run.start.empty()) {
    run.start_offered = true;
    glp_ios_heur_sol(tree, run.start.data());
  }
  const int best = glp_ios_best_node(tree);
  if (best != 0) run.bound = glp_ios_node_bound(tree, best);
  glp_prob* p = glp_ios_get_prob(tree);
  if (glp_mip_status(p) == GLP_FEAS || glp_mip_status(p) == GLP_OPT) {
    if (!run.session->report(glp_mip_obj_val(p), run.bound)) glp_ios_terminate(tree);
  }
  if (reason == GLP_ISELECT && run.node_limit != 0 && ++run.nodes > run.node_limit) {
    run.node_limit_hit = true;
    glp_ios_terminate(tree);
  }
  if (run.session->deadline_passed()) glp_ios_terminate(tree);
}

inline int glpk_ms_left(const solve_session& session) {
  if (!session.has_deadline()) return std::numeric_limits<int>::max();
  return static_cast<int>(std::clamp(session.seconds_left() * 1000.0, 1.0, 2.0e9));
}

/// The GLPK calls of one solve. No object with a destructor lives in this frame.
inline void glpk_execute(glpk_run& run) {
  const int n = static_cast<int>(run.col_type.size());
  const int m = static_cast<int>(run.row_type.size());
  glp_prob* lp = run.lp;
  glp_set_obj_dir(lp, run.model->sense == objective_sense::maximize ? GLP_MAX : GLP_MIN);
  glp_set_obj_coef(lp, 0, run.model->objective_offset);
  glp_add_cols(lp, n);
  const auto& vars = run.model->variables();
  for (int j = 1; j <= n; ++j) {
    glp_set_col_bnds(lp, j, run.col_type[j - 1], run.col_lb[j - 1], run.col_ub[j - 1]);
    glp_set_obj_coef(lp, j, vars[static_cast<std::size_t>(j - 1)].objective);
    if (run.kind[j - 1] == GLP_IV) glp_set_col_kind(lp, j, GLP_IV);
  }
  if (m > 0) {
    glp_add_rows(lp, m);
    for (int i = 1; i <= m; ++i) glp_set_row_bnds(lp, i, run.row_type[i - 1], run.row_lb[i - 1], run.row_ub[i - 1]);
    glp_load_matrix(lp, static_cast<int>(run.ar.size()) - 1, run.ia.data(), run.ja.data(), run.ar.data());
  }

  // Root LP: dual simplex with the LP presolver (GLPK's default primal simplex is far slower on
  // the large models memsched builds).
  glp_smcp smcp;
  glp_init_smcp(&smcp);
  smcp.msg_lev = run.verbosity > 0 ? (run.verbosity > 1 ? GLP_MSG_ALL : GLP_MSG_ON) : GLP_MSG_OFF;
  smcp.meth = GLP_DUALP;
  smcp.presolve = GLP_ON;
  smcp.tm_lim = glpk_ms_left(*run.session);
  run.simplex_ret = glp_simplex(lp, &smcp);
  run.lp_status = glp_get_status(lp);
  if (run.simplex_ret == 0 && run.lp_status == GLP_OPT && !run.integer) {
    for (int j = 1; j <= n; ++j) run.values[static_cast<std::size_t>(j - 1)] = glp_get_col_prim(lp, j);
    return;
  }
  if (run.simplex_ret != 0 || run.lp_status != GLP_OPT || !run.integer) return;
  if (run.session->deadline_passed()) {
    run.simplex_ret = GLP_ETMLIM;
    return;
  }

  // Branch and cut from that basis (the MIP presolver would renumber columns, which the start
  // solution and the values need).
  glp_iocp iocp;
  glp_init_iocp(&iocp);
  iocp.msg_lev = smcp.msg_lev;
  iocp.presolve = GLP_OFF;
  // MIR cuts only: on set-cover and knapsack tests the feasibility pump and Gomory cuts cost
  // more than they gave and run without time checks (20% over a 2 s limit).
  iocp.mir_cuts = GLP_ON;
  iocp.mip_gap = run.gap;
  iocp.tm_lim = glpk_ms_left(*run.session);
  iocp.cb_func = glpk_callback;
  iocp.cb_info = &run;
  run.ran_intopt = true;
  run.intopt_ret = glp_intopt(lp, &iocp);
  run.mip_status = glp_mip_status(lp);
  if (run.mip_status == GLP_OPT || run.mip_status == GLP_FEAS)
    for (int j = 1; j <= n; ++j) run.values[static_cast<std::size_t>(j - 1)] = glp_mip_col_val(lp, j);
}

/// Runs glpk_execute under an error hook: returns false when GLPK reported an internal error (its
/// environment has then been freed, as GLPK requires).
inline bool glpk_guarded(glpk_run* run) {
  // GLPK's environment is per thread and leaks at thread exit unless freed: free it after the
  // solve when this solve created it (glp_init_env returns 1 when it already existed).
  const bool own_env = glp_init_env() == 0;
  const int old_term = glp_term_out(run->verbosity > 0 ? GLP_ON : GLP_OFF);
  glp_error_hook(glpk_error_hook, run);
  if (setjmp(run->env) != 0) {
    glp_error_hook(nullptr, nullptr);
    glp_free_env();  // frees every GLPK object of this thread, run->lp included
    run->lp = nullptr;
    if (!own_env) glp_term_out(old_term);  // glp_term_out would create a new environment
    return false;
  }
  run->lp = glp_create_prob();
  glpk_execute(*run);
  glp_delete_prob(run->lp);
  run->lp = nullptr;
  glp_error_hook(nullptr, nullptr);
  glp_term_out(old_term);
  if (own_env) glp_free_env();
  return true;
}

}  // namespace detail

/// GLPK 5 as a milp_backend and lp_backend. The root LP is solved by dual simplex with GLPK's LP
/// presolver, then branch and cut (with MIR cuts) runs from that basis.
/// Options: time_limit (wall clock: GLPK's tm_lim, a check in the search callback that terminates
/// the search at the deadline, and the child process killed shortly after it: see
/// isolate_process), relative_gap (mip_gap), node_limit (subproblems the
/// search selects, counted in the callback), verbosity (GLPK's messages), observer.on_incumbent;
/// threads is ignored (GLPK is sequential). The start solution is offered to the search as a
/// heuristic solution (glp_ios_heur_sol) and used directly when GLPK returns nothing better.
/// Status: proven optimal (within the gap) -> optimal; stopped with a solution -> feasible;
/// stopped without -> time_limit; infeasible -> infeasible; unbounded relaxation -> unbounded. GLPK's internal errors are caught (status error), never abort().
struct glpk_backend {
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "glpk"; }

  /// Run each solve (branch and cut and LP relaxation) in a forked child process (POSIX), killed
  /// if it still runs a little after the deadline (detail::backend_overrun_allowance): GLPK's LP presolver,
  /// scaling and initial basis never look at the clock (2.5 s of a 1 s limit on a 148,000-column
  /// Checkmate model), and a killed child loses only what it had not reported. The child streams
  /// its incumbents (with their values) and its result through a pipe; the best incumbent it sent
  /// (or the valid start) is returned when it is killed. false: GLPK runs in the calling thread.
  bool isolate_process = true;

  /// Solves `model` with GLPK's branch and cut. Throws only what options.observer throws.
  [[nodiscard]] solver_result solve(const milp_model& model, const solver_options& options) const {
    return run(model, options, true, isolate_process);
  }

  /// Solves the LP relaxation of `model` (integrality dropped, start ignored) by dual simplex.
  /// Never throws.
  [[nodiscard]] solver_result solve_relaxation(const milp_model& model, const solver_options& options) const {
    return run(model, options, false, isolate_process);
  }

 private:
  static solver_result run(const milp_model& model, const solver_options& options, bool integer, bool isolate) {
    detail::solve_session session(model, options);
    if (auto early = detail::answer_without_solver(model, session, integer ? "glpk_backend::solve" : "glpk_backend::solve_relaxation"))
      return std::move(*early);
    solver_result result;
    if (!isolate || !run_isolated(model, options, session, integer, result)) run_here(model, options, session, integer, result);
    session.rethrow_callback_error();
    if (!integer || result.status == solve_status::unbounded) result.seconds = session.seconds();
    else session.finish(result);
    return result;
  }

  /// One solve in this thread. `lp_slot`, when set, receives where the GLPK problem of the solve
  /// lives (so an observer can read the incumbent's values).
  static void run_here(const milp_model& model, const solver_options& options, detail::solve_session& session, bool integer,
                       solver_result& result, glp_prob* const** lp_slot = nullptr) {
    if (session.expired_before_start(result)) return;
    if (detail::solver_threads(options) > 1) result.message = "glpk: threads ignored (sequential solver)";
    detail::glpk_run r;
    if (lp_slot != nullptr) *lp_slot = &r.lp;
    r.model = &model;
    r.session = &session;
    r.integer = integer;
    r.verbosity = options.verbosity;
    r.gap = std::max(options.relative_gap, 0.0);
    if (integer && options.node_limit) r.node_limit = std::max<std::uint64_t>(*options.node_limit, 1);
    detail::glpk_prepare(r);
    if (r.empty_domain) {
      result.status = solve_status::infeasible;
      result.message = "an integer variable has no integer value within its bounds";
    } else if (!detail::glpk_guarded(&r)) {
      result.status = solve_status::error;
      result.message = "glpk: internal error (see GLPK's message with verbosity > 0)";
    } else {
      interpret(r, model, integer, result);
    }
  }

  /// The solve in a child process (detail::run_isolated). false, having done nothing, when the
  /// child cannot be started.
  static bool run_isolated(const milp_model& model, const solver_options& options, detail::solve_session& session, bool integer,
                           solver_result& result) {
    // GLPK keeps no process-wide state: forks only need the common lock (no solver lock).
    return detail::run_isolated(model, options, session, result, nullptr, "glpk", "GLPK",
                                [&](detail::child_channel& channel, double seconds_left) {
                                  solver_options child = options;
                                  child.time_limit.reset();
                                  if (session.has_deadline()) child.time_limit = std::chrono::duration<double>(std::max(seconds_left, 0.0));
                                  glp_prob* const* lp = nullptr;
                                  // Sends each incumbent with its values (read from GLPK's problem) to the parent.
                                  struct pipe_reporter {
                                    detail::child_channel* channel;
                                    std::size_t n;
                                    glp_prob* const** lp;
                                    void on_incumbent(double seconds, double objective, double bound) const {
                                      std::vector<double> values;
                                      if (*lp != nullptr && **lp != nullptr) {
                                        values.resize(n);
                                        for (std::size_t j = 0; j < n; ++j) values[j] = glp_mip_col_val(**lp, static_cast<int>(j) + 1);
                                      }
                                      channel->send_incumbent(objective, bound, seconds, values);
                                    }
                                  } reporter{&channel, model.num_variables(), &lp};
                                  child.observer = reporter;
                                  detail::solve_session child_session(model, child);
                                  solver_result child_result;
                                  run_here(model, child, child_session, integer, child_result, &lp);
                                  return child_session.callback_failed() ? std::optional<solver_result>()
                                                                         : std::optional<solver_result>(std::move(child_result));
                                });
  }

  static void interpret(const detail::glpk_run& r, const milp_model& model, bool integer, solver_result& result) {
    auto take_values = [&] {
      result.values = r.values;
      result.objective = model.objective_value(result.values);
    };
    // The LP relaxation.
    switch (r.simplex_ret) {
      case 0: break;
      case GLP_ENOPFS: result.status = solve_status::infeasible; return;
      case GLP_ENODFS:
        result.status = solve_status::unbounded;
        result.message = "glpk: the LP relaxation has no dual feasible solution (unbounded or infeasible)";
        return;
      case GLP_ETMLIM:
      case GLP_EITLIM: result.status = solve_status::time_limit; return;
      default:
        result.status = solve_status::error;
        result.message = "glpk: glp_simplex returned " + std::to_string(r.simplex_ret);
        return;
    }
    if (r.lp_status == GLP_NOFEAS) {
      result.status = solve_status::infeasible;
      return;
    }
    if (r.lp_status == GLP_UNBND) {
      result.status = solve_status::unbounded;
      result.message = "glpk: the LP relaxation is unbounded";
      return;
    }
    if (r.lp_status != GLP_OPT) {
      result.status = solve_status::error;
      result.message = "glpk: LP status " + std::to_string(r.lp_status);
      return;
    }
    if (!integer) {
      result.status = solve_status::optimal;
      take_values();
      result.bound = result.objective;
      return;
    }
    if (!r.ran_intopt) {
      result.status = solve_status::time_limit;
      return;
    }
    // Branch and cut.
    const bool have = r.mip_status == GLP_OPT || r.mip_status == GLP_FEAS;
    if (have) take_values();
    if (r.mip_status == GLP_NOFEAS) {
      result.status = solve_status::infeasible;
    } else if ((r.intopt_ret == 0 || r.intopt_ret == GLP_EMIPGAP) && have) {
      result.status = solve_status::optimal;
      result.bound = r.intopt_ret == 0 || !std::isfinite(r.bound) ? result.objective : r.bound;
    } else if (r.intopt_ret == 0 || r.intopt_ret == GLP_ETMLIM || r.intopt_ret == GLP_ESTOP || r.intopt_ret == GLP_EMIPGAP) {
      result.status = have ? solve_status::feasible : solve_status::time_limit;
      result.bound = r.bound;
    } else {
      result.status = solve_status::error;
      result.message = "glpk: glp_intopt returned " + std::to_string(r.intopt_ret);
      result.values.clear();
    }
  }
};

static_assert(lp_backend<glpk_backend>);

}  // namespace memsched
