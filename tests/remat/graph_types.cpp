// Every rematerialization strategy returns the same plan for one training graph whether it comes
// as a dataflow_graph (bundled nodes with roles), a memory_graph, an adjacency_list<listS> + node
// maps or a compressed_sparse_row_graph + node maps: the training roles reach every graph type.

#include <memsched/remat/best_heuristic.hpp>
#include <memsched/remat/checkmate.hpp>
#include <memsched/remat/checkmate_lp_rounding.hpp>
#include <memsched/remat/input_order.hpp>
#include <memsched/remat/moccasin.hpp>
#include <memsched/sim/simulate_plan.hpp>

#ifdef MEMSCHED_HAVE_CBC
#include <memsched/solver/backends/cbc.hpp>
#endif
#ifdef MEMSCHED_HAVE_GECODE
#include <memsched/solver/backends/gecode.hpp>
#endif

#include "support.hpp"

#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

using namespace memsched;
using namespace memsched::testing;

namespace {

using named_results = std::vector<std::pair<std::string, remat_result>>;

/// Every heuristic, with and without its searches, on one graph type.
template <class G, class... Maps>
named_results heuristics_on(const G& graph, std::int64_t budget, const Maps&... maps) {
  named_results out;
  out.emplace_back("checkpoint", checkpoint_plan(graph, unlimited_budget, {.checkpoints = {2, 5}}, maps...));
  out.emplace_back("checkpoint-all", checkpoint_all_plan(graph, unlimited_budget, {}, maps...));
  out.emplace_back("chen-sqrtn", chen_sqrtn_plan(graph, budget, {}, maps...));
  out.emplace_back("chen-greedy b", chen_greedy_plan(graph, budget, {.segment_bytes = 150}, maps...));
  out.emplace_back("chen-greedy", chen_greedy_plan(graph, budget, {}, maps...));
  out.emplace_back("ap-sqrtn", ap_sqrtn_plan(graph, budget, {}, maps...));
  out.emplace_back("ap-greedy", ap_greedy_plan(graph, budget, {}, maps...));
  out.emplace_back("linearized-sqrtn", linearized_sqrtn_plan(graph, budget, {.use_spare_memory = false}, maps...));
  out.emplace_back("linearized-greedy", linearized_greedy_plan(graph, budget, {}, maps...));
  out.emplace_back("revolve", revolve_plan(graph, budget, {}, maps...));
  out.emplace_back("revolve s=2", revolve_plan(graph, unlimited_budget, {.snapshots = 2}, maps...));
  out.emplace_back("best-heuristic", best_heuristic_plan(graph, budget, {}, maps...));
  return out;
}

/// The solver-based strategies that were built, with counted limits (deterministic).
template <class G, class... Maps>
named_results solvers_on(const G& graph, std::int64_t budget, const std::vector<std::size_t>& order, const execution_plan& start,
                         const Maps&... maps) {
  named_results out;
#ifdef MEMSCHED_HAVE_CBC
  out.emplace_back("checkmate-milp",
                   checkmate_milp_plan(graph, budget, checkmate_options{.backend = cbc_backend{}, .solver = {.node_limit = 2000}, .order = order},
                                       maps...));
  out.emplace_back("checkmate-lp", checkmate_lp_plan(graph, budget, checkmate_lp_options{.backend = cbc_backend{}, .order = order}, maps...));
#endif
#ifdef MEMSCHED_HAVE_GECODE
  out.emplace_back("moccasin", moccasin_plan(graph, budget,
                                             moccasin_options{.backend = gecode_backend{{.search = gecode_search::branch_and_bound}},
                                                              .solver = {.node_limit = 20000},
                                                              .order = order,
                                                              .start_plans = {start}},
                                             maps...));
#endif
  (void)graph, (void)budget, (void)order, (void)start;
  return out;
}

void check_same(const named_results& a, const named_results& b, const char* type) {
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CAPTURE(type);
    CAPTURE(a[i].first);
    CHECK(a[i].second.status == b[i].second.status);
    CHECK(a[i].second.plan == b[i].second.plan);
    CHECK(a[i].second.peak_bytes == b[i].second.peak_bytes);
    CHECK(a[i].second.total_cost == b[i].second.total_cost);
  }
}

}  // namespace

TEST_CASE("every heuristic: the same plan through dataflow_graph, memory_graph, listS + maps and CSR + maps") {
  const dataflow_graph t = chain_training_graph(12, 5);
  const memory_graph g = make_memory_graph(t);
  REQUIRE(g.has_training_roles());
  const typed_graph<lists_graph> lists(g.data());
  const typed_graph<csr_graph> csr(g.data());
  const std::int64_t peak = checkpoint_all_plan(g, unlimited_budget).peak_bytes;
  const auto budget = static_cast<std::int64_t>(0.8 * static_cast<double>(peak));
  const named_results ref = heuristics_on(t, budget);
  // The reference itself says the roles were seen: plans that fit and recompute.
  int recomputing = 0;
  for (const auto& [name, r] : ref) {
    CAPTURE(name);
    CHECK(r.status == solve_status::feasible);
    CHECK(simulate_plan(g, r.plan).peak_bytes == r.peak_bytes);
    recomputing += r.overhead > 0;
  }
  CHECK(recomputing >= 8);
  check_same(ref, heuristics_on(g, budget), "memory_graph");
  check_same(ref, heuristics_on(lists.graph, budget, lists.maps()), "adjacency_list<listS> + maps");
  check_same(ref, heuristics_on(csr.graph, budget, csr.maps()), "compressed_sparse_row_graph + maps");
}

#if defined(MEMSCHED_HAVE_CBC) || defined(MEMSCHED_HAVE_GECODE)
constexpr bool no_solver_backend = false;
#else
constexpr bool no_solver_backend = true;  // reported as skipped, not passed
#endif

TEST_CASE("every solver-based strategy: the same plan through every graph type" * doctest::skip(no_solver_backend)) {
  const dataflow_graph t = chain_training_graph(7, 5);
  const memory_graph g = make_memory_graph(t);
  const typed_graph<lists_graph> lists(g.data());
  const typed_graph<csr_graph> csr(g.data());
  const auto order = remat_input_order(t, {.source = input_order_source::graph}).order;
  const std::int64_t peak = checkpoint_all_plan(g, unlimited_budget).peak_bytes;
  // The tightest of a few budgets below the no-remat peak that a heuristic plan (the solvers' start) meets.
  std::int64_t budget = 0;
  for (double frac : {0.8, 0.85, 0.9, 0.95})
    if (!budget && best_heuristic_plan(t, static_cast<std::int64_t>(frac * static_cast<double>(peak))).status == solve_status::feasible)
      budget = static_cast<std::int64_t>(frac * static_cast<double>(peak));
  REQUIRE(budget > 0);
  const execution_plan start = best_heuristic_plan(t, budget).plan;
  const named_results ref = solvers_on(t, budget, order, start);
  for (const auto& [name, r] : ref) {
    CAPTURE(name);
    REQUIRE(has_solution(r.status));
    CHECK(r.overhead > 0.0);  // below the no-remat peak something is recomputed
    CHECK(simulate_plan(g, r.plan).peak_bytes <= budget);
  }
  check_same(ref, solvers_on(g, budget, order, start), "memory_graph");
  check_same(ref, solvers_on(lists.graph, budget, order, start, lists.maps()), "adjacency_list<listS> + maps");
  check_same(ref, solvers_on(csr.graph, budget, order, start, csr.maps()), "compressed_sparse_row_graph + maps");
}
