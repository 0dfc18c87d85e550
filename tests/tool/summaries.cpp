// The tool's output for people: every subcommand prints a short summary by default whose figures
// are the --json document's (both runs compared), --json prints that document alone on stdout, an
// invalid order is said on stderr too, and a long search shows a live progress line on stderr when
// it is a terminal (a pseudo-terminal here), which --quiet silences.

#include <nlohmann/json.hpp>

#include "../support/run_tool.hpp"
#include "../support/temp_dir.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <pty.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

using namespace memsched::testing;
using json = nlohmann::json;

namespace {

const std::string data = MEMSCHED_TEST_DATA_DIR;
const std::string inference = data + "/torch/randwire_ws_stage.inference.json";
const std::string training = data + "/torch/resnet18.training.json";

// "1,234,567", as the summaries group digits.
std::string grouped(std::int64_t v) {
  std::string digits = std::to_string(v), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string percent(double fraction, bool sign) {
  char buf[64];
  std::snprintf(buf, sizeof buf, sign ? "%+.2f%%" : "%.2f%%", 100.0 * fraction);
  return buf;
}

// The summary line `key` (padded to 17 columns) of `text`, without the key; "" when absent.
std::string line_of(const std::string& text, const std::string& key) {
  std::string padded = key;
  padded.resize(17, ' ');
  const std::size_t at = text.find(padded);
  if (at == std::string::npos || (at > 0 && text[at - 1] != '\n')) return {};
  const std::size_t from = at + padded.size();
  return text.substr(from, text.find('\n', from) - from);
}

// Runs `args` with and without --json: the JSON run prints exactly one line, a JSON object; the
// other prints no JSON. Returns {document, summary}.
std::pair<json, std::string> both_ways(const std::string& args, int expected_exit = 0) {
  const tool_run j = run_tool(args + " --json");
  const tool_run h = run_tool(args);
  INFO("memsched " << args << "\nstderr: " << j.err << h.err);
  REQUIRE(j.exit_code == expected_exit);
  REQUIRE(h.exit_code == expected_exit);
  REQUIRE(!j.out.empty());
  CHECK(j.out.find('\n') == j.out.size() - 1);
  const json doc = json::parse(j.out, nullptr, false);
  REQUIRE(doc.is_object());
  CHECK(json::parse(h.out, nullptr, false).is_discarded());
  CHECK(h.out.size() < 2000);  // a few lines, never the plan or the order
  return {doc, h.out};
}

}  // namespace

TEST_CASE("memsched order: the summary's figures are the JSON's") {
  const temp_dir s;
  const std::string out = (s / "o.json").string();
  const auto [doc, text] = both_ways("order " + inference + " --algo serenity --out " + out);
  CHECK(line_of(text, "algorithm") == "serenity");
  CHECK(line_of(text, "status") == "optimal (proven)");
  CHECK(line_of(text, "peak").starts_with(grouped(doc["peak_bytes"].get<std::int64_t>()) + " (1.4 MiB)"));
  CHECK(line_of(text, "lower bound").starts_with(grouped(doc["lower_bound"].get<std::int64_t>())));
  CHECK(line_of(text, "nodes") == grouped(static_cast<std::int64_t>(doc["order"].size())));
  CHECK(line_of(text, "order") == "written to " + out);
  // Without --out the summary says how to get the order.
  const tool_run bare = run_tool("order " + inference + " --algo kahn");
  REQUIRE(bare.exit_code == 0);
  CHECK(line_of(bare.out, "order").find("--out ORDER.json") != std::string::npos);
}

TEST_CASE("memsched remat: the summary's figures are the JSON's; without a plan the message") {
  const temp_dir s;
  const std::string out = (s / "p.json").string();
  const auto [doc, text] = both_ways("remat " + training + " --budget 70% --algo best-heuristic --out " + out);
  REQUIRE(doc["steps"].size() > 0);
  CHECK(line_of(text, "algorithm") == "best-heuristic");
  CHECK(line_of(text, "status").starts_with(doc["status"].get<std::string>()));
  CHECK(line_of(text, "budget").starts_with(grouped(doc["budget"].get<std::int64_t>()) + " ("));
  const auto peak = doc["peak_bytes"].get<std::int64_t>(), budget = doc["budget"].get<std::int64_t>();
  CHECK(line_of(text, "peak").starts_with(grouped(peak) + " ("));
  CHECK(line_of(text, "peak").ends_with(percent(static_cast<double>(peak) / static_cast<double>(budget), false) + " of the budget"));
  CHECK(line_of(text, "overhead").starts_with(percent(doc["overhead"].get<double>(), true) + " compute"));
  std::size_t computes = 0;
  for (const auto& step : doc["steps"]) computes += step["op"] == "compute";
  CHECK(line_of(text, "steps") == grouped(static_cast<std::int64_t>(doc["steps"].size())) + " (" + grouped(static_cast<std::int64_t>(computes)) + " computes)");
  CHECK(line_of(text, "plan") == "written to " + out);
  // No plan: exit code 2 both ways, the status in words and the message.
  const auto [none, why] = both_ways("remat " + training + " --budget 1 --algo checkpoint-all", 2);
  CHECK(none["status"] == "infeasible");
  CHECK(line_of(why, "status") == "infeasible (proven: nothing fits)");
  CHECK(line_of(why, "message") == none["message"].get<std::string>());
  CHECK(line_of(why, "plan").empty());
}

TEST_CASE("memsched simulate: the summary's figures are the JSON's; an invalid order is said on stderr") {
  const temp_dir s;
  const std::string order = (s / "o.json").string();
  REQUIRE(run_tool("order " + inference + " --algo kahn --out " + order).exit_code == 0);
  const auto [doc, text] = both_ways("simulate " + inference + " --order " + order + " --arena first-fit");
  CHECK(line_of(text, "valid") == "yes (order of " + grouped(static_cast<std::int64_t>(doc["timeline"].size())) + " steps)");
  CHECK(line_of(text, "peak").starts_with(grouped(doc["peak_bytes"].get<std::int64_t>())));
  CHECK(line_of(text, "peak").ends_with("at step " + std::to_string(doc["peak_step"].get<int>()) + " (node " + std::to_string(doc["peak_node"].get<int>()) + ")"));
  CHECK(line_of(text, "arena").starts_with(grouped(doc["arena_bytes"].get<std::int64_t>())));
  CHECK(line_of(text, "arena").ends_with("first-fit, fragmentation " + percent(doc["fragmentation"].get<double>(), false)));
  // An order the simulator rejects: the verdict on stdout (both ways) and on stderr.
  const std::string bad = s.write("bad.json", R"([1, 0])").string();
  const std::string tiny = s.write("g.json", R"({"nodes": [{"id": 0, "bytes": 1}, {"id": 1, "bytes": 1}], "edges": [[0, 1]]})").string();
  const auto [verdict, said] = both_ways("simulate " + tiny + " --order " + bad, 1);
  CHECK(verdict["valid"] == false);
  CHECK(line_of(said, "valid") == "no: " + verdict["error"].get<std::string>());
  const tool_run r = run_tool("simulate " + tiny + " --order " + bad + " --json");
  CHECK(r.err.find("memsched simulate: invalid order: " + verdict["error"].get<std::string>()) != std::string::npos);
}

TEST_CASE("memsched generate, train, convert, rewrite, layout: summaries with the JSON's figures") {
  const temp_dir s;
  const std::string g = (s / "g.json").string(), t = (s / "t.json").string(), c = (s / "c.dot").string();
  const auto [gen, gen_text] = both_ways("generate random-layered --nodes 60 --seed 2 --out " + g);
  CHECK(line_of(gen_text, "nodes") == grouped(gen["nodes"].get<std::int64_t>()));
  CHECK(line_of(gen_text, "edges") == grouped(gen["edges"].get<std::int64_t>()));
  CHECK(line_of(gen_text, "written to") == g);
  const auto [tr, tr_text] = both_ways("train " + g + " --out " + t);
  CHECK(tr["nodes"].get<int>() == tr["forward"].get<int>() + tr["backward"].get<int>());
  CHECK(tr["forward"] == gen["nodes"]);
  CHECK(line_of(tr_text, "training graph").starts_with(grouped(tr["nodes"].get<std::int64_t>()) + " nodes (" + grouped(tr["forward"].get<std::int64_t>()) + " forward"));
  const auto [cv, cv_text] = both_ways("convert " + t + " --out " + c);
  CHECK(line_of(cv_text, "nodes") == grouped(cv["nodes"].get<std::int64_t>()));
  CHECK(line_of(cv_text, "total bytes").starts_with(grouped(cv["total_bytes"].get<std::int64_t>())));
  const std::string unet = data + "/torch/unet.inference.json";
  const auto [rw, rw_text] = both_ways("rewrite " + unet + " --out " + (s / "r.json").string());
  CHECK(line_of(rw_text, "nodes") == grouped(rw["nodes_before"].get<std::int64_t>()) + " -> " + grouped(rw["nodes_after"].get<std::int64_t>()));
  const std::string csv = s.write("b.csv", "id,lower,upper,size\n0,0,2,4\n1,1,3,4\n2,2,4,4\n").string();
  const auto [lay, lay_text] = both_ways("layout " + csv);
  CHECK(line_of(lay_text, "buffers") == "3");
  CHECK(line_of(lay_text, "arena") == grouped(lay["arena_bytes"].get<std::int64_t>()));
  CHECK(line_of(lay_text, "status") == "optimal (proven)");
}

// Runs the tool with stderr on a pseudo-terminal (stdout to a pipe); returns {stdout, what the
// terminal received}.
std::pair<std::string, std::string> run_on_terminal(const std::string& args) {
  int master = -1, slave = -1;
  REQUIRE(::openpty(&master, &slave, nullptr, nullptr, nullptr) == 0);
  int out[2];
  REQUIRE(::pipe(out) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::dup2(slave, STDERR_FILENO);
    ::dup2(out[1], STDOUT_FILENO);
    ::close(master);
    ::close(out[0]);
    const std::string command = std::string(MEMSCHED_TOOL_PATH) + " " + args;
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(slave);
  ::close(out[1]);
  std::string terminal, printed;
  char buf[4096];
  // Read the terminal until the child closes it (EIO), then stdout.
  for (ssize_t got; (got = ::read(master, buf, sizeof buf)) > 0;) terminal.append(buf, static_cast<std::size_t>(got));
  for (ssize_t got; (got = ::read(out[0], buf, sizeof buf)) > 0;) printed.append(buf, static_cast<std::size_t>(got));
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(master);
  ::close(out[0]);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  return {printed, terminal};
}

TEST_CASE("memsched remat on a terminal: one live progress line, cleared before the summary; --quiet") {
  const std::string args = "remat " + training + " --budget 60% --algo auto --backend none --time-limit 2";
  const auto [printed, terminal] = run_on_terminal(args);
  // Each report rewrites the line in place: carriage return, erase, the line; no newline.
  CHECK(terminal.find("\r\033[K[memsched] ") != std::string::npos);
  CHECK(terminal.find(" / 2.00 s") != std::string::npos);  // elapsed / limit
  CHECK(terminal.find("best +") != std::string::npos);     // best overhead
  CHECK(terminal.find('\n') == std::string::npos);
  CHECK(terminal.ends_with("\r\033[K"));  // cleared at the end
  CHECK(line_of(printed, "algorithm").starts_with("auto"));
  const auto [quiet_printed, quiet_terminal] = run_on_terminal(args + " --quiet");
  CHECK(quiet_terminal.empty());
  CHECK(line_of(quiet_printed, "algorithm").starts_with("auto"));
  // Not a terminal (a file): nothing unless --progress, which prints lines.
  const tool_run file = run_tool(args + " --json");
  CHECK(file.err.empty());
  const tool_run lines = run_tool(args + " --json --progress");
  CHECK(lines.err.find("[progress] ") != std::string::npos);
  CHECK(lines.err.find('\r') == std::string::npos);
}
