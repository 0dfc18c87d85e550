#pragma once
// The whole public API of memsched except the solver backends (memsched/solver/backends/*.hpp),
// which need their libraries: include them yourself and link memsched::cbc, memsched::glpk or memsched::gecode.
// Each area has its own header too (memsched/graph.hpp, sim.hpp, order.hpp, remat.hpp, solver.hpp).

#include <memsched/core/errors.hpp>
#include <memsched/core/observer.hpp>
#include <memsched/core/status.hpp>
#include <memsched/graph.hpp>
#include <memsched/sim.hpp>
#include <memsched/order.hpp>
#include <memsched/remat.hpp>
#include <memsched/solver.hpp>
