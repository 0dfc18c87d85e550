#pragma once
// Test support: the message of the file_error a call throws, for checking that errors name the
// file and the field.

#include <memsched/core/errors.hpp>

#include <exception>
#include <string>

namespace memsched::testing {

/// The message of the file_error `f` throws; "NO ERROR" or "WRONG EXCEPTION: ..." otherwise (so
/// that a comparison with the expected message fails).
template <class F>
std::string error_of(F&& f) {
  try {
    (void)f();
  } catch (const file_error& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("WRONG EXCEPTION: ") + e.what();
  }
  return "NO ERROR";
}

}  // namespace memsched::testing
