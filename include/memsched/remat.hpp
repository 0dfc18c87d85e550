#pragma once
// memsched/remat.hpp, rematerialization: training graphs and every plan strategy (heuristics,
// Revolve, Checkmate, Moccasin, DTR, lifetime search, HiRemate, the remat_plan portfolio), one remat_result.
// Includes every public header of memsched/remat/ (the ctest area_headers checks that none is
// missing).

#include <memsched/remat/best_heuristic.hpp>
#include <memsched/remat/checkmate.hpp>
#include <memsched/remat/checkmate_lp_rounding.hpp>
#include <memsched/remat/checkmate_model.hpp>
#include <memsched/remat/checkpoint_generalizations.hpp>
#include <memsched/remat/checkpoint_plan.hpp>
#include <memsched/remat/chen.hpp>
#include <memsched/remat/cost_lower_bound.hpp>
#include <memsched/remat/dtr.hpp>
#include <memsched/remat/free_order.hpp>
#include <memsched/remat/heuristic_options.hpp>
#include <memsched/remat/hiremate.hpp>
#include <memsched/remat/hiremate_partition.hpp>
#include <memsched/remat/hiremate_stats.hpp>
#include <memsched/remat/hiremate_subgraph.hpp>
#include <memsched/remat/input_order.hpp>
#include <memsched/remat/lifetime_search.hpp>
#include <memsched/remat/moccasin.hpp>
#include <memsched/remat/moccasin_model.hpp>
#include <memsched/remat/remat_plan.hpp>
#include <memsched/remat/remat_result.hpp>
#include <memsched/remat/revolve.hpp>
#include <memsched/remat/sweep.hpp>
#include <memsched/remat/training_graph.hpp>
