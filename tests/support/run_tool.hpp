#pragma once
// Test support: runs the built memsched tool (MEMSCHED_TOOL_PATH) as a user would, through popen.

#include "temp_dir.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

namespace memsched::testing {

struct tool_run {
  int exit_code = -1;
  std::string out;  ///< Standard output.
  std::string err;  ///< Standard error.
};

/// Runs `memsched ARGS` (ARGS is passed to the shell as is) and captures its exit code and output;
/// `scratch` holds the captured standard error.
inline tool_run run_tool(const std::string& args, const temp_dir& scratch) {
  const auto err_file = scratch / "stderr.txt";
  const std::string command = std::string(MEMSCHED_TOOL_PATH) + " " + args + " 2>" + err_file.string();
  tool_run r;
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  std::size_t got = 0;
  while ((got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) r.out.append(buffer, got);
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err_file);
  r.err.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return r;
}

/// Runs `memsched ARGS --json` (ARGS as given when they already hold --json), REQUIREs that it exits
/// with 0 and returns its standard output parsed as JSON. A failure names the command and shows its
/// standard error (or the start of its output, if that is not JSON), so it reads as a failed check
/// rather than an exception thrown out of the test.
inline nlohmann::json run_tool_json(const std::string& given, const temp_dir& scratch) {
  const bool has_json = (given + " ").find(" --json ") != std::string::npos;
  const std::string args = has_json ? given : given + " --json";
  const tool_run r = run_tool(args, scratch);
  REQUIRE_MESSAGE(r.exit_code == 0, "memsched " << args << " exited with " << r.exit_code << ": " << r.err);
  nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, false);
  if (doc.is_discarded()) FAIL("memsched " << args << " did not print JSON: " << r.out.substr(0, 200));
  return doc;
}

/// The scratch directory of the one-argument overloads below: one for the whole test program.
inline const temp_dir& shared_scratch() {
  static const temp_dir dir;
  return dir;
}

/// run_tool and run_tool_json with the program's shared scratch directory.
inline tool_run run_tool(const std::string& args) { return run_tool(args, shared_scratch()); }
inline nlohmann::json run_tool_json(const std::string& args) { return run_tool_json(args, shared_scratch()); }

}  // namespace memsched::testing
