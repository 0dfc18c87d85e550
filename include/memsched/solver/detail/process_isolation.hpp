#pragma once
// Process isolation of a MILP solve (POSIX): the solve runs in a forked child process, so that a
// crash inside the solver library cannot take the caller's process down. The child streams each
// improving incumbent (with its values) and then its result through a pipe; the caller's thread
// reads them, reports incumbents to the observer, enforces the wall clock (a child still running
// backend_overrun_allowance(limit) after the deadline is killed: the libraries' presolve, scaling and
// factorisation never look at a clock) and, when the child dies without a result, returns the
// best valid incumbent it had sent. Used by cbc_backend and glpk_backend (isolate_process);
// includes no solver library.
//
// Frames on the pipe: u32 kind, u64 payload size, payload (native byte order: same machine).
//   kind 'I' (incumbent): f64 objective, f64 bound, f64 seconds, u64 n, n x f64 values.
//   kind 'R' (result):    i32 status, f64 objective, f64 bound, u64 n, n x f64 values,
//                         u64 length, message bytes.

#include <memsched/core/status.hpp>
#include <memsched/solver/detail/backend_support.hpp>
#include <memsched/solver/milp_model.hpp>
#include <memsched/solver/solver_options.hpp>

#include <fcntl.h>
#include <poll.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace memsched::detail {

/// Appends the bytes of `v` to `out`.
template <class T>
void frame_put(std::string& out, const T& v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

/// Reads a T at `pos` of `in` and advances `pos`; false when `in` is too short.
template <class T>
bool frame_get(std::string_view in, std::size_t& pos, T& v) {
  if (in.size() - pos < sizeof v) return false;
  std::memcpy(&v, in.data() + pos, sizeof v);
  pos += sizeof v;
  return true;
}

inline void frame_put_values(std::string& out, const std::vector<double>& values) {
  frame_put(out, static_cast<std::uint64_t>(values.size()));
  out.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(double));
}

inline bool frame_get_values(std::string_view in, std::size_t& pos, std::vector<double>& values) {
  std::uint64_t n = 0;
  if (!frame_get(in, pos, n) || (in.size() - pos) / sizeof(double) < n) return false;
  values.resize(static_cast<std::size_t>(n));
  if (n > 0) std::memcpy(values.data(), in.data() + pos, static_cast<std::size_t>(n) * sizeof(double));
  pos += static_cast<std::size_t>(n) * sizeof(double);
  return true;
}

/// Writes one frame to `fd` (retrying on EINTR and short writes); false when the pipe failed.
inline bool send_frame(int fd, std::uint32_t kind, const std::string& payload) {
  std::string frame;
  frame.reserve(payload.size() + 12);
  frame_put(frame, kind);
  frame_put(frame, static_cast<std::uint64_t>(payload.size()));
  frame += payload;
  const char* p = frame.data();
  std::size_t left = frame.size();
  while (left > 0) {
    const ssize_t w = ::write(fd, p, left);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    left -= static_cast<std::size_t>(w);
  }
  return true;
}

/// "signal 11 SIGSEGV" for the usual fatal signals, else "signal N".
inline std::string signal_name(int sig) {
  const char* name = sig == SIGSEGV ? "SIGSEGV" : sig == SIGABRT ? "SIGABRT" : sig == SIGBUS ? "SIGBUS" : sig == SIGFPE ? "SIGFPE"
                   : sig == SIGILL ? "SIGILL" : sig == SIGKILL ? "SIGKILL" : sig == SIGTERM ? "SIGTERM" : nullptr;
  return "signal " + std::to_string(sig) + (name ? std::string(" ") + name : std::string());
}

/// Held by every fork of run_isolated (whatever the solver), so that no child inherits the write
/// end of another solve's pipe (the reader would then wait for that child's exit to see EOF).
inline std::mutex& isolation_fork_mutex() {
  static std::mutex m;
  return m;
}

/// A hook the tests install to make the child misbehave (crash, hang); null otherwise. Called in
/// the child only, with "start" before it solves and "incumbent" after each incumbent it sent.
using isolated_child_hook = void (*)(std::string_view event);
inline isolated_child_hook& isolated_child_test_hook() {
  static isolated_child_hook hook = nullptr;
  return hook;
}

/// In a child of run_isolated: makes the kernel kill it when its parent process dies (a killed
/// tool must not leave a solver running for the rest of its time limit; between incumbents the
/// child never writes to the pipe, so it would not notice). Linux sends the signal when the thread
/// that forked exits; that thread waits in run_isolated until the child has exited, so it exits
/// before the child only when the whole process dies. A parent that died before the call is seen
/// by getppid(). Elsewhere the child notices at its next write to the pipe.
inline void die_with_parent([[maybe_unused]] pid_t parent) noexcept {
#ifdef __linux__
  (void)::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(4);
#endif
}

/// The child's end of the pipe.
class child_channel {
 public:
  explicit child_channel(int fd) noexcept : fd_(fd) {}
  /// Sends an incumbent. Throws std::runtime_error when the parent is gone (stop the search).
  void send_incumbent(double objective, double bound, double seconds, const std::vector<double>& values) const {
    std::string payload;
    frame_put(payload, objective);
    frame_put(payload, bound);
    frame_put(payload, seconds);
    frame_put_values(payload, values);
    if (!send_frame(fd_, 'I', payload)) throw std::runtime_error("solver child: the pipe to the caller is closed");
    if (const auto hook = isolated_child_test_hook()) hook("incumbent");
  }
  /// Sends the result; false when the pipe failed.
  [[nodiscard]] bool send_result(const solver_result& result) const {
    std::string payload;
    frame_put(payload, static_cast<std::int32_t>(result.status));
    frame_put(payload, result.objective);
    frame_put(payload, result.bound);
    frame_put_values(payload, result.values);
    frame_put(payload, static_cast<std::uint64_t>(result.message.size()));
    payload += result.message;
    return send_frame(fd_, 'R', payload);
  }

 private:
  int fd_;
};

/// A child started by start_isolated_child: its pid and the read end of its pipe.
struct isolated_child {
  pid_t pid;
  int fd;
};

/// In the forked child of run_isolated: solves, sends the result, and leaves with _exit (no atexit
/// handlers, no destructors of the parent's objects).
template <class SolveInChild>
[[noreturn]] void run_isolated_child(pid_t parent, const int (&fds)[2], double seconds_left, SolveInChild& solve_in_child) {
  die_with_parent(parent);
  ::close(fds[0]);
  int code = 0;
  try {
    ::signal(SIGPIPE, SIG_IGN);  // a parent gone: write() fails with EPIPE, the child stops
    if (const auto hook = isolated_child_test_hook()) hook("start");
    child_channel channel(fds[1]);
    const std::optional<solver_result> r = solve_in_child(channel, seconds_left);
    code = r && channel.send_result(*r) ? 0 : 2;
  } catch (...) {
    code = 3;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  ::_exit(code);
}

/// Forks the child of run_isolated under `solver_lock` (unless null) and isolation_fork_mutex();
/// nullopt when the pipe or the fork failed.
template <class SolveInChild>
std::optional<isolated_child> start_isolated_child(solve_session& session, std::mutex* solver_lock, SolveInChild& solve_in_child) {
  int fds[2] = {-1, -1};
  std::unique_lock<std::mutex> lock;
  if (solver_lock) lock = std::unique_lock(*solver_lock);
  std::lock_guard fork_guard(isolation_fork_mutex());
  if (::pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;
  std::fflush(stdout);  // else buffered output would be written twice
  std::fflush(stderr);
  const double left = session.seconds_left();
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) run_isolated_child(parent, fds, left, solve_in_child);
  ::close(fds[1]);
  if (pid < 0) {
    ::close(fds[0]);
    return std::nullopt;
  }
  return isolated_child{pid, fds[0]};
}

/// The caller's side of run_isolated: reads the child's frames, keeps the best valid incumbent,
/// reports incumbents to the observer, kills the child at the deadline and reaps it.
class isolated_child_reader {
 public:
  isolated_child_reader(const milp_model& model, solve_session& session, isolated_child child)
      : model_(model), session_(session), child_(child) {}

  /// Reads until the result, end of file, the deadline plus `grace`, a failed read or a failed
  /// observer; then closes the pipe and reaps the child.
  void run(double grace) {
    read_frames(grace);
    ::close(child_.fd);
    // Reaped here, in the caller's thread, not on a thread of its own: a thread alive while another
    // solve forks can hold a lock (the allocator's, under AddressSanitizer) that the child then
    // waits for forever, and the parent with it.
    while (::waitpid(child_.pid, &wait_status_, 0) < 0 && errno == EINTR) {
    }
  }

  [[nodiscard]] bool got_result() const noexcept { return got_result_; }
  [[nodiscard]] solver_result& received() noexcept { return received_; }

  /// The result when the child died without one (or was killed): the best valid incumbent it had
  /// sent as `feasible`, else `time_limit` (killed) or `error`, with a message saying what happened.
  [[nodiscard]] solver_result failure_result(const char* prefix, const char* solver) {
    solver_result result;
    const std::string what = failure_text(solver);
    if (!best_values_.empty()) {
      result.status = solve_status::feasible;
      result.values = std::move(best_values_);
      result.objective = best_objective_;
      result.bound = best_bound_;
      result.message = std::string(prefix) + ": " + what + (killed_ ? "; returned the best solution it had sent" : "; returned the best solution found before the crash");
    } else {
      result.status = killed_ ? solve_status::time_limit : solve_status::error;
      result.message = std::string(prefix) + ": " + what + "; no solution had been found";
    }
    return result;
  }

 private:
  void kill_child() {
    if (!killed_) ::kill(child_.pid, SIGKILL);
    killed_ = true;
  }

  void read_frames(double grace) {
    std::vector<char> chunk(1 << 16);
    for (;;) {
      int timeout = -1;
      if (session_.has_deadline()) {
        const double left = session_.seconds_left() + grace;
        if (left <= 0) {
          kill_child();
          break;
        }
        timeout = static_cast<int>(std::min(std::ceil(left * 1000), 1e9));
      }
      pollfd pfd{child_.fd, POLLIN, 0};
      const int ready = ::poll(&pfd, 1, timeout);
      if (ready < 0) {
        if (errno == EINTR) continue;
        kill_child();
        break;
      }
      if (ready == 0) continue;  // the loop head sees the deadline
      const ssize_t got = ::read(child_.fd, chunk.data(), chunk.size());
      if (got < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        kill_child();
        break;
      }
      if (got == 0) break;  // end of file: the child has exited (or is exiting)
      buffer_.append(chunk.data(), static_cast<std::size_t>(got));
      if (!parse_frames() || got_result_) break;  // the result is the last frame: no need to wait for EOF
    }
  }

  /// Parses the complete frames at the front of the buffer; false to stop reading.
  bool parse_frames() {
    std::size_t pos = 0;
    bool go_on = true;
    while (go_on) {
      std::size_t p = pos;
      std::uint32_t kind = 0;
      std::uint64_t size = 0;
      if (!frame_get(buffer_, p, kind) || !frame_get(buffer_, p, size) || buffer_.size() - p < size) break;
      const std::string_view payload(buffer_.data() + p, static_cast<std::size_t>(size));
      pos = p + static_cast<std::size_t>(size);
      if (kind == 'I') go_on = on_incumbent(payload);
      else if (kind == 'R') on_result(payload);
    }
    buffer_.erase(0, pos);
    return go_on;
  }

  /// Keeps the incumbent when it is the best valid one and reports it; false when the observer
  /// threw (the child is killed). A malformed frame is skipped.
  bool on_incumbent(std::string_view payload) {
    std::size_t q = 0;
    double objective = 0, bound = 0, child_seconds = 0;
    std::vector<double> values;
    if (!frame_get(payload, q, objective) || !frame_get(payload, q, bound) || !frame_get(payload, q, child_seconds) ||
        !frame_get_values(payload, q, values))
      return true;
    // Keep the values only when they form a valid assignment (a preprocessed column may be
    // unknown, and a stopped solver has returned broken assignments before).
    const bool valid = values.size() == model_.num_variables() &&
                       std::all_of(values.begin(), values.end(), [](double v) { return std::isfinite(v); }) && !model_.first_violation(values);
    if (valid) {
      const double objective_of_values = model_.objective_value(values);
      if (best_values_.empty() || better_objective(objective_of_values, best_objective_, model_.sense)) {
        best_values_ = std::move(values);
        best_objective_ = objective_of_values;
        best_bound_ = bound;
      }
    }
    if (!session_.report(objective, bound)) {  // the user's observer threw: stop
      kill_child();
      return false;
    }
    return true;
  }

  void on_result(std::string_view payload) {
    std::size_t q = 0;
    std::int32_t status = 0;
    std::uint64_t length = 0;
    if (frame_get(payload, q, status) && frame_get(payload, q, received_.objective) && frame_get(payload, q, received_.bound) &&
        frame_get_values(payload, q, received_.values) && frame_get(payload, q, length) && payload.size() - q >= length) {
      received_.status = static_cast<solve_status>(status);
      received_.message.assign(payload.data() + q, static_cast<std::size_t>(length));
      got_result_ = true;
    }
  }

  /// What happened to a child that sent no result, for the message.
  [[nodiscard]] std::string failure_text(const char* solver) const {
    const std::string name(solver);
    if (killed_) return "the " + name + " process did not stop at the deadline and was killed";
    if (WIFSIGNALED(wait_status_)) return name + " crashed (" + signal_name(WTERMSIG(wait_status_)) + ")";
    if (WIFEXITED(wait_status_)) return name + " crashed (its process exited with status " + std::to_string(WEXITSTATUS(wait_status_)) + " without a result)";
    return name + " crashed";
  }

  const milp_model& model_;
  solve_session& session_;
  isolated_child child_;
  std::string buffer_;
  std::vector<double> best_values_;
  double best_objective_ = std::numeric_limits<double>::quiet_NaN(), best_bound_ = best_objective_;
  bool got_result_ = false, killed_ = false;
  int wait_status_ = 0;
  solver_result received_;
};

/// Runs `solve_in_child(child_channel&, double seconds_left) -> std::optional<solver_result>` in a
/// forked child process (nullopt: the child's search was stopped because the pipe closed) and
/// fills `result` from what it sent. `solver_lock`, unless null, is held while forking (the
/// solver's own lock: no in-process solve may run then); isolation_fork_mutex() always is (no other
/// thread may fork between pipe() and the close of the write end). `prefix` starts messages ("cbc"), `solver` names the library ("CBC").
/// Returns false, having done nothing, when the child cannot be started (solve in-process then).
/// Throws nothing itself; the observer's exception is left in `session` (the caller rethrows).
template <class SolveInChild>
bool run_isolated(const milp_model& model, const solver_options& options, solve_session& session, solver_result& result, std::mutex* solver_lock,
                  const char* prefix, const char* solver, SolveInChild&& solve_in_child) {
  if (session.expired_before_start(result)) return true;
  const std::optional<isolated_child> child = start_isolated_child(session, solver_lock, solve_in_child);
  if (!child) return false;
  const auto limit = effective_time_limit(options.time_limit);
  isolated_child_reader reader(model, session, *child);
  reader.run(limit ? backend_overrun_allowance(limit->count()) : 0.0);
  if (reader.got_result() && !session.callback_failed()) {
    result = std::move(reader.received());
    return true;
  }
  result = {};
  if (session.callback_failed()) return true;  // the caller rethrows
  result = reader.failure_result(prefix, solver);
  if (options.verbosity > 0) std::fprintf(stderr, "memsched: %s\n", result.message.c_str());
  return true;
}

}  // namespace memsched::detail
