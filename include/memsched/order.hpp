#pragma once
// memsched/order.hpp, execution orders: baselines (Kahn, DFS, greedy), Serenity, lower bounds,
// single-node cuts. Includes every public header of memsched/order/ (the ctest area_headers checks
// that none is missing).

#include <memsched/order/arena_order.hpp>
#include <memsched/order/dfs.hpp>
#include <memsched/order/greedy.hpp>
#include <memsched/order/kahn.hpp>
#include <memsched/order/order_result.hpp>
#include <memsched/order/peak_lower_bound.hpp>
#include <memsched/order/serenity.hpp>
#include <memsched/order/serenity_options.hpp>
#include <memsched/order/single_node_cuts.hpp>
