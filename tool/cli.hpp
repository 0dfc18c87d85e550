#pragma once
// Shared plumbing of the memsched tool: argument parsing, the subcommand and algorithm registries,
// graph loading and JSON output. Subcommands and algorithms register themselves from their own
// files (static registration), so adding one means adding a file.

#include <memsched/memsched.hpp>
#include <memsched/sim/plan_io.hpp>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace memsched_cli {

using json = nlohmann::json;

/// A command-line mistake: printed with the subcommand's usage, exit code 2.
struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The message for a library option out of range, naming the flag that sets it: the option's name
/// with dashes ("max_states" -> "--max-states") when `usage` lists that flag, else the library's
/// own message (which names the function and the option).
std::string option_error_message(const memsched::option_error& e, const std::string& usage);

/// Options of a subcommand: `--name VALUE` for value options, `--name` for flags, the rest positional.
struct option_spec {
  std::set<std::string> values;
  std::set<std::string> flags;
  void merge(const option_spec& other) {
    values.insert(other.values.begin(), other.values.end());
    flags.insert(other.flags.begin(), other.flags.end());
  }
};

class parsed_args {
 public:
  parsed_args(const std::vector<std::string>& argv, const option_spec& spec);
  [[nodiscard]] const std::vector<std::string>& positional() const { return positional_; }
  [[nodiscard]] bool has(const std::string& flag) const { return flags_.count(flag) != 0 || values_.count(flag) != 0; }
  [[nodiscard]] std::optional<std::string> get(const std::string& name) const;
  [[nodiscard]] std::string get_or(const std::string& name, const std::string& fallback) const {
    return get(name).value_or(fallback);
  }
  /// The integer value of --`name`, or nullopt when absent. Throws usage_error naming the flag for
  /// text that is not an integer, and saying "out of range" for one beyond 64 bits.
  [[nodiscard]] std::optional<long long> get_int(const std::string& name) const;
  /// The number value of --`name`, or nullopt when absent. Throws usage_error naming the flag for
  /// text that is not a decimal number (hex, a sign '+', blanks) and for NaN and infinities.
  [[nodiscard]] std::optional<double> get_double(const std::string& name) const;
  /// The single positional argument (the graph file), or a usage_error.
  [[nodiscard]] const std::string& one_positional(const char* what) const;
  /// The names of the options and flags given (without "--"), sorted.
  [[nodiscard]] std::vector<std::string> given() const;

 private:
  std::vector<std::string> positional_;
  std::set<std::string> flags_;
  std::map<std::string, std::string> values_;
};

struct subcommand {
  std::string name;
  std::string summary;  ///< One line for `memsched --help`.
  std::function<std::string()> usage;  ///< Full text for `memsched NAME --help` (built late: algorithms register too).
  std::function<int(const std::vector<std::string>& args)> run;
};

std::map<std::string, subcommand>& subcommands();

struct register_subcommand {
  explicit register_subcommand(subcommand s) { subcommands().emplace(s.name, std::move(s)); }
};

/// An algorithm of `memsched order --algo NAME`.
struct order_algorithm {
  std::string name;
  std::string usage;     ///< Lines describing its own options, for `memsched order --help`.
  option_spec options;   ///< Its own options, beyond the subcommand's.
  std::function<memsched::order_result(const memsched::dataflow_graph&, const parsed_args&)> run;
};
std::map<std::string, order_algorithm>& order_algorithms();
struct register_order_algorithm {
  explicit register_order_algorithm(order_algorithm a) { order_algorithms().emplace(a.name, std::move(a)); }
};

/// An algorithm of `memsched remat --algo NAME`: plans for a graph within a budget.
struct remat_algorithm {
  std::string name;
  std::string usage;
  option_spec options;
  /// Returns the plan result; `extra` receives algorithm-specific JSON fields (bound, backend, ...).
  std::function<memsched::remat_result(const memsched::dataflow_graph&, std::int64_t budget, const parsed_args&, json& extra)> run;
};
std::map<std::string, remat_algorithm>& remat_algorithms();
struct register_remat_algorithm {
  explicit register_remat_algorithm(remat_algorithm a) { remat_algorithms().emplace(a.name, std::move(a)); }
};

/// The observer behind every search's progress report, on stderr: with --progress one line per
/// report ("[progress] 1.23 s / 10 s  lifetime-search  best +3.21%  bound +0.50%  gap 2.70%
/// (value=1032.1 bound=1005)", the raw values last);
/// without it, when stderr is a terminal and --quiet is absent, the same text as one live line
/// rewritten in place (cleared by end_progress_line); otherwise nothing. Values read as `values`
/// says (costs as overhead over `total_cost`). It keeps every incumbent with its time (trace(): the
/// tool's anytime profile). `offset` seconds are added to every time (work
/// done before the algorithm started: loading, the input order). Pass it as
/// `options.observer = printer` (an observer_ref to it: it must outlive the call).
/// How a progress report's values read: bytes (an order's peak), plan costs (shown as overhead over
/// the graph's total cost), or plain numbers (a solver's own objective).
enum class progress_values { bytes, cost, number };

class progress_printer {
 public:
  explicit progress_printer(const parsed_args& args, double offset = 0, progress_values values = progress_values::bytes,
                            double total_cost = 0);
  void on_incumbent(double seconds, double value, double bound);
  void on_bound(double seconds, double bound);
  void on_phase(double seconds, std::string_view phase);
  /// Whether it prints anything (--progress, or the live line).
  [[nodiscard]] bool active() const noexcept { return mode_ != mode::off; }
  /// Each incumbent reported: seconds (with the offset) and value, in the order reported.
  [[nodiscard]] const std::vector<std::pair<double, double>>& trace() const noexcept { return trace_; }

 private:
  enum class mode { off, lines, live };
  void show(double seconds);
  [[nodiscard]] std::string value_text(double value) const;
  mode mode_ = mode::off;
  progress_values values_ = progress_values::bytes;
  double offset_ = 0, total_cost_ = 0;
  std::optional<double> limit_;
  std::string phase_;
  double best_ = std::numeric_limits<double>::quiet_NaN(), bound_ = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::pair<double, double>> trace_;
};

/// The sum of the costs of `g`'s vertices (a plan without recomputation costs that much).
[[nodiscard]] double total_cost_of(const memsched::dataflow_graph& g);

/// Clears the live progress line if one is on the terminal (before the result is printed).
void end_progress_line();

/// --threads N (unsigned; 0: every hardware thread) of `args`, or `fallback` when absent. One rule
/// for every subcommand. Throws usage_error naming the flag on a negative or non-integer value.
[[nodiscard]] unsigned threads_of(const parsed_args& args, unsigned fallback = 1);

/// A count flag --`name` N (an integer >= 0) of `args`, or `fallback` when absent. One rule for
/// every counted limit (rounds, options, levels). Throws usage_error naming the flag on a negative
/// or non-integer value.
[[nodiscard]] std::size_t count_of(const parsed_args& args, const std::string& name, std::size_t fallback);

/// A number flag --`name` (finite, in [min, max]) of `args`, or `fallback` when absent: the checked
/// parser of every real-valued flag. Throws usage_error naming the flag, the range and the text.
[[nodiscard]] double number_of(const parsed_args& args, const std::string& name, double fallback, double min, double max);

/// An integer flag --`name` in [min, max] of `args`, or `fallback` when absent: the checked parser
/// of every integer flag that is not a count. Throws usage_error naming the flag, the range and the
/// text ("out of range" beyond 64 bits).
[[nodiscard]] long long integer_of(const parsed_args& args, const std::string& name, long long fallback, long long min, long long max);

/// The items of a comma-separated flag value ("a,b,,c" -> a, b, c; empty items dropped).
[[nodiscard]] std::vector<std::string> split_list(const std::string& text);

/// --time-limit S (seconds, > 0) of `args`: nullopt when absent or too large to matter (beyond
/// 1e9 s, about 30 years: no limit), else the limit. One rule for every subcommand. Throws
/// usage_error naming the flag on NaN, zero, a negative value or text.
[[nodiscard]] std::optional<std::chrono::duration<double>> time_limit_of(const parsed_args& args, const std::string& flag = "time-limit");

/// A memory budget of flag --`flag`: bytes (a whole number in [0, 2^63)) or, when
/// `reference_peak` is given, a percentage of the peak it returns ("90%": a finite decimal > 0, no
/// hex, inf or nan; the bytes it stands for below 2^63; rounded down). `reference_peak` is called
/// only for a percentage. The one budget parser of the tool (remat, sweep, order --algo serenity).
/// Throws usage_error naming the flag and the text for anything else.
[[nodiscard]] std::int64_t budget_of(const std::string& text, const std::string& flag,
                                     const std::function<std::int64_t()>& reference_peak = {});

/// The check that `args` holds only options of the subcommand (`common`) and of the chosen
/// algorithm (`algorithm`, named `algo_name`): a flag of another algorithm is a usage_error
/// "--budget is not an option of --algo kahn" (the registries' option_spec are the tables).
void check_algorithm_options(const parsed_args& args, const option_spec& common, const std::string& algo_name,
                             const option_spec& algorithm);

/// The one check of every write of the tool: flushes `out` and throws memsched::file_error
/// "<name>: cannot write the file" when the stream failed (a full disk, /dev/full, a closed pipe).
/// main() runs it on std::cout as "<stdout>" after every subcommand.
void check_written(std::ostream& out, const std::string& name);

/// Writes a graph to `path` in the format of its extension (.json, .graphml, .dot): every --out of
/// a graph. Throws usage_error naming the path for another extension (before any work is lost to
/// it, call check_graph_path first), file_error when the file cannot be written.
void save_graph(const std::string& path, const memsched::dataflow_graph& g);

/// Throws usage_error naming `flag` and `path` when `path` has no graph extension write_graph knows.
void check_graph_path(const std::string& path, const std::string& flag = "out");

/// --max-memory BYTES|N% of `args` (the memory cap of a solver-based algorithm's model: a whole
/// number of bytes > 0, or a percentage in (0, 100] of the physical memory), or nullopt when
/// absent. One rule for every subcommand. Throws usage_error naming the flag on anything else.
[[nodiscard]] std::optional<std::uint64_t> max_memory_of(const parsed_args& args, const std::string& flag = "max-memory");

/// Reads a graph file, recognised by its extension (.json, .graphml, .dot).
memsched::dataflow_graph load_graph(const std::string& path);

/// The node ids of `g` by vertex index (what memsched's order and plan files hold).
std::vector<std::int64_t> node_ids(const memsched::dataflow_graph& g);

/// Prints `doc` as one line of JSON (what --json prints).
void print_json(const json& doc);

/// A subcommand's result: `doc` as one line of JSON with --json (nothing else on stdout), else
/// the lines `summary` writes for a person.
void print_result(const json& doc, const parsed_args& args, const std::function<void(std::ostream&)>& summary);

/// "1,234,567" for readability.
[[nodiscard]] std::string grouped(std::int64_t value);
/// "1,234,567 (1.2 MiB)": the exact bytes and the size in binary units.
[[nodiscard]] std::string bytes_text(std::int64_t value);
/// One line of a summary: the key padded to one column, then the value (as `memsched info`).
void summary_line(std::ostream& out, const std::string& key, const std::string& value);

/// Text for people: "512 B", "1.44 MiB", "2.10 GiB" (binary units, `digits` after the point).
[[nodiscard]] std::string size_text(std::int64_t bytes, int digits = 2);
/// "12.5%" (fraction 0.125); with `sign`, "+12.5%" / "-3.0%".
[[nodiscard]] std::string percent_text(double fraction, bool sign = false);
/// A cost or count as "%.10g" writes it ("1234.5", "1e+20").
[[nodiscard]] std::string number_text(double value);
/// "0.42 s", "12.3 s".
[[nodiscard]] std::string seconds_text(double seconds);
/// A solve status in words: "optimal (proven)", "feasible (not proven optimal)", ...
[[nodiscard]] std::string status_text(const std::string& status);

}  // namespace memsched_cli
