#pragma once
// The whole public API of memsched except two kinds of headers that pull in a heavy dependency:
// the solver backends (memsched/solver/backends/*.hpp), which need their libraries (include them
// yourself and link memsched::cbc, memsched::glpk or memsched::gecode), and the GraphML and DOT
// readers (memsched/graph/graphml_io.hpp, dot_io.hpp, and read_graph.hpp, which reads any of the
// three formats by extension), which cost ~3 s of compile time in every translation unit.
// Each area has its own header too (memsched/graph.hpp, sim.hpp, order.hpp, remat.hpp, solver.hpp).

#include <memsched/core/errors.hpp>
#include <memsched/core/observer.hpp>
#include <memsched/core/status.hpp>
#include <memsched/core/write_file.hpp>
#include <memsched/graph.hpp>
#include <memsched/sim.hpp>
#include <memsched/order.hpp>
#include <memsched/remat.hpp>
#include <memsched/solver.hpp>
