#pragma once
// Build configuration of memsched.
//
// memsched is header-only by default: every translation unit that calls an algorithm compiles it.
// Defining MEMSCHED_SEPARATE_COMPILATION (on every TU, e.g. by linking the CMake target
// memsched::compiled, which also builds src/memsched.cpp) turns the heavy non-template parts into
// declarations; one library TU defines them: memory_graph's validation, the graph file readers and
// writers (graph/json_io.hpp, graphml_io.hpp, dot_io.hpp, write_graph.hpp, whose headers then include
// none of the parsers), Serenity's search, plan checking, the exact memory layout search, and the non-template cores of the rematerialization algorithms (best heuristic, DTR,
// lifetime search, free order, cost lower bound, HiRemate, the Checkmate and Moccasin models). The
// graph-type dependent conversion to memory_graph, and what depends on a solver backend's type,
// stay templates in the user's TU, except the conversion of a dataflow_graph and remat_plan's
// portfolio without a backend (`extern template` in graph/dataflow_graph.hpp and
// remat/remat_plan.hpp, instantiated in the library TU). The results are the
// same in both modes (tests/consumer checks it); only who compiles the code changes. The scheme is
// Boost.Asio's BOOST_ASIO_SEPARATE_COMPILATION: a function declared with MEMSCHED_DECL (and defined
// with MEMSCHED_DEF in an impl/*.ipp file beside its header) is an ordinary external function in
// separate mode, defined once in the library TU. In header-only mode the header includes the .ipp
// and both macros make the function a template with one unused, defaulted parameter
// (`template <class = void>`): callers write `f(args)` either way, but the compiler instantiates
// and generates the body only in a TU that calls it, so including a header (or the umbrella) costs
// the parsing of the algorithms a TU does not call, not their instantiation and code generation
// (bench/compile_time.sh's umbrella TU: ~2 s, docs/serenity.md "Compile time"). That is for
// memsched::detail functions and private members only: the public graph file functions
// (read_json_graph, write_dot_graph, ...) use MEMSCHED_INLINE at their declaration and definition
// (inline in header-only mode), so they stay ordinary functions in both modes (a user may take their
// address or store them in a std::function).

#ifndef MEMSCHED_DECL
#ifdef MEMSCHED_SEPARATE_COMPILATION
#define MEMSCHED_DECL
#define MEMSCHED_DEF
#define MEMSCHED_INLINE
#else
#define MEMSCHED_DECL template <class = void>
#define MEMSCHED_DEF template <class>
#define MEMSCHED_INLINE inline
#endif
#endif
