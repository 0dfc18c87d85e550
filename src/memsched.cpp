// The library TU of memsched's separate-compilation mode (core/config.hpp): defines what the
// headers only declare when MEMSCHED_SEPARATE_COMPILATION is set. Built as the CMake target
// memsched::compiled, which passes MEMSCHED_SEPARATE_COMPILATION on to every TU that links it.
// Without CMake: compile this file once with -DMEMSCHED_SEPARATE_COMPILATION and every other TU
// with the same definition.

#ifndef MEMSCHED_SEPARATE_COMPILATION
#error "src/memsched.cpp is the separate-compilation library: define MEMSCHED_SEPARATE_COMPILATION (or link memsched::compiled)"
#endif

#include <memsched/graph/impl/dot_io.ipp>
#include <memsched/graph/impl/graphml_io.ipp>
#include <memsched/graph/impl/json_io.ipp>
#include <memsched/graph/impl/memory_graph.ipp>
#include <memsched/graph/impl/write_graph.ipp>
#include <memsched/order/impl/serenity.ipp>
#include <memsched/sim/impl/layout.ipp>
#include <memsched/sim/impl/simulate_plan.ipp>
#include <memsched/remat/impl/best_heuristic.ipp>
#include <memsched/remat/impl/checkmate_model.ipp>
#include <memsched/remat/impl/cost_lower_bound.ipp>
#include <memsched/remat/impl/dtr.ipp>
#include <memsched/remat/impl/free_order.ipp>
#include <memsched/remat/impl/hiremate.ipp>
#include <memsched/remat/impl/lifetime_search.ipp>
#include <memsched/remat/impl/moccasin_model.ipp>

// The instantiations the headers declare `extern` in this mode (graph/dataflow_graph.hpp,
// remat/remat_plan.hpp).
#include <memsched/graph/dataflow_graph.hpp>
#include <memsched/remat/remat_plan.hpp>

template memsched::memory_graph memsched::make_memory_graph<memsched::dataflow_graph>(const memsched::dataflow_graph&,
                                                                                     std::string_view);
template memsched::remat_result memsched::detail::remat_over_orders<memsched::no_solver>(
    const memsched::memory_graph&, std::int64_t, const memsched::remat_plan_options<memsched::no_solver>&,
    std::chrono::steady_clock::time_point, std::vector<std::vector<std::size_t>>, const memsched::remat_result*, double);
template memsched::remat_result memsched::detail::remat_on_ladder<memsched::no_solver>(
    const memsched::memory_graph&, std::int64_t, const memsched::remat_plan_options<memsched::no_solver>&,
    std::chrono::steady_clock::time_point, const std::vector<std::vector<std::size_t>>&);
