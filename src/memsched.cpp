// The library TU of memsched's separate-compilation mode (core/config.hpp): defines what the
// headers only declare when MEMSCHED_SEPARATE_COMPILATION is set. Built as the CMake target
// memsched::compiled, which passes MEMSCHED_SEPARATE_COMPILATION on to every TU that links it.
// Without CMake: compile this file once with -DMEMSCHED_SEPARATE_COMPILATION and every other TU
// with the same definition.

#ifndef MEMSCHED_SEPARATE_COMPILATION
#error "src/memsched.cpp is the separate-compilation library: define MEMSCHED_SEPARATE_COMPILATION (or link memsched::compiled)"
#endif

#include <memsched/order/impl/serenity.ipp>
