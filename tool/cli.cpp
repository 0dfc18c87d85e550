#include "cli.hpp"

#include <unistd.h>

#include <memsched/graph/detail/input_limits.hpp>
#include <memsched/graph/write_graph.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <iomanip>
#include <iterator>
#include <sstream>

namespace memsched_cli {

parsed_args::parsed_args(const std::vector<std::string>& argv, const option_spec& spec) {
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.size() > 2 && a.rfind("--", 0) == 0) {
      std::string name = a.substr(2), value;
      const auto eq = name.find('=');
      const bool inline_value = eq != std::string::npos;
      if (inline_value) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
      }
      // A repeated option is refused rather than letting the last one win unseen (a script that
      // appends a flag to a command line would otherwise override the user's choice silently).
      if (flags_.count(name) != 0 || values_.count(name) != 0) throw usage_error("option --" + name + " is given twice");
      if (spec.flags.count(name) && !inline_value) {
        flags_.insert(name);
      } else if (spec.values.count(name)) {
        if (!inline_value) {
          if (i + 1 >= argv.size()) throw usage_error("option --" + name + " needs a value");
          value = argv[++i];
        }
        values_[name] = value;
      } else {
        throw usage_error("unknown option --" + name);
      }
    } else {
      positional_.push_back(a);
    }
  }
}

std::optional<std::string> parsed_args::get(const std::string& name) const {
  const auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::optional<long long> parsed_args::get_int(const std::string& name) const {
  const auto text = get(name);
  if (!text) return std::nullopt;
  long long v = 0;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec == std::errc::result_out_of_range && end == text->data() + text->size())
    throw usage_error("--" + name + " = " + *text + " is out of range (an integer from -2^63 to 2^63 - 1)");
  if (ec != std::errc() || end != text->data() + text->size())
    throw usage_error("--" + name + " must be an integer, got '" + *text + "'");
  return v;
}

std::optional<double> parsed_args::get_double(const std::string& name) const {
  const auto text = get(name);
  if (!text) return std::nullopt;
  // from_chars(general): no hex, no leading '+' or blank; "inf" and "nan" parse and are refused
  // below with everything else that is not a finite number.
  const char* first = text->data();
  const char* last = first + text->size();
  double v = 0;
  const auto [end, ec] = std::from_chars(first, last, v, std::chars_format::general);
  if (first == last || ec == std::errc::invalid_argument || end != last) throw usage_error("--" + name + " must be a number, got '" + *text + "'");
  if (ec == std::errc::result_out_of_range || !std::isfinite(v))
    throw usage_error("--" + name + " must be a finite number, got '" + *text + "'");
  return v;
}

double number_of(const parsed_args& args, const std::string& name, double fallback, double min, double max) {
  const auto v = args.get_double(name);
  if (!v) return fallback;
  if (!(*v >= min && *v <= max)) {
    std::ostringstream range;
    range << "--" << name << " must be a number ";
    if (max == std::numeric_limits<double>::max()) range << ">= " << min;
    else range << "in [" << min << ", " << max << "]";
    range << ", got '" << *args.get(name) << "'";
    throw usage_error(range.str());
  }
  return *v;
}

long long integer_of(const parsed_args& args, const std::string& name, long long fallback, long long min, long long max) {
  const auto v = args.get_int(name);
  if (!v) return fallback;
  if (*v < min || *v > max)
    throw usage_error("--" + name + " must be " +
                      (max == std::numeric_limits<long long>::max() ? ">= " + std::to_string(min)
                                                                    : "in [" + std::to_string(min) + ", " + std::to_string(max) + "]") +
                      ", got " + std::to_string(*v));
  return *v;
}

std::vector<std::string> parsed_args::given() const {
  std::set<std::string> names(flags_);
  for (const auto& [name, value] : values_) names.insert(name);
  return {names.begin(), names.end()};
}

const std::string& parsed_args::one_positional(const char* what) const {
  if (positional_.size() != 1)
    throw usage_error(std::string("expected exactly one ") + what + ", got " + std::to_string(positional_.size()) + " arguments");
  return positional_.front();
}

std::map<std::string, subcommand>& subcommands() {
  static std::map<std::string, subcommand> registry;
  return registry;
}
std::map<std::string, order_algorithm>& order_algorithms() {
  static std::map<std::string, order_algorithm> registry;
  return registry;
}
std::map<std::string, remat_algorithm>& remat_algorithms() {
  static std::map<std::string, remat_algorithm> registry;
  return registry;
}

std::vector<std::int64_t> node_ids(const memsched::dataflow_graph& g) { return memsched::vertex_ids(g, memsched::default_node_maps(g)); }

namespace {
bool live_line_shown = false;  // a live progress line is on the terminal
}  // namespace

progress_printer::progress_printer(const parsed_args& args, double offset, progress_values values, double total_cost)
    : values_(values), offset_(offset), total_cost_(total_cost) {
  if (args.has("progress")) mode_ = mode::lines;
  else if (!args.has("quiet") && ::isatty(STDERR_FILENO)) mode_ = mode::live;
  if (const auto limit = time_limit_of(args)) limit_ = limit->count();
}

std::string progress_printer::value_text(double value) const {
  if (std::isnan(value)) return "-";
  if (values_ == progress_values::bytes) return size_text(static_cast<std::int64_t>(value));
  if (values_ == progress_values::cost && total_cost_ > 0) return percent_text(value / total_cost_ - 1, true);
  return number_text(value);
}

void progress_printer::show(double seconds) {
  if (mode_ == mode::off) return;
  std::string line = seconds_text(seconds);
  if (limit_) line += " / " + seconds_text(*limit_);
  if (!phase_.empty()) line += "  " + phase_;
  line += "  best " + value_text(best_) + "  bound " + value_text(bound_);
  if (!std::isnan(best_) && !std::isnan(bound_) && best_ > 0) line += "  gap " + percent_text(std::max(0.0, (best_ - bound_) / best_));
  if (mode_ == mode::lines) {
    // The raw numbers too, for scripts that read the log.
    line += "  (value=" + (std::isnan(best_) ? std::string("-") : number_text(best_)) +
            " bound=" + (std::isnan(bound_) ? std::string("-") : number_text(bound_)) + ")";
    std::fprintf(stderr, "[progress] %s\n", line.c_str());
  } else {
    std::fprintf(stderr, "\r\033[K[memsched] %s", line.c_str());
    live_line_shown = true;
  }
  std::fflush(stderr);
}

void progress_printer::on_incumbent(double seconds, double value, double bound) {
  trace_.emplace_back(seconds + offset_, value);
  best_ = value;
  if (!std::isnan(bound)) bound_ = bound;
  show(seconds + offset_);
}

void progress_printer::on_bound(double seconds, double bound) {
  bound_ = bound;
  show(seconds + offset_);
}

void progress_printer::on_phase(double seconds, std::string_view phase) {
  phase_ = std::string(phase);
  show(seconds + offset_);
}

double total_cost_of(const memsched::dataflow_graph& g) {
  double sum = 0;
  for (auto v : boost::make_iterator_range(boost::vertices(g))) sum += g[v].cost;
  return sum;
}

void end_progress_line() {
  if (!live_line_shown) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  live_line_shown = false;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

std::size_t count_of(const parsed_args& args, const std::string& name, std::size_t fallback) {
  const auto v = args.get_int(name);
  if (!v) return fallback;
  if (*v < 0) throw usage_error("--" + name + " must not be negative, got " + std::to_string(*v));
  return static_cast<std::size_t>(*v);
}

unsigned threads_of(const parsed_args& args, unsigned fallback) {
  const auto text = args.get("threads");
  if (!text) return fallback;
  unsigned long long v = 0;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc() || end != text->data() + text->size() || v > std::numeric_limits<unsigned>::max())
    throw usage_error("--threads must be a whole number >= 0 (0: every hardware thread), got '" + *text + "'");
  return static_cast<unsigned>(v);
}

std::optional<std::chrono::duration<double>> time_limit_of(const parsed_args& args, const std::string& flag) {
  const auto text = args.get(flag);
  if (!text) return std::nullopt;
  // strtod, not stod: an overflowing "1e999" is a huge limit (HUGE_VAL), not a usage error.
  char* end = nullptr;
  const double seconds = text->empty() ? std::nan("") : std::strtod(text->c_str(), &end);
  if (end != text->c_str() + text->size() || !(seconds > 0))
    throw usage_error("--" + flag + " must be a number of seconds > 0, got '" + *text + "'");
  if (seconds > 1e9) return std::nullopt;  // beyond any run: no limit (and no overflow in clock arithmetic)
  return std::chrono::duration<double>(seconds);
}

namespace {

// The number of a percentage "N%" (--budget, --max-memory): plain decimal digits, '.', and an
// exponent. from_chars(general) takes no hex, and its "inf" and "nan" are refused here, as is any
// sign or blank. Throws bad(why) unless it is a finite number > 0.
template <class Bad>
double percentage_of(std::string_view number, Bad&& bad) {
  const char* first = number.data();
  const char* last = first + number.size();
  for (const char* c = first; c != last; ++c)
    if (!((*c >= '0' && *c <= '9') || *c == '.' || *c == 'e' || *c == 'E' || ((*c == '-' || *c == '+') && c > first && (c[-1] == 'e' || c[-1] == 'E'))))
      throw bad(*c == '-' && c == first ? "a percentage is > 0" : "a percentage is a finite decimal number");
  double pct = 0;
  const auto [end, ec] = std::from_chars(first, last, pct, std::chars_format::general);
  if (first == last || ec == std::errc::invalid_argument || end != last) throw bad("a percentage is a finite decimal number");
  if (ec == std::errc::result_out_of_range || !std::isfinite(pct) || !(pct > 0)) throw bad("a percentage is a finite number > 0");
  return pct;
}

}  // namespace

std::optional<std::uint64_t> max_memory_of(const parsed_args& args, const std::string& flag) {
  const auto text = args.get(flag);
  if (!text) return std::nullopt;
  auto bad = [&] {
    return usage_error("--" + flag + " must be a whole number of bytes > 0 or a percentage of the physical memory in (0, 100] like 50%, got '" +
                       *text + "'");
  };
  if (text->empty()) throw bad();
  if (text->back() == '%') {
    const double pct = percentage_of(std::string_view(*text).substr(0, text->size() - 1), [&](const std::string&) { return bad(); });
    if (!(pct <= 100)) throw bad();
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page <= 0) throw usage_error("--" + flag + ": the physical memory is unknown here; give a number of bytes");
    const double bytes = static_cast<double>(pages) * static_cast<double>(page) * pct / 100.0;
    return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(bytes));
  }
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc() || end != text->data() + text->size() || v == 0) throw bad();
  return v;
}

std::int64_t budget_of(const std::string& text, const std::string& flag, const std::function<std::int64_t()>& reference_peak) {
  const std::string what = reference_peak ? "a number of bytes >= 0 or a percentage like 90%" : "a number of bytes >= 0";
  auto bad = [&](const std::string& why) -> usage_error {
    return usage_error("--" + flag + " must be " + what + ", got '" + text + "'" + (why.empty() ? "" : " (" + why + ")"));
  };
  const char* first = text.data();
  const char* last = text.data() + text.size();
  if (!text.empty() && text.back() == '%') {
    if (!reference_peak) throw bad("no percentage here: there is no reference peak");
    const double pct = percentage_of(std::string_view(first, text.size() - 1), bad);
    const double bytes = pct / 100.0 * static_cast<double>(reference_peak());
    // 2^63 is exact in a double: anything at or beyond it has no int64 value.
    if (!(bytes < 9223372036854775808.0)) throw bad("that many bytes overflow 64 bits");
    return static_cast<std::int64_t>(bytes);
  }
  if (text.empty() || !(*first >= '0' && *first <= '9')) throw bad(text.empty() || *first != '-' ? "" : "a budget is not negative");
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(first, last, v);
  if (ec == std::errc::result_out_of_range) throw bad("beyond 2^63 - 1 bytes");
  if (ec != std::errc() || end != last) throw bad("");
  return v;
}

void check_algorithm_options(const parsed_args& args, const option_spec& common, const std::string& algo_name,
                             const option_spec& algorithm) {
  for (const auto& name : args.given()) {
    if (common.values.count(name) || common.flags.count(name) || algorithm.values.count(name) || algorithm.flags.count(name)) continue;
    std::string own;
    for (const auto& o : algorithm.values) own += (own.empty() ? "--" : ", --") + o;
    for (const auto& o : algorithm.flags) own += (own.empty() ? "--" : ", --") + o;
    throw usage_error("--" + name + " is not an option of --algo " + algo_name + " (its own options: " + (own.empty() ? "none" : own) + ")");
  }
}

void check_written(std::ostream& out, const std::string& name) {
  out.flush();
  if (!out) throw memsched::file_error(name + ": cannot write the file");
}

void check_graph_path(const std::string& path, const std::string& flag) {
  if (!memsched::graph_file_format_of(path))
    throw usage_error("--" + flag + " " + path + ": unknown graph file extension (expected .json, .graphml or .dot)");
}

void save_graph(const std::string& path, const memsched::dataflow_graph& g) {
  check_graph_path(path);
  memsched::write_graph(path, g);
}

void print_json(const json& doc) { std::cout << doc.dump() << '\n'; }

void print_result(const json& doc, const parsed_args& args, const std::function<void(std::ostream&)>& summary) {
  end_progress_line();
  if (args.has("json")) return print_json(doc);
  summary(std::cout);
}

/// "1,234,567" for readability.
std::string grouped(std::int64_t value) {
  std::string digits = std::to_string(value), out;
  const std::size_t start = digits[0] == '-' ? 1 : 0;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > start && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

/// "1,234,567 (1.2 MiB)".
std::string bytes_text(std::int64_t value) {
  return value >= 1024 ? grouped(value) + " (" + size_text(value, 1) + ")" : grouped(value);
}

void summary_line(std::ostream& out, const std::string& key, const std::string& value) {
  out << std::left << std::setw(17) << key << value << '\n';
}

std::string size_text(std::int64_t bytes, int digits) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024 && bytes > -1024) return std::to_string(bytes) + " B";
  double scaled = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (std::abs(scaled) >= 1024 && unit + 1 < std::size(units)) {
    scaled /= 1024;
    ++unit;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f %s", digits, scaled, units[unit]);
  return buf;
}

std::string percent_text(double fraction, bool sign) {
  char buf[64];
  std::snprintf(buf, sizeof buf, sign ? "%+.2f%%" : "%.2f%%", 100.0 * fraction);
  return buf;
}

std::string number_text(double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.10g", value);
  return buf;
}

std::string seconds_text(double seconds) {
  char buf[64];
  std::snprintf(buf, sizeof buf, seconds < 10 ? "%.2f s" : "%.1f s", seconds);
  return buf;
}

std::string status_text(const std::string& status) {
  if (status == "optimal") return "optimal (proven)";
  if (status == "feasible") return "feasible (not proven optimal)";
  if (status == "infeasible") return "infeasible (proven: nothing fits)";
  if (status == "no_solution") return "no solution found (not proven impossible)";
  if (status == "time_limit") return "time limit reached (not proven)";
  return status;
}

std::string option_error_message(const memsched::option_error& e, const std::string& usage) {
  // A nested option ("tuning.budgets") has the flag of its last part.
  const std::string& option = e.option();
  std::string flag = "--" + option.substr(option.rfind('.') + 1);
  std::replace(flag.begin(), flag.end(), '_', '-');
  // A whole word of the usage text: "--max-states N" or "[--max-states N]", not "--max-states-x".
  for (std::size_t at = usage.find(flag); at != std::string::npos; at = usage.find(flag, at + 1)) {
    const std::size_t end = at + flag.size();
    if (end == usage.size() || usage[end] == ' ' || usage[end] == ']' || usage[end] == '\n' || usage[end] == '=')
      return flag + " " + e.requirement();
  }
  return e.what();
}

}  // namespace memsched_cli
