#pragma once
// memsched/solver.hpp, the backend-neutral solver layer: MILP and CP models, backend concepts,
// options and the skeleton backend. Not the backends themselves (memsched/solver/backends/*.hpp
// need their libraries and targets). Includes every public header of memsched/solver/ (the ctest
// area_headers checks that none is missing).

#include <memsched/solver/concepts.hpp>
#include <memsched/solver/cp_concepts.hpp>
#include <memsched/solver/cp_model.hpp>
#include <memsched/solver/milp_model.hpp>
#include <memsched/solver/model_size.hpp>
#include <memsched/solver/skeleton_backend.hpp>
#include <memsched/solver/solver_options.hpp>
