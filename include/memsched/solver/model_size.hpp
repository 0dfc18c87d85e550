#pragma once
// The memory a solver model will take, estimated before it is built, and the cap it must fit:
// solver-based algorithms count their model (variables, constraints, nonzeros, domain values),
// turn the counts into bytes for the model itself and for the backend's copy, and refuse a model
// over options.max_bytes with a message naming both sizes, instead of dying of std::bad_alloc.

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <string_view>

namespace memsched {

/// Counted size of a model and the bytes it is expected to need. `complete` is false when the
/// count stopped early because the bytes were already over a cap (the counts are then lower
/// bounds).
struct model_size_estimate {
  std::uint64_t variables = 0;
  std::uint64_t constraints = 0;
  std::uint64_t nonzeros = 0;       ///< Terms of linear rows (MILP), or of every CP constraint.
  std::uint64_t domain_values = 0;  ///< CP only: values listed in explicit variable domains.
  std::uint64_t model_bytes = 0;    ///< memsched's own model and index maps.
  std::uint64_t backend_bytes = 0;  ///< The backend's copy and working memory (measured constants).
  bool complete = true;
  [[nodiscard]] std::uint64_t bytes() const noexcept { return model_bytes + backend_bytes; }
};

/// The default memory cap of solver-based algorithms: half of the physical memory, and at most
/// half of the process's address-space or data limit (RLIMIT_AS, RLIMIT_DATA) when one is set.
/// O(1), never throws; 8 GiB when the system does not say.
[[nodiscard]] inline std::uint64_t default_max_bytes() noexcept {
  std::uint64_t cap = std::uint64_t{8} << 30;
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0) cap = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) / 2;
  for (int resource : {RLIMIT_AS, RLIMIT_DATA}) {
    rlimit r{};
    if (::getrlimit(resource, &r) == 0 && r.rlim_cur != RLIM_INFINITY) cap = std::min<std::uint64_t>(cap, r.rlim_cur / 2);
  }
  return cap;
}

/// "1.23 GB" (decimal units; "512 bytes" below 1 kB). O(1).
[[nodiscard]] inline std::string format_bytes(std::uint64_t bytes) {
  if (bytes < 1000) return std::to_string(bytes) + " bytes";
  const char* units[] = {"kB", "MB", "GB", "TB", "PB", "EB"};
  double v = static_cast<double>(bytes) / 1000.0;
  int u = 0;
  while (v >= 1000.0 && u < 5) {
    v /= 1000.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g %s", v, units[u]);
  return buf;
}

namespace detail {

/// What a backend needs beyond memsched's model: a fixed part plus bytes per variable, row,
/// nonzero and domain value, fitted with getrusage's maximum resident set (after the solve minus
/// after the build) on Checkmate and Moccasin models of random layered graphs of 100-400 vertices
/// (docs/solvers.md, "Model size"), rounded up by about 1.5x. `lp`: only the LP
/// relaxation is solved (Clp for cbc), which needs far less than the branch and bound.
struct backend_memory_constants {
  double fixed = 0, per_variable = 0, per_constraint = 0, per_nonzero = 0, per_domain_value = 0;
};

[[nodiscard]] constexpr backend_memory_constants backend_memory(std::string_view backend, bool lp) noexcept {
  // cbc: CbcModel with its cut generators kept 600 bytes per nonzero at 1.4 million nonzeros, and
  // about 280 MB whatever the size; Clp alone 200-265 bytes per nonzero.
  if (backend == "cbc") return lp ? backend_memory_constants{50e6, 0, 0, 400, 0} : backend_memory_constants{400e6, 0, 0, 900, 0};
  // Not measured here (not built on the measuring machine): CBC's figures.
  if (backend == "glpk") return lp ? backend_memory_constants{50e6, 0, 0, 400, 0} : backend_memory_constants{400e6, 0, 0, 900, 0};
  // gecode (Moccasin models of 100-400 vertices, LNS with 2,000 nodes): 21, 77, 261 MB for 31k,
  // 131k, 566k explicit domain values (460-680 bytes each: every space copy holds the domains).
  if (backend == "gecode") return {50e6, 200, 400, 50, 700};
  return {400e6, 200, 400, 900, 700};  // an unknown backend: the largest of the above
}

/// Fills e.backend_bytes from the counts for `backend`.
inline void add_backend_bytes(model_size_estimate& e, std::string_view backend, bool lp = false) noexcept {
  const backend_memory_constants c = backend_memory(backend, lp);
  const double b = c.fixed + c.per_variable * static_cast<double>(e.variables) + c.per_constraint * static_cast<double>(e.constraints) +
                   c.per_nonzero * static_cast<double>(e.nonzeros) + c.per_domain_value * static_cast<double>(e.domain_values);
  e.backend_bytes = b >= 1.8e19 ? std::numeric_limits<std::uint64_t>::max() / 2 : static_cast<std::uint64_t>(b);
}

/// The message of a model refused for its size.
[[nodiscard]] inline std::string model_too_large(std::string_view function, const model_size_estimate& e, std::uint64_t cap) {
  return std::string(function) + ": the model would need " + (e.complete ? "about " : "more than ") + format_bytes(e.bytes()) +
         " (" + (e.complete ? "" : "at least ") + std::to_string(e.variables) + " variables, " + std::to_string(e.constraints) +
         " constraints, " + std::to_string(e.nonzeros) + " nonzeros" +
         (e.domain_values ? ", " + std::to_string(e.domain_values) + " domain values" : std::string()) +
         "), over the memory cap of " + format_bytes(cap) + " (max_bytes); not built";
}

}  // namespace detail
}  // namespace memsched
