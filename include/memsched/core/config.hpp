#pragma once
// Build configuration of memsched.
//
// memsched is header-only by default: every translation unit that calls an algorithm compiles it.
// Defining MEMSCHED_SEPARATE_COMPILATION (on every TU, e.g. by linking the CMake target
// memsched::compiled, which also builds src/memsched.cpp) turns the heavy non-template parts into
// declarations; one library TU defines them: memory_graph's validation, the graph file readers and
// writers (graph/json_io.hpp, graphml_io.hpp, dot_io.hpp, write_graph.hpp, whose headers then include
// none of the parsers), Serenity's search, plan checking, and the non-template cores of the rematerialization algorithms (best heuristic, DTR,
// lifetime search, free order, cost lower bound, HiRemate, the Checkmate and Moccasin models). The
// graph-type dependent conversion to memory_graph, and what depends on a solver backend's type,
// stay templates in the user's TU. The results are the
// same in both modes (tests/consumer checks it); only who compiles the code changes. The scheme is
// Boost.Asio's BOOST_ASIO_SEPARATE_COMPILATION: a function declared with MEMSCHED_DECL is inline in
// header-only mode and an ordinary external function in separate mode, and its definition lives
// in an impl/*.ipp file that the header includes only in header-only mode.

#ifndef MEMSCHED_DECL
#ifdef MEMSCHED_SEPARATE_COMPILATION
#define MEMSCHED_DECL
#else
#define MEMSCHED_DECL inline
#endif
#endif
