#pragma once
// A minimal fork-join pool: run tasks 0..count-1 on up to `threads` threads. Internal; used by
// serenity_order to solve segments in parallel.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

namespace memsched::detail {

/// The threads run_tasks uses for `count` tasks: threads == 0 means hardware concurrency, and never
/// more than `count` (at least 1). O(1).
inline unsigned task_threads(unsigned threads, std::size_t count) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  return static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>(threads, count)));
}

/// Calls task(i) for every i in [0, count), in increasing i on each thread; each thread takes the
/// next i. threads == 0: hardware concurrency; at most `count` threads; threads <= 1 runs
/// everything on the calling thread. Rethrows the first exception (by thread) after every thread
/// has stopped. A task must not throw for a reason another task can cause (they are independent).
template <class Task>
void run_tasks(std::size_t count, unsigned threads, Task&& task) {
  threads = task_threads(threads, count);
  if (threads <= 1) {
    for (std::size_t i = 0; i < count; ++i) task(i);
    return;
  }
  std::atomic<std::size_t> next{0};
  std::vector<std::exception_ptr> errors(threads);
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      try {
        for (std::size_t i; (i = next.fetch_add(1)) < count;) task(i);
      } catch (...) {
        errors[t] = std::current_exception();
      }
    });
  for (auto& th : pool) th.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace memsched::detail
