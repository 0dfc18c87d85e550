#pragma once
// Test support: runs the built memsched tool (MEMSCHED_TOOL_PATH) as a user would, through popen.

#include "temp_dir.hpp"

#include <doctest/doctest.h>

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

}  // namespace memsched::testing
