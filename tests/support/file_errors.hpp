#pragma once
// Test support: the message of the file_error a call throws, for checking that errors name the
// file and the field.

#include <memsched/core/errors.hpp>

#include <doctest/doctest.h>

#include <exception>
#include <string>

namespace memsched::testing {

/// The message of the file_error `f` throws. Otherwise the test fails here, naming what happened
/// (no exception, or another one with its message), and the result is "NO ERROR" or
/// "WRONG EXCEPTION: ...", which no expected message equals.
template <class F>
std::string error_of(F&& f) {
  try {
    (void)f();
  } catch (const file_error& e) {
    return e.what();
  } catch (const std::exception& e) {
    FAIL_CHECK("expected a file_error, got another exception: " << std::string(e.what()));
    return std::string("WRONG EXCEPTION: ") + e.what();
  }
  FAIL_CHECK("expected a file_error, nothing was thrown");
  return "NO ERROR";
}

}  // namespace memsched::testing
