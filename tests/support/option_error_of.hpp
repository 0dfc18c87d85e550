// Test support: which option a call rejects, and that its message has the library's form.
#pragma once

#include <memsched/core/errors.hpp>

#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

namespace memsched::testing {

/// Runs `call`; when it throws option_error, checks that what() is "<function>: <option>
/// <requirement>" (`function_of(option)` gives the function a field belongs to) and returns the
/// option's name; "(not an option_error)" for another std::invalid_argument, "(nothing thrown)"
/// when nothing is thrown.
template <class Call, class FunctionOf>
std::string option_error_of_call(Call&& call, FunctionOf&& function_of) {
  try {
    call();
  } catch (const option_error& e) {
    CHECK(std::string(e.what()) == std::string(function_of(e.option())) + ": " + e.option() + " " + e.requirement());
    return e.option();
  } catch (const std::invalid_argument&) {
    return "(not an option_error)";
  }
  return "(nothing thrown)";
}

/// The same for a call whose every option belongs to `function`.
template <class Call>
std::string option_error_of(const std::string& function, Call&& call) {
  return option_error_of_call(call, [&](const std::string&) { return function; });
}

}  // namespace memsched::testing
