// libFuzzer harness: parse_json_graph on arbitrary text (see harness.hpp for what an accepted input
// must survive), and the library's JSON reader (graph/detail/json_reader.hpp) against nlohmann/json
// on the same text: both accept or both reject (apart from keys repeated in an object, which only
// ours rejects), and what both accept is the same value.
#include "harness.hpp"

#include <memsched/graph/detail/json_reader.hpp>

#include <nlohmann/json.hpp>

#include <optional>

namespace {

bool same_value(const memsched::detail::json_value& ours, const nlohmann::json& theirs) {
  using kind = memsched::detail::json_value::kind;
  switch (theirs.type()) {
    case nlohmann::json::value_t::null: return ours.is_null();
    case nlohmann::json::value_t::boolean: return ours.is_boolean() && ours.get<bool>() == theirs.get<bool>();
    case nlohmann::json::value_t::number_integer:
      return ours.type() == kind::integer && ours.get<std::int64_t>() == theirs.get<std::int64_t>();
    case nlohmann::json::value_t::number_unsigned:
      return ours.is_number_integer() && ours.get<std::uint64_t>() == theirs.get<std::uint64_t>() &&
             (ours.type() == kind::unsigned_integer) == (theirs.get<std::uint64_t>() > std::uint64_t(INT64_MAX));
    case nlohmann::json::value_t::number_float:
      return ours.type() == kind::floating && ours.get<double>() == theirs.get<double>() &&
             std::signbit(ours.get<double>()) == std::signbit(theirs.get<double>());
    case nlohmann::json::value_t::string: return ours.is_string() && ours.get<std::string>() == theirs.get<std::string>();
    case nlohmann::json::value_t::array:
      if (!ours.is_array() || ours.size() != theirs.size()) return false;
      for (std::size_t i = 0; i < ours.size(); ++i)
        if (!same_value(ours[i], theirs[i])) return false;
      return true;
    case nlohmann::json::value_t::object:
      if (!ours.is_object() || ours.size() != theirs.size()) return false;
      for (const auto& key : ours.keys())
        if (!theirs.contains(key) || !same_value(ours.at(key), theirs.at(key))) return false;
      return true;
    default: return false;
  }
}

void compare_readers(std::string_view text) {
  using memsched::fuzz::require;
  std::optional<memsched::detail::json_value> ours;
  bool repeated_key = false;
  try {
    ours = memsched::detail::parse_json(text, "fuzz");
  } catch (const memsched::file_error& e) {
    // Our reader stops at max_nesting_depth; nlohmann has no limit of its own.
    if (std::string_view(e.what()).find("nested deeper than") != std::string_view::npos) return;
    repeated_key = std::string_view(e.what()).find("appears twice") != std::string_view::npos;
  }
  std::optional<nlohmann::json> theirs;
  try {
    theirs = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
  }
  if (repeated_key) return;  // found at the object's end, possibly before a syntax error nlohmann reports
  // nlohmann ends the input at a NUL byte ("0\0x" was a graph file "0"); ours rejects it.
  const bool nul = text.find('\0') != std::string_view::npos;
  require(!ours || theirs, "json reader accepts what nlohmann rejects");
  require(ours || !theirs || nul, "json reader rejects what nlohmann accepts");
  if (ours) {
    require(same_value(*ours, *theirs), "json reader and nlohmann read different values");
    // The dump (used in messages, and by to_json users) reads back as the same value.
    require(same_value(memsched::detail::parse_json(ours->dump(), "dump"), *theirs), "json_value::dump does not read back");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  compare_readers(std::string_view(reinterpret_cast<const char*>(data), size));
  return memsched::fuzz::run_reader(data, size, [](std::string_view text) { return memsched::parse_json_graph(text, "fuzz"); });
}
