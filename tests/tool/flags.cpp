// The tool's one rule for --time-limit and --threads (tool/cli.hpp: time_limit_of, threads_of) and
// its one error path (tool/main.cpp): usage errors exit 2 naming the flag, other errors exit 1
// naming the file. Run as a user would, through popen.

#include "../support/run_tool.hpp"

#include <doctest/doctest.h>

#include <string>

namespace {

using namespace memsched::testing;

const char* chain = R"({"name": "chain", "nodes": [
  {"id": 1, "bytes": 10}, {"id": 2, "bytes": 20}, {"id": 3, "bytes": 5}],
  "edges": [[1, 2], [2, 3]], "outputs": [3]})";

}  // namespace

TEST_CASE("memsched: --time-limit must be seconds > 0; a huge one means no limit") {
  const temp_dir s;
  const std::string graph = s.write("g.json", chain).string();
  for (const char* bad : {"nan", "0", "-1", "-inf", "abc", "1s", "''"}) {
    CAPTURE(bad);
    const tool_run r = run_tool("order " + graph + " --algo serenity --time-limit " + bad, s);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--time-limit must be a number of seconds > 0") != std::string::npos);
  }
  // The same rule for the other limits parsed by it.
  const tool_run attempt = run_tool("order " + graph + " --algo serenity --attempt-time-limit nan", s);
  CHECK(attempt.exit_code == 2);
  CHECK(attempt.err.find("--attempt-time-limit must be") != std::string::npos);
  for (const char* huge : {"1e999", "inf", "1e300", "0.5"}) {
    CAPTURE(huge);
    const tool_run r = run_tool("order " + graph + " --algo serenity --json --time-limit " + huge, s);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("\"peak_bytes\":30") != std::string::npos);  // running 2: 10 + 20 resident
  }
}

TEST_CASE("memsched: --threads is a whole number >= 0 (0: every hardware thread)") {
  const temp_dir s;
  const std::string graph = s.write("g.json", chain).string();
  for (const char* bad : {"-1", "1.5", "two", "99999999999"}) {
    CAPTURE(bad);
    const tool_run r = run_tool("order " + graph + " --algo serenity --threads " + bad, s);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--threads must be a whole number >= 0") != std::string::npos);
  }
  for (const char* good : {"0", "1", "2"}) {
    CAPTURE(good);
    CHECK(run_tool("order " + graph + " --algo serenity --threads " + std::string(good), s).exit_code == 0);
  }
}

TEST_CASE("memsched: one error path, exit 2 for usage, 1 for the rest with the file named") {
  const temp_dir s;
  const std::string graph = s.write("g.json", chain).string();
  const std::string missing = (s / "missing.json").string();
  const tool_run unreadable = run_tool("info " + missing, s);
  CHECK(unreadable.exit_code == 1);
  CHECK(unreadable.err.find(missing) != std::string::npos);
  const tool_run bad_graph = run_tool("order " + s.write("bad.json", "{\"nodes\": [").string() + " --algo kahn", s);
  CHECK(bad_graph.exit_code == 1);
  CHECK(bad_graph.err.find("bad.json") != std::string::npos);
  const tool_run usage = run_tool("order " + graph + " --algo nothing", s);
  CHECK(usage.exit_code == 2);
  CHECK(usage.err.find("usage: memsched order") != std::string::npos);
  CHECK(run_tool("order " + graph + " --no-such-flag", s).exit_code == 2);
  CHECK(run_tool("no-such-command", s).exit_code == 2);
}

TEST_CASE("memsched: --max-memory caps the solver models; one rule, refused models say both sizes") {
  const temp_dir s;
  const std::string graph = s.write("g.json", chain).string();
  for (const char* algo : {"checkmate-milp", "checkmate-lp", "moccasin"}) {
    CAPTURE(algo);
    const std::string remat = std::string("remat ") + graph + " --budget 100% --algo " + algo;
    for (const char* bad : {"0", "0x10", "150%", "0%", "-5", "nan%", "1e3", "''"}) {
      CAPTURE(bad);
      const tool_run r = run_tool(remat + " --max-memory " + bad, s);
      CHECK(r.exit_code == 2);
      CHECK(r.err.find("--max-memory must be") != std::string::npos);
    }
    // A cap below any model: nothing is built, the status says nothing was proven, the message
    // names the cap.
    const tool_run tiny = run_tool(remat + " --max-memory 1 --json", s);
    CHECK(tiny.exit_code == 2);
    CHECK(tiny.out.find("\"status\":\"no_solution\"") != std::string::npos);
    CHECK(tiny.out.find("over the memory cap of 1 bytes") != std::string::npos);
    // A cap a percentage of the RAM leaves room for this tiny model: the run plans normally.
    const tool_run roomy = run_tool(remat + " --max-memory 50% --json", s);
    CHECK(roomy.exit_code == 0);
    CHECK(roomy.out.find("\"peak_bytes\":30") != std::string::npos);
  }
  // Serenity's search memory takes the same flag and rule.
  const tool_run serenity_bad = run_tool("order " + graph + " --algo serenity --max-memory 150%", s);
  CHECK(serenity_bad.exit_code == 2);
  CHECK(serenity_bad.err.find("--max-memory must be") != std::string::npos);
  const tool_run serenity = run_tool("order " + graph + " --algo serenity --max-memory 1000000 --json", s);
  CHECK(serenity.exit_code == 0);
  CHECK(serenity.out.find("\"peak_bytes\":30") != std::string::npos);
  // Only the solver models take it.
  const tool_run heuristic = run_tool("remat " + graph + " --budget 100% --algo chen-sqrtn --max-memory 5", s);
  CHECK(heuristic.exit_code == 2);
  CHECK(heuristic.err.find("--max-memory is not an option of --algo chen-sqrtn") != std::string::npos);
}
