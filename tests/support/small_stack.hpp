// Runs a function on a thread with a small stack: an algorithm whose recursion depth grows with
// its input overflows it (SIGSEGV, the test program dies) on inputs a few hundred thousand long,
// where an iterative one needs a few frames. Independent of `ulimit -s`.
#pragma once

#include <pthread.h>

#include <cstddef>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>

namespace memsched::testing {

/// The stack the deep-input tests give the work: ample for any non-recursive call chain of the
/// library (also at -O0 under the sanitizers), far below what a recursion over 100,000 vertices
/// or steps needs (a few dozen bytes a frame).
inline constexpr std::size_t small_stack_bytes = std::size_t{512} << 10;

/// Calls f() on a new thread with `stack_bytes` of stack, waits for it and rethrows what it threw.
inline void run_on_small_stack(const std::function<void()>& f, std::size_t stack_bytes = small_stack_bytes) {
  struct task {
    const std::function<void()>* f;
    std::exception_ptr error;
  } t{&f, nullptr};
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) throw std::runtime_error("pthread_attr_init failed");
  const int set = pthread_attr_setstacksize(&attr, stack_bytes);
  pthread_t thread;
  const int made = set == 0 ? pthread_create(
                                  &thread, &attr,
                                  [](void* p) -> void* {
                                    auto* tp = static_cast<task*>(p);
                                    try {
                                      (*tp->f)();
                                    } catch (...) {
                                      tp->error = std::current_exception();
                                    }
                                    return nullptr;
                                  },
                                  &t)
                            : set;
  pthread_attr_destroy(&attr);
  if (made != 0) throw std::runtime_error("run_on_small_stack: cannot start a thread (error " + std::to_string(made) + ")");
  pthread_join(thread, nullptr);
  if (t.error) std::rethrow_exception(t.error);
}

}  // namespace memsched::testing
