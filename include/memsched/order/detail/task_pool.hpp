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

/// Calls task(i) for every i in [0, count), in increasing i on each thread; each thread takes the
/// next i. threads == 0: hardware concurrency; at most `count` threads; threads <= 1 runs
/// everything on the calling thread. Rethrows the first exception (by thread) after every thread
/// has stopped. A task must not throw for a reason another task can cause (they are independent).
template <class Task>
void run_tasks(std::size_t count, unsigned threads, Task&& task) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, count));
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
