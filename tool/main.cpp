// memsched: memory-aware scheduling of dataflow graphs from the command line.
// Each subcommand lives in its own cmd_*.cpp file and registers itself. Errors are handled here,
// once, for every subcommand: usage errors exit 2 (with the subcommand's usage), everything else 1.

#include "cli.hpp"

#include <exception>
#include <iostream>

int main(int argc, char** argv) {
  using namespace memsched_cli;
  const std::string program = "memsched";
  auto overview = [&](std::ostream& os) {
    os << "usage: memsched <command> [options]   (memsched <command> --help for details)\n\ncommands:\n";
    for (const auto& [name, cmd] : subcommands()) os << "  " << name << std::string(name.size() < 10 ? 10 - name.size() : 1, ' ') << cmd.summary << '\n';
  };
  if (argc < 2) {
    overview(std::cerr);
    return 2;
  }
  const std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    overview(std::cout);
    return 0;
  }
  const auto it = subcommands().find(name);
  if (it == subcommands().end()) {
    std::cerr << "memsched: unknown command '" << name << "'\n";
    overview(std::cerr);
    return 2;
  }
  std::vector<std::string> args(argv + 2, argv + argc);
  for (const auto& a : args)
    if (a == "--help" || a == "-h") {
      std::cout << it->second.usage();
      return 0;
    }
  try {
    const int code = it->second.run(args);
    end_progress_line();
    check_written(std::cout, "<stdout>");  // every subcommand's printing, checked once
    return code;
  } catch (const usage_error& e) {
    end_progress_line();
    std::cerr << "memsched " << name << ": " << e.what() << "\n\n" << it->second.usage();
    return 2;
  } catch (const memsched::option_error& e) {
    end_progress_line();
    // The library checks the ranges of its options; the flag that set one is a usage error.
    std::cerr << "memsched " << name << ": " << option_error_message(e, it->second.usage()) << "\n\n" << it->second.usage();
    return 2;
  } catch (const std::exception& e) {
    end_progress_line();
    // Every other failure (file_error, graph_error, invalid_order, ...): its message names the file,
    // function or node.
    std::cerr << "memsched " << name << ": error: " << e.what() << '\n';
    return 1;
  } catch (...) {
    std::cerr << "memsched " << name << ": error: unknown exception\n";
    return 1;
  }
}
