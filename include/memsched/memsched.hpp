#pragma once
// The whole public API of memsched except the solver backends (memsched/solver/backends/*.hpp).

#include <memsched/core/errors.hpp>
#include <memsched/core/status.hpp>
#include <memsched/graph/concepts.hpp>
#include <memsched/graph/dataflow_graph.hpp>
#include <memsched/graph/json_io.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/graph/node_maps.hpp>
#include <memsched/graph/read_graph.hpp>
#include <memsched/order/kahn.hpp>
#include <memsched/order/order_result.hpp>
#include <memsched/order/peak_lower_bound.hpp>
#include <memsched/remat/remat_result.hpp>
#include <memsched/sim/execution_plan.hpp>
#include <memsched/sim/plan_from_computes.hpp>
#include <memsched/sim/simulate_order.hpp>
#include <memsched/sim/simulate_plan.hpp>
