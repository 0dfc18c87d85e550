# Finds the third-party solver libraries behind memsched's optional backends and wraps each in an
# imported target: memsched_ext::cbc (CBC + Clp + Cgl + Osi via pkg-config `cbc`),
# memsched_ext::glpk (glpk.h + libglpk) and memsched_ext::gecode (Gecode's int/search/minimodel
# libraries + Threads). Used by memsched's own build (cmake/memsched_backends.cmake) and, installed
# next to memschedConfig.cmake, by find_package(memsched) to find the same libraries again, so the
# exported memsched::cbc / memsched::glpk / memsched::gecode targets name no absolute paths.
#
#   memsched_find_solver_library(<cbc|glpk|gecode> <out-var> [GLOBAL])
# sets <out-var> to TRUE when the library was found (and memsched_ext::<name> now exists).
include_guard(GLOBAL)

function(memsched_find_solver_library name out_var)
  set(global "")
  if("GLOBAL" IN_LIST ARGN)
    set(global GLOBAL)
  endif()
  set(${out_var} FALSE PARENT_SCOPE)
  if(TARGET memsched_ext::${name})
    set(${out_var} TRUE PARENT_SCOPE)
    return()
  endif()

  if(name STREQUAL "cbc")
    find_package(PkgConfig QUIET)
    if(NOT PKG_CONFIG_FOUND)
      return()
    endif()
    pkg_check_modules(MEMSCHED_PC_CBC QUIET IMPORTED_TARGET ${global} cbc)
    if(NOT MEMSCHED_PC_CBC_FOUND OR NOT TARGET PkgConfig::MEMSCHED_PC_CBC)
      return()
    endif()
    add_library(memsched_ext::cbc INTERFACE IMPORTED ${global})
    set_target_properties(memsched_ext::cbc PROPERTIES INTERFACE_LINK_LIBRARIES PkgConfig::MEMSCHED_PC_CBC)
    set(MEMSCHED_CBC_VERSION "${MEMSCHED_PC_CBC_VERSION}" CACHE INTERNAL "")

  elseif(name STREQUAL "glpk")
    find_path(MEMSCHED_GLPK_INCLUDE_DIR glpk.h)
    find_library(MEMSCHED_GLPK_LIBRARY glpk)
    mark_as_advanced(MEMSCHED_GLPK_INCLUDE_DIR MEMSCHED_GLPK_LIBRARY)
    if(NOT MEMSCHED_GLPK_INCLUDE_DIR OR NOT MEMSCHED_GLPK_LIBRARY)
      return()
    endif()
    add_library(memsched_ext::glpk UNKNOWN IMPORTED ${global})
    set_target_properties(memsched_ext::glpk PROPERTIES
      IMPORTED_LOCATION "${MEMSCHED_GLPK_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${MEMSCHED_GLPK_INCLUDE_DIR}")

  elseif(name STREQUAL "gecode")
    find_path(MEMSCHED_GECODE_INCLUDE_DIR gecode/kernel.hh)
    mark_as_advanced(MEMSCHED_GECODE_INCLUDE_DIR)
    if(NOT MEMSCHED_GECODE_INCLUDE_DIR)
      return()
    endif()
    set(libs "")
    foreach(component search minimodel int kernel support)
      find_library(MEMSCHED_GECODE_${component}_LIBRARY gecode${component})
      mark_as_advanced(MEMSCHED_GECODE_${component}_LIBRARY)
      if(NOT MEMSCHED_GECODE_${component}_LIBRARY)
        return()
      endif()
      list(APPEND libs "${MEMSCHED_GECODE_${component}_LIBRARY}")
    endforeach()
    # minimodel.hh also declares set and float modelling helpers; link them when present.
    foreach(component set float)
      find_library(MEMSCHED_GECODE_${component}_LIBRARY gecode${component})
      mark_as_advanced(MEMSCHED_GECODE_${component}_LIBRARY)
      if(MEMSCHED_GECODE_${component}_LIBRARY)
        list(INSERT libs 2 "${MEMSCHED_GECODE_${component}_LIBRARY}")
      endif()
    endforeach()
    find_package(Threads REQUIRED)
    add_library(memsched_ext::gecode INTERFACE IMPORTED ${global})
    set_target_properties(memsched_ext::gecode PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${MEMSCHED_GECODE_INCLUDE_DIR}"
      INTERFACE_LINK_LIBRARIES "${libs};Threads::Threads")

  else()
    message(FATAL_ERROR "memsched_find_solver_library: unknown solver library '${name}'")
  endif()
  set(${out_var} TRUE PARENT_SCOPE)
endfunction()
