#pragma once
// memsched::cbc_backend: solves a milp_model with COIN-OR CBC (branch and cut) and its LP
// relaxation with Clp. Needs the CMake target memsched::cbc (Debian: coinor-libcbc-dev).
//
//   memsched::milp_model m;  ...
//   const auto r = memsched::cbc_backend{}.solve(m, {.time_limit = std::chrono::seconds(10)});
//
// By default each MILP solve runs in a forked child process (cbc_backend::isolate_process), so a
// crash inside CBC cannot kill the caller; in-process solves (isolate_process = false, and every
// solve_relaxation) are serialised with a process-wide mutex (CBC keeps global state). Clp, Cbc
// and Cgl print nothing unless options.verbosity > 0.

#include <memsched/core/status.hpp>
#include <memsched/solver/concepts.hpp>
#include <memsched/solver/detail/backend_support.hpp>
#include <memsched/solver/detail/process_isolation.hpp>
#include <memsched/solver/milp_model.hpp>
#include <memsched/solver/solver_options.hpp>

#include <coin/CbcEventHandler.hpp>
#include <coin/CbcModel.hpp>
#include <coin/CbcSolver.hpp>
#include <coin/ClpEventHandler.hpp>
#include <coin/ClpSimplex.hpp>
#include <coin/ClpSolve.hpp>
#include <coin/CoinError.hpp>
#include <coin/CoinFinite.hpp>
#include <coin/CoinMessageHandler.hpp>
#include <coin/CoinPackedMatrix.hpp>
#include <coin/OsiClpSolverInterface.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace memsched {

namespace detail {

/// The process-wide lock around every CBC/Clp solve.
inline std::mutex& cbc_mutex() {
  static std::mutex m;
  return m;
}

/// Column-ordered data of a milp_model in COIN form, always as a minimisation (the objective is
/// negated for maximise): infinite bounds become COIN_DBL_MAX.
struct coin_problem {
  CoinPackedMatrix matrix;
  std::vector<double> col_lower, col_upper, objective, row_lower, row_upper;
  double sign = 1;  ///< model objective = sign * COIN objective + offset.

  explicit coin_problem(const milp_model& model) {
    const auto& vars = model.variables();
    const auto& rows = model.constraints();
    const std::size_t n = vars.size();
    sign = model.sense == objective_sense::maximize ? -1.0 : 1.0;
    auto clamp = [](double x) { return std::max(-COIN_DBL_MAX, std::min(COIN_DBL_MAX, x)); };
    col_lower.resize(n);
    col_upper.resize(n);
    objective.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      col_lower[i] = clamp(vars[i].lower);
      col_upper[i] = clamp(vars[i].upper);
      objective[i] = sign * vars[i].objective;
    }
    // Row-ordered triplets in one go (duplicate terms in a row are summed).
    std::vector<CoinBigIndex> starts;
    std::vector<int> indices;
    std::vector<double> elements;
    starts.reserve(rows.size() + 1);
    indices.reserve(model.num_nonzeros());
    elements.reserve(model.num_nonzeros());
    row_lower.resize(rows.size());
    row_upper.resize(rows.size());
    std::vector<long> position(n, -1);
    for (std::size_t r = 0; r < rows.size(); ++r) {
      starts.push_back(static_cast<CoinBigIndex>(indices.size()));
      const std::size_t row_begin = indices.size();
      for (const auto& t : rows[r].terms) {
        const long p = position[t.variable];
        if (p >= static_cast<long>(row_begin)) {
          elements[static_cast<std::size_t>(p)] += t.coefficient;
        } else {
          position[t.variable] = static_cast<long>(indices.size());
          indices.push_back(static_cast<int>(t.variable));
          elements.push_back(t.coefficient);
        }
      }
      row_lower[r] = clamp(rows[r].lower);
      row_upper[r] = clamp(rows[r].upper);
    }
    starts.push_back(static_cast<CoinBigIndex>(indices.size()));
    matrix = CoinPackedMatrix(false, static_cast<int>(n), static_cast<int>(rows.size()), static_cast<CoinBigIndex>(indices.size()),
                              elements.data(), indices.data(), starts.data(), nullptr);
  }
};

/// Watches a CBC search: reports improving incumbents of the top-level model and stops the
/// search once the wall-clock deadline has passed (CBC's own limit overshoots).
class cbc_watchdog : public CbcEventHandler {
 public:
  /// `reporting` (when not null) is set to the reporting model just before each report, so that
  /// an on_incumbent hook can read the incumbent's values (see cbc_original_values).
  cbc_watchdog(solve_session& session, double sign, double offset, const CbcModel** reporting = nullptr)
      : session_(&session), sign_(sign), offset_(offset), solving_thread_(std::this_thread::get_id()), reporting_(reporting) {}
  CbcEventHandler* clone() const override { return new cbc_watchdog(*this); }

  CbcAction event(CbcEvent which) override {
    if (session_->deadline_passed()) return stop;
    // With -threads, worker threads run their own models: they only watch the clock.
    if (std::this_thread::get_id() != solving_thread_) return noAction;
    if (session_->callback_failed()) return stop;
    if (model_ == nullptr || model_->parentModel() != nullptr) return noAction;
    if (which == beforeSolution1 || which == beforeSolution2) return noAction;
    const double best = model_->getMinimizationObjValue();
    if (model_->bestSolution() != nullptr && std::abs(best) < 1e300) {
      double bound = model_->getBestPossibleObjValue();
      bound = std::abs(bound) < 1e300 ? sign_ * bound + offset_ : std::numeric_limits<double>::quiet_NaN();
      if (reporting_ != nullptr) *reporting_ = model_;
      if (!session_->report(sign_ * best + offset_, bound)) return stop;
    }
    return noAction;
  }

 private:
  solve_session* session_;
  double sign_;
  double offset_;
  std::thread::id solving_thread_;
  const CbcModel** reporting_;
};

/// Stops a Clp solve (an LP relaxation, or the root LP inside CbcMain1) once the wall-clock
/// deadline has passed; checked at every simplex iteration and factorisation. `armed` (when not
/// null) switches it off once branch and bound starts, where a stopped node LP would mislead CBC.
class clp_deadline_handler : public ClpEventHandler {
 public:
  clp_deadline_handler(const solve_session& session, const std::atomic<bool>* armed) : session_(&session), armed_(armed) {}
  ClpEventHandler* clone() const override { return new clp_deadline_handler(*this); }
  int event(Event which) override {
    if (which != endOfIteration && which != endOfFactorization && which != startOfCrossover) return -1;
    if (armed_ != nullptr && !armed_->load(std::memory_order_relaxed)) return -1;
    return session_->deadline_passed() ? 0 : -1;  // 0: Clp stops with status 5
  }

 private:
  const solve_session* session_;
  const std::atomic<bool>* armed_;
};

/// Stops a CBC solve at the wall-clock deadline where CBC's own checks come late: between the
/// phases of CbcMain1 (after the root LP, after preprocessing, before branch and bound) and,
/// from a watchdog thread, by raising the branch-and-bound model's event flag (what CBC's own
/// SIGINT handler does) every 20 ms once the deadline has passed.
class cbc_interrupter {
 public:
  explicit cbc_interrupter(solve_session& session) : session_(session) {
    if (session.has_deadline()) thread_ = std::thread([this] { watch(); });
  }
  cbc_interrupter(const cbc_interrupter&) = delete;
  cbc_interrupter& operator=(const cbc_interrupter&) = delete;
  ~cbc_interrupter() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  /// The stage callback of CbcMain1 (see CbcStopNow::callBack): 1 after the root LP, 2 after
  /// preprocessing, 3 before branch and bound, 4 after it. Nonzero stops CbcMain1.
  int stage(CbcModel* model, int where) {
    root_lp_.store(false, std::memory_order_relaxed);  // the root LP is over
    std::lock_guard lock(mutex_);
    if (where == 3) {
      branch_model_ = model;
      // CbcMain1 hands branch and bound a limit that counts preprocessing twice (it stopped
      // 0.4 s early on a 3 s limit): restate the deadline on the model's own clock.
      if (session_.has_deadline() && model != nullptr)
        model->setMaximumSeconds(model->getCurrentSeconds() + std::max(session_.seconds_left(), 0.0));
    }
    if (where >= 4) branch_model_ = nullptr;
    if (where <= 3 && (session_.deadline_passed() || session_.callback_failed())) {
      branch_model_ = nullptr;
      stopped_ = true;
      return 1;
    }
    return 0;
  }
  /// True until CbcMain1 has solved the root LP (arms the clp_deadline_handler).
  [[nodiscard]] const std::atomic<bool>* root_lp() const noexcept { return &root_lp_; }

  /// True when stage() stopped CbcMain1 (CBC's status then means nothing).
  [[nodiscard]] bool stopped() {
    std::lock_guard lock(mutex_);
    return stopped_;
  }

  /// The interrupter of the solve in progress (CbcMain1 takes a plain function; solves are
  /// serialised by cbc_mutex()).
  static cbc_interrupter*& active() {
    static cbc_interrupter* current = nullptr;
    return current;
  }
  static int callback(CbcModel* model, int where) { return active() ? active()->stage(model, where) : 0; }

 private:
  void watch() {
    std::unique_lock lock(mutex_);
    while (!done_) {
      const double left = session_.seconds_left();
      if (left > 0) {
        wake_.wait_for(lock, std::chrono::duration<double>(left));
        continue;
      }
      if (branch_model_ != nullptr) {
        branch_model_->sayEventHappened();
        if (CbcModel* h = branch_model_->heuristicModel()) h->sayEventHappened();
      }
      wake_.wait_for(lock, std::chrono::milliseconds(20));
    }
  }

  solve_session& session_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;
  bool stopped_ = false;
  std::atomic<bool> root_lp_{true};
  CbcModel* branch_model_ = nullptr;
  std::thread thread_;
};

inline std::string cbc_number(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}


/// The incumbent of `m` (the model CBC branches on, possibly preprocessed: fewer or reordered
/// columns, mapped back through originalColumns()) as values of the n original columns. Columns
/// preprocessing removed get their value when the model fixes them, else the start's value, else
/// NaN (the receiver validates the whole vector). Integer columns are rounded. O(n).
inline std::vector<double> cbc_original_values(const CbcModel& m, const milp_model& model) {
  const std::size_t n = model.num_variables();
  std::vector<double> out(n, std::numeric_limits<double>::quiet_NaN());
  const double* x = m.bestSolution();
  if (x == nullptr) return out;
  const int cols = m.getNumCols();
  if (const int* original = m.originalColumns(); original != nullptr) {
    for (int j = 0; j < cols; ++j)
      if (original[j] >= 0 && static_cast<std::size_t>(original[j]) < n) out[static_cast<std::size_t>(original[j])] = x[j];
  } else if (static_cast<std::size_t>(cols) == n) {
    out.assign(x, x + n);
  } else {
    return out;
  }
  const auto& vars = model.variables();
  for (std::size_t i = 0; i < n; ++i) {
    if (std::isnan(out[i])) {
      if (vars[i].lower == vars[i].upper) out[i] = vars[i].lower;
      else if (model.start && model.start->size() == n) out[i] = (*model.start)[i];
    }
    if (vars[i].type != variable_type::continuous && std::isfinite(out[i])) out[i] = std::round(out[i]);
  }
  return out;
}

/// Loads the problem into `solver` (as a minimisation) and, under a time limit, makes its root LP
/// a dual simplex: Clp's automatic choice may run its idiot crash, which nothing interrupts (4 s on
/// a 20,000-column set cover).
inline void cbc_load_problem(OsiClpSolverInterface& solver, const coin_problem& p, const solve_session& session, int log) {
  solver.messageHandler()->setLogLevel(log);
  solver.getModelPtr()->messageHandler()->setLogLevel(log);
  solver.loadProblem(p.matrix, p.col_lower.data(), p.col_upper.data(), p.objective.data(), p.row_lower.data(), p.row_upper.data());
  solver.setObjSense(1.0);
  if (session.has_deadline()) {
    ClpSolve root;
    root.setSolveType(ClpSolve::useDual);
    root.setPresolveType(ClpSolve::presolveOn);
    solver.setSolveOptions(root);
  }
}

/// Marks the integer columns of `solver`; returns the model's start as CBC's setMIPStart takes it
/// (empty without one), having named every column for it.
inline std::vector<std::pair<std::string, double>> cbc_integers_and_start(OsiClpSolverInterface& solver, const milp_model& model) {
  const std::size_t n = model.num_variables();
  for (std::size_t i = 0; i < n; ++i)
    if (model.variables()[i].type != variable_type::continuous) solver.setInteger(static_cast<int>(i));
  std::vector<std::pair<std::string, double>> mip_start;
  if (model.start) {
    // setMIPStart matches by column name: give every column a name of our own.
    solver.setIntParam(OsiNameDiscipline, 1);
    mip_start.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      std::string col = "x" + std::to_string(i);
      solver.setColName(static_cast<int>(i), col);
      mip_start.emplace_back(std::move(col), (*model.start)[i]);
    }
  }
  return mip_start;
}

/// CbcMain1's command line: the log levels, the time left, the gap, the threads and the node limit.
inline std::vector<std::string> cbc_arguments(const solve_session& session, const solver_options& options, int log) {
  std::vector<std::string> args = {"memsched", "-log", std::to_string(log), "-slog", std::to_string(log)};
  if (session.has_deadline()) {
    const double left = std::max(session.seconds_left(), 0.0);
    args.insert(args.end(), {"-timeMode", "elapsed", "-sec", cbc_number(left)});
  }
  args.insert(args.end(), {"-ratioGap", cbc_number(std::max(options.relative_gap, 0.0))});
  if (const unsigned threads = solver_threads(options); threads > 1)
    args.insert(args.end(), {"-threads", std::to_string(threads)});
  if (options.node_limit)
    args.insert(args.end(), {"-maxNodes", std::to_string(std::min<std::uint64_t>(*options.node_limit, std::numeric_limits<int>::max()))});
  args.insert(args.end(), {"-solve", "-quit"});
  return args;
}

/// Runs CbcMain1 with `args`, `interrupter` watching its phases; true when the interrupter
/// stopped it between phases (CBC's status then means nothing).
inline bool run_cbc_main(CbcModel& cbc, CbcSolverUsefulData& data, cbc_interrupter& interrupter, const std::vector<std::string>& args) {
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  cbc_interrupter::active() = &interrupter;
  try {
    CbcMain1(static_cast<int>(argv.size()), argv.data(), cbc, cbc_interrupter::callback, data);
  } catch (...) {
    cbc_interrupter::active() = nullptr;
    throw;
  }
  cbc_interrupter::active() = nullptr;
  return interrupter.stopped();
}

/// Puts CBC's best solution (integer columns rounded) and its bound into `result`; false when it
/// has no solution.
inline bool cbc_read_solution(const CbcModel& cbc, const milp_model& model, const coin_problem& p, solver_result& result) {
  const std::size_t n = model.num_variables();
  const double* x = cbc.bestSolution();
  // (getSolutionCount() stays 0 when preprocessing alone solved the model.)
  const bool have = x != nullptr && std::abs(cbc.getMinimizationObjValue()) < 1e300;
  if (have) {
    result.values.assign(x, x + n);
    // CBC's solution may sit a hair outside integrality: round integer columns.
    for (std::size_t i = 0; i < n; ++i)
      if (model.variables()[i].type != variable_type::continuous) result.values[i] = std::round(result.values[i]);
    result.objective = model.objective_value(result.values);
  }
  const double best_possible = cbc.getBestPossibleObjValue();
  if (std::abs(best_possible) < 1e300) result.bound = p.sign * best_possible + model.objective_offset;
  return have;
}

/// The status of a CBC run that was not stopped between phases; `have`: it found a solution.
inline void cbc_set_status(const CbcModel& cbc, const solve_session& session, bool have, solver_result& result) {
  const bool stopped = cbc.status() == 1 || cbc.status() == 5 || session.deadline_passed() || session.callback_failed();
  // After the deadline a stopped LP can look infeasible: only an undisturbed run proves it.
  if (!have && !stopped && (cbc.isProvenInfeasible() || (cbc.status() == 0 && cbc.secondaryStatus() == 1))) {
    result.status = solve_status::infeasible;
    result.bound = std::numeric_limits<double>::quiet_NaN();
  } else if (cbc.isContinuousUnbounded() || (cbc.secondaryStatus() == 7 && !have)) {
    result.status = solve_status::unbounded;
    result.values.clear();
    result.bound = std::numeric_limits<double>::quiet_NaN();
    result.message = "cbc: the LP relaxation is unbounded (the MILP is unbounded or infeasible)";
  } else if (have && !stopped && cbc.isProvenOptimal()) {
    result.status = solve_status::optimal;
    if (!std::isfinite(result.bound)) result.bound = result.objective;
  } else if (have) {
    result.status = solve_status::feasible;
  } else if (stopped) {
    result.status = solve_status::time_limit;
  } else {
    result.status = solve_status::error;
    result.message = "cbc: no solution, status " + std::to_string(cbc.status()) + "/" + std::to_string(cbc.secondaryStatus());
  }
}

}  // namespace detail

/// CBC 2.10 (branch and cut over Clp) as a milp_backend, and Clp as its lp_backend.
/// Options: time_limit (wall clock: `-timeMode elapsed -sec`, a watchdog that stops the search at
/// the deadline, and the child process killed shortly after it: see isolate_process), relative_gap (`-ratioGap`), threads (`-threads`, only the tree search is
/// parallel; results are deterministic only with 1 thread), node_limit (`-maxNodes`), verbosity
/// (CBC's `-log` level), observer.on_incumbent (from a CbcEventHandler on the top-level model). The start solution goes in
/// through setMIPStart and is also used directly when CBC returns nothing better.
/// Status: proven optimal -> optimal; stopped with a solution -> feasible; stopped without one ->
/// time_limit; proven infeasible -> infeasible; unbounded LP relaxation -> unbounded.
struct cbc_backend {
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "cbc"; }

  /// Run each MILP solve of CBC in a forked child process (POSIX), so that a crash inside CBC
  /// (CBC 2.10.8 segfaults in its preprocessing on some large models stopped at the deadline)
  /// cannot take the caller's process down: the child streams its incumbents (with their values)
  /// and its result through a pipe; the caller's thread reads them, reports them to the observer, and kills
  /// the child (SIGKILL) if it is still running detail::backend_overrun_allowance(limit) after the deadline
  /// (3% + 30 ms, at most 1 s).
  /// When the child dies, the best incumbent it sent (or the valid start) is returned as
  /// `feasible`, else status `error`, with a message saying "CBC crashed (signal ...)".
  /// false: CBC runs in the calling process (solves serialised by a process-wide mutex).
  /// solve_relaxation (Clp) runs in a child process too (its presolve ignores the deadline).
  bool isolate_process = true;

  /// Solves `model` with CBC. With isolate_process (the default) solves run in parallel, each in
  /// its own child process; otherwise it blocks other CBC solves in the process. Throws only what
  /// options.observer throws; every solver failure (a crash of CBC included) is status
  /// `error`, or `feasible` with the best solution found before the failure.
  [[nodiscard]] solver_result solve(const milp_model& model, const solver_options& options) const {
    detail::solve_session session(model, options);
    if (auto early = detail::answer_without_solver(model, session, "cbc_backend::solve")) return std::move(*early);
    solver_result result;
    if (!isolate_process || !run_isolated(model, options, session, result)) {
      std::lock_guard lock(detail::cbc_mutex());
      run_cbc_guarded(model, options, session, result);
    }
    session.rethrow_callback_error();
    if (result.status == solve_status::unbounded) result.seconds = session.seconds();
    else session.finish(result);
    return result;
  }

  /// Solves the LP relaxation of `model` with Clp (ClpSimplex::initialSolve; integrality
  /// dropped, the start ignored). Status optimal, infeasible, unbounded, time_limit, or error.
  /// With isolate_process, in a child process like solve (Clp's presolve and crash ignore the
  /// deadline: 2 s of a 0.5 s limit on a 148,000-column Checkmate model). Never throws.
  [[nodiscard]] solver_result solve_relaxation(const milp_model& model, const solver_options& options) const {
    detail::solve_session session(model, options);
    if (auto early = detail::answer_without_solver(model, session, "cbc_backend::solve_relaxation")) return std::move(*early);
    solver_result result;
    const bool isolated = isolate_process && detail::run_isolated(model, options, session, result, &detail::cbc_mutex(), "clp", "Clp",
                                                                  [&](detail::child_channel&, double seconds_left) {
                                                                    solver_options child = options;
                                                                    child.observer = {};
                                                                    child.time_limit.reset();
                                                                    if (session.has_deadline())
                                                                      child.time_limit = std::chrono::duration<double>(std::max(seconds_left, 0.0));
                                                                    detail::solve_session child_session(model, child);
                                                                    solver_result r;
                                                                    run_clp(model, child, child_session, r);
                                                                    return std::optional<solver_result>(std::move(r));
                                                                  });
    if (!isolated) {
      std::lock_guard lock(detail::cbc_mutex());
      run_clp(model, options, session, result);
    }
    result.seconds = session.seconds();
    return result;
  }

 private:
  /// One Clp solve of the LP relaxation in this process (the caller holds cbc_mutex() or is a
  /// child process).
  static void run_clp(const milp_model& model, const solver_options& options, detail::solve_session& session, solver_result& result) {
    if (session.expired_before_start(result)) return;
    try {
      const detail::coin_problem p(model);
      ClpSimplex clp;
      clp.setLogLevel(options.verbosity > 0 ? std::min(options.verbosity, 4) : 0);
      clp.messageHandler()->setLogLevel(options.verbosity > 0 ? std::min(options.verbosity, 4) : 0);
      clp.loadProblem(p.matrix, p.col_lower.data(), p.col_upper.data(), p.objective.data(), p.row_lower.data(), p.row_upper.data());
      const detail::clp_deadline_handler deadline(session, nullptr);
      if (session.has_deadline()) {
        clp.setMaximumWallSeconds(std::max(session.seconds_left(), 1e-3));
        clp.passInEventHandler(&deadline);
      }
      // Clp's automatic method (presolve, maybe the idiot crash, then simplex): 1.6 s on a
      // 20,000-column set cover where plain dual() took 30 s. Only its simplex phases see the
      // deadline.
      clp.initialSolve();
      const int status = clp.status();
      if (status == 0) {
        result.status = solve_status::optimal;
        const double* x = clp.primalColumnSolution();
        result.values.assign(x, x + model.num_variables());
        result.objective = model.objective_value(result.values);
        result.bound = result.objective;
      } else if (status == 1) {
        result.status = solve_status::infeasible;
      } else if (status == 2) {
        result.status = solve_status::unbounded;
        result.message = "clp: the LP is unbounded";
      } else if (status == 3 || status == 5) {
        result.status = solve_status::time_limit;
        result.message = "clp: stopped on a limit";
      } else {
        result.status = solve_status::error;
        result.message = "clp: status " + std::to_string(status);
      }
    } catch (const CoinError& e) {
      result = {};
      result.message = "clp: " + e.className() + "::" + e.methodName() + ": " + e.message();
    } catch (const std::bad_alloc&) {
      result = {};
      result.message = "clp: out of memory";
    } catch (const std::exception& e) {
      result = {};
      result.message = std::string("clp: ") + e.what();
    }
  }

  /// run_cbc with every exception of CBC turned into status `error`.
  static void run_cbc_guarded(const milp_model& model, const solver_options& options, detail::solve_session& session, solver_result& result,
                              const CbcModel** reporting = nullptr) {
    try {
      run_cbc(model, options, session, result, reporting);
    } catch (const CoinError& e) {
      result = {};
      result.status = solve_status::error;
      result.message = "cbc: " + e.className() + "::" + e.methodName() + ": " + e.message();
    } catch (const std::bad_alloc&) {
      result = {};
      result.status = solve_status::error;
      result.message = "cbc: out of memory";
    } catch (const std::exception& e) {
      result = {};
      result.status = solve_status::error;
      result.message = std::string("cbc: ") + e.what();
    }
  }

  /// Runs CBC in a child process (see isolate_process and detail::run_isolated). Returns false,
  /// having done nothing, when the child cannot be started (the caller then solves in-process).
  static bool run_isolated(const milp_model& model, const solver_options& options, detail::solve_session& session, solver_result& result) {
    // No in-process CBC solve may run while we fork (its state would be copied half updated).
    return detail::run_isolated(model, options, session, result, &detail::cbc_mutex(), "cbc", "CBC",
                                [&](detail::child_channel& channel, double seconds_left) {
                                  solver_options child;
                                  if (session.has_deadline()) child.time_limit = std::chrono::duration<double>(std::max(seconds_left, 0.0));
                                  child.relative_gap = options.relative_gap;
                                  child.threads = options.threads;
                                  child.verbosity = options.verbosity;
                                  child.node_limit = options.node_limit;
                                  const CbcModel* reporting = nullptr;
                                  // Sends each incumbent, with its values mapped back to the model's
                                  // columns, to the parent (which reports it to its observer).
                                  struct pipe_reporter {
                                    detail::child_channel* channel;
                                    const milp_model* model;
                                    const CbcModel** reporting;
                                    void on_incumbent(double seconds, double objective, double bound) const {
                                      channel->send_incumbent(objective, bound, seconds,
                                                              *reporting ? detail::cbc_original_values(**reporting, *model) : std::vector<double>());
                                    }
                                  } reporter{&channel, &model, &reporting};
                                  child.observer = reporter;
                                  detail::solve_session child_session(model, child);
                                  solver_result child_result;
                                  run_cbc_guarded(model, child, child_session, child_result, &reporting);
                                  return child_session.callback_failed() ? std::optional<solver_result>() : std::optional<solver_result>(std::move(child_result));
                                });
  }

  static void run_cbc(const milp_model& model, const solver_options& options, detail::solve_session& session, solver_result& result,
                      const CbcModel** reporting = nullptr) {
    // Before building anything: the caller may have waited for cbc_mutex() past the deadline, and
    // building the CbcModel of a large model costs time and memory for a search that cannot run.
    if (session.expired_before_start(result)) return;
    const detail::coin_problem p(model);
    const int log = options.verbosity > 0 ? std::min(options.verbosity, 4) : 0;

    OsiClpSolverInterface solver;
    detail::cbc_load_problem(solver, p, session, log);
    // CbcMain1's root LP (Clp) does not look at -sec: give Clp the deadline itself.
    detail::cbc_interrupter interrupter(session);
    const detail::clp_deadline_handler root_deadline(session, interrupter.root_lp());
    if (session.has_deadline()) {
      solver.getModelPtr()->setMaximumWallSeconds(std::max(session.seconds_left(), 1e-3));
      solver.getModelPtr()->passInEventHandler(&root_deadline);
    }
    const std::vector<std::pair<std::string, double>> mip_start = detail::cbc_integers_and_start(solver, model);

    CbcModel cbc(solver);
    cbc.messageHandler()->setLogLevel(log);
    detail::cbc_watchdog watchdog(session, p.sign, model.objective_offset, reporting);
    cbc.passInEventHandler(&watchdog);
    CbcSolverUsefulData data;
    data.noPrinting_ = log == 0;
    data.useSignalHandler_ = false;
    CbcMain0(cbc, data);
    if (!mip_start.empty()) cbc.setMIPStart(mip_start);

    // Again after the build, which may itself use up the time: CBC is not started past the deadline.
    if (session.expired_before_start(result)) return;
    if (detail::run_cbc_main(cbc, data, interrupter, detail::cbc_arguments(session, options, log))) {
      result.status = solve_status::time_limit;
      result.message = "cbc: stopped at the deadline before branch and bound";
      return;
    }
    const bool have = detail::cbc_read_solution(cbc, model, p, result);
    detail::cbc_set_status(cbc, session, have, result);
  }
};

static_assert(lp_backend<cbc_backend>);

}  // namespace memsched
