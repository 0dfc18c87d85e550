#pragma once
// memsched/sim.hpp, the memory model and the simulator: orders and plans checked and measured,
// arenas, off-chip traffic, order and plan files. Includes every public header of memsched/sim/
// (the ctest area_headers checks that none is missing).

#include <memsched/sim/arena.hpp>
#include <memsched/sim/execution_plan.hpp>
#include <memsched/sim/layout.hpp>
#include <memsched/sim/layout_io.hpp>
#include <memsched/sim/memory_model.hpp>
#include <memsched/sim/offchip_traffic.hpp>
#include <memsched/sim/plan_from_computes.hpp>
#include <memsched/sim/plan_io.hpp>
#include <memsched/sim/random_layout.hpp>
#include <memsched/sim/simulate_order.hpp>
#include <memsched/sim/simulate_plan.hpp>
