#include "cli.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <fstream>
#include <iterator>

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
  if (ec != std::errc() || end != text->data() + text->size())
    throw usage_error("--" + name + " must be an integer, got '" + *text + "'");
  return v;
}

std::optional<double> parsed_args::get_double(const std::string& name) const {
  const auto text = get(name);
  if (!text) return std::nullopt;
  try {
    std::size_t used = 0;
    const double v = std::stod(*text, &used);
    if (used != text->size()) throw std::invalid_argument("trailing characters");
    return v;
  } catch (const std::exception&) {
    throw usage_error("--" + name + " must be a number, got '" + *text + "'");
  }
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
void print_progress_line(double seconds, const char* fields) { std::fprintf(stderr, "[progress] t=%.2fs %s\n", seconds, fields); }
std::string progress_number(double x) {
  if (std::isnan(x)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.10g", x);
  return buf;
}
}  // namespace

void progress_printer::on_incumbent(double seconds, double value, double bound) {
  best_seconds_ = seconds + offset_;
  ++incumbents_;
  if (print_) print_progress_line(best_seconds_, ("value=" + progress_number(value) + " bound=" + progress_number(bound)).c_str());
}

void progress_printer::on_bound(double seconds, double bound) {
  if (print_) print_progress_line(seconds + offset_, ("bound=" + progress_number(bound)).c_str());
}

void progress_printer::on_phase(double seconds, std::string_view phase) {
  if (print_) print_progress_line(seconds + offset_, ("phase=" + std::string(phase)).c_str());
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

void print_json(const json& doc, bool one_line) { std::cout << (one_line ? doc.dump() : doc.dump(2)) << '\n'; }

}  // namespace memsched_cli
