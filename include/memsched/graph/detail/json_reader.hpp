#pragma once
// A small, strict JSON reader (RFC 8259) for the graph, order and plan files, and the few writing
// helpers their writers need. Internal.
//
// Why not nlohmann/json: including it costs ~3 s of compile time in every translation unit that
// reads a graph, for a format of five value types. This reader keeps every
// check the files had through nlohmann: strict grammar (no comments, trailing commas, leading
// zeros, NaN), UTF-8 validated in strings, \u escapes with surrogate pairs, a UTF-8 byte order mark
// skipped, integers exact in int64 (or uint64, so that messages can say "does not fit in 64 bits"),
// other integers and decimals as double (a number beyond double is an error), a nesting limit
// (max_nesting_depth), and keys repeated in one object are an error naming the object (its node
// id when it has an integer "id"). Accessors are named as nlohmann's (is_object, contains, at,
// get<T>, dump) so that code can read either.

#include <memsched/core/errors.hpp>
#include <memsched/graph/detail/input_limits.hpp>
#include <memsched/graph/detail/utf8.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

namespace memsched::detail {

/// A parsed JSON value. Objects keep their members in file order (keys are unique: the reader
/// rejects repeats).
class json_value {
 public:
  enum class kind : std::uint8_t { null, boolean, integer, unsigned_integer, floating, string, array, object };

  json_value() = default;

  [[nodiscard]] kind type() const noexcept { return kind_; }
  [[nodiscard]] bool is_null() const noexcept { return kind_ == kind::null; }
  [[nodiscard]] bool is_boolean() const noexcept { return kind_ == kind::boolean; }
  /// An integer that fits in int64 or uint64 (as nlohmann: is_number_integer covers both).
  [[nodiscard]] bool is_number_integer() const noexcept { return kind_ == kind::integer || kind_ == kind::unsigned_integer; }
  /// An integer above INT64_MAX (and at most UINT64_MAX).
  [[nodiscard]] bool is_number_unsigned() const noexcept { return kind_ == kind::unsigned_integer; }
  [[nodiscard]] bool is_number() const noexcept { return is_number_integer() || kind_ == kind::floating; }
  /// A number whose text a double holds only approximately at the edge of its range: an integer
  /// beyond 64 bits (stored as the nearest double) or a nonzero number that underflows to 0.
  /// Readers of integers and costs refuse it with "out of range" rather than a misleading type.
  [[nodiscard]] bool is_out_of_range() const noexcept { return out_of_range_; }
  [[nodiscard]] bool is_string() const noexcept { return kind_ == kind::string; }
  [[nodiscard]] bool is_array() const noexcept { return kind_ == kind::array; }
  [[nodiscard]] bool is_object() const noexcept { return kind_ == kind::object; }

  /// Elements of an array, members of an object; 0 otherwise.
  [[nodiscard]] std::size_t size() const noexcept { return items_.size(); }
  /// Element i of an array. Precondition: is_array() and i < size().
  [[nodiscard]] const json_value& operator[](std::size_t i) const noexcept { return items_[i]; }
  /// The member `key` of an object, or null when there is none (or this is not an object).
  [[nodiscard]] const json_value* find(std::string_view key) const noexcept {
    if (kind_ == kind::object)
      for (std::size_t i = 0; i < keys_.size(); ++i)
        if (keys_[i] == key) return &items_[i];
    return nullptr;
  }
  [[nodiscard]] bool contains(std::string_view key) const noexcept { return find(key) != nullptr; }
  /// The member `key`; throws std::out_of_range naming it when there is none.
  [[nodiscard]] const json_value& at(std::string_view key) const {
    if (const json_value* v = find(key)) return *v;
    throw std::out_of_range("json: no member '" + std::string(key) + "'");
  }
  [[nodiscard]] const json_value& operator[](std::string_view key) const { return at(key); }
  /// The keys of an object, in file order.
  [[nodiscard]] const std::vector<std::string>& keys() const noexcept { return keys_; }

  /// The value as T: bool, std::string, a signed or unsigned integer type (converted as
  /// static_cast from the stored integer), or double. Precondition: the matching is_*().
  template <class T>
  [[nodiscard]] T get() const {
    if constexpr (std::is_same_v<T, bool>) {
      return bool_;
    } else if constexpr (std::is_same_v<T, std::string>) {
      return text_;
    } else if constexpr (std::is_floating_point_v<T>) {
      return kind_ == kind::floating ? static_cast<T>(double_) : kind_ == kind::integer ? static_cast<T>(int_) : static_cast<T>(uint_);
    } else {
      static_assert(std::is_integral_v<T>, "json_value::get: bool, std::string, an integer type or double");
      return kind_ == kind::unsigned_integer ? static_cast<T>(uint_) : static_cast<T>(int_);
    }
  }

  /// The value as compact JSON text (for messages): nlohmann's dump() format.
  [[nodiscard]] std::string dump() const {
    std::string out;
    dump_to(out);
    return out;
  }

 private:
  friend class json_parser;
  void dump_to(std::string& out) const;

  kind kind_ = kind::null;
  bool bool_ = false;
  bool out_of_range_ = false;
  union {
    std::int64_t int_ = 0;
    std::uint64_t uint_;
    double double_;
  };
  std::string text_;
  std::vector<json_value> items_;
  std::vector<std::string> keys_;
};

/// `text` as a JSON string literal (quotes, escapes as nlohmann writes them; UTF-8 kept as is).
inline void append_json_string(std::string& out, std::string_view text) {
  out += '"';
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          static constexpr char hex[] = "0123456789abcdef";
          out += "\\u00";
          out += hex[(c >> 4) & 0xF];
          out += hex[c & 0xF];
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

/// A double as JSON, as nlohmann writes it: the shortest digits that read back the same value,
/// in fixed notation with ".0" when it is an integer below 10^15, "0.000123" down to 10^-4,
/// else "1.5e+20"; null for NaN and infinities (JSON has none).
inline void append_json_double(std::string& out, double x) {
  if (!std::isfinite(x)) {
    out += "null";
    return;
  }
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  std::string_view s(buf, static_cast<std::size_t>(r.ptr - buf));  // -d.ddde+XX
  if (s.front() == '-') {
    out += '-';
    s.remove_prefix(1);
  }
  const std::size_t e = s.find('e');
  std::string digits;
  for (const char c : s.substr(0, e))
    if (c != '.') digits += c;
  int exp10 = 0;
  std::from_chars(s.data() + e + (s[e + 1] == '+' ? 2 : 1), s.data() + s.size(), exp10);
  const int k = static_cast<int>(digits.size());
  const int n = exp10 + 1;  // the decimal point comes after n digits
  if (k <= n && n <= 15) {
    out += digits;
    out.append(static_cast<std::size_t>(n - k), '0');
    out += ".0";
  } else if (0 < n && n <= 15) {
    out.append(digits, 0, static_cast<std::size_t>(n));
    out += '.';
    out.append(digits, static_cast<std::size_t>(n));
  } else if (-4 < n && n <= 0) {
    out += "0.";
    out.append(static_cast<std::size_t>(-n), '0');
    out += digits;
  } else {
    out += digits[0];
    if (k > 1) {
      out += '.';
      out.append(digits, 1);
    }
    const int ex = n - 1;
    out += ex < 0 ? "e-" : "e+";
    const int a = ex < 0 ? -ex : ex;
    if (a < 10) out += '0';
    out += std::to_string(a);
  }
}

inline void json_value::dump_to(std::string& out) const {
  switch (kind_) {
    case kind::null: out += "null"; break;
    case kind::boolean: out += bool_ ? "true" : "false"; break;
    case kind::integer: out += std::to_string(int_); break;
    case kind::unsigned_integer: out += std::to_string(uint_); break;
    case kind::floating: append_json_double(out, double_); break;
    case kind::string: append_json_string(out, text_); break;
    case kind::array:
      out += '[';
      for (std::size_t i = 0; i < items_.size(); ++i) {
        if (i > 0) out += ',';
        items_[i].dump_to(out);
      }
      out += ']';
      break;
    case kind::object:
      // nlohmann keeps objects sorted by key.
      std::vector<std::size_t> by_key(keys_.size());
      for (std::size_t i = 0; i < by_key.size(); ++i) by_key[i] = i;
      std::sort(by_key.begin(), by_key.end(), [&](std::size_t a, std::size_t b) { return keys_[a] < keys_[b]; });
      out += '{';
      for (std::size_t k = 0; k < by_key.size(); ++k) {
        if (k > 0) out += ',';
        append_json_string(out, keys_[by_key[k]]);
        out += ':';
        items_[by_key[k]].dump_to(out);
      }
      out += '}';
      break;
  }
}

/// The parser: parse(text, source) returns the document or throws file_error naming `source`.
class json_parser {
 public:
  /// Receives the elements of a streamed array (see parse_json_streaming) one at a time, by index.
  using element_sink = void (*)(void* context, std::size_t index, const json_value& element);

  json_parser(std::string_view text, const std::string& source) : text_(text), source_(source) {}

  /// Streams the elements of the top-level array (when `top_array`) and of the top-level object's
  /// member `member` (when it is an array) to `sink` instead of storing them.
  void stream(bool top_array, std::string_view member, element_sink sink, void* context) noexcept {
    stream_top_array_ = top_array;
    stream_member_ = member;
    sink_ = sink;
    context_ = context;
  }

  json_value parse() {
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;  // a UTF-8 byte order mark
    json_value doc;
    skip_space();
    value(doc, 0, sink_ && stream_top_array_);
    skip_space();
    if (pos_ < text_.size()) fail("unexpected '" + shown(pos_) + "' after the top-level value");
    return doc;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw file_error(source_ + ": not valid JSON (line " + std::to_string(line_of(text_, pos_)) + ": " + what + ")");
  }
  std::string shown(std::size_t at) const {
    const unsigned char c = static_cast<unsigned char>(text_[at]);
    if (c >= 0x20 && c < 0x7F) return std::string(1, static_cast<char>(c));
    static constexpr char hex[] = "0123456789ABCDEF";
    return std::string("\\x") + hex[c >> 4] + hex[c & 0xF];
  }
  void skip_space() noexcept {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r')) ++pos_;
  }
  void expect(char c, const char* what) {
    skip_space();
    if (pos_ >= text_.size()) fail(std::string("unexpected end of input; expected ") + what);
    if (text_[pos_] != c) fail("unexpected '" + shown(pos_) + "'; expected " + what);
    ++pos_;
  }

  // `stream`: an array here goes to sink_ element by element (and `v` is left an empty array).
  void value(json_value& v, std::size_t depth, bool stream = false) {
    skip_space();
    if (pos_ >= text_.size()) fail("unexpected end of input; expected a value");
    const char c = text_[pos_];
    if (c == '{' || c == '[') {
      if (depth + 1 > max_nesting_depth) fail_nesting(text_, pos_, source_, "arrays and objects");
      ++pos_;
      if (c == '{') object(v, depth + 1);
      else array(v, depth + 1, stream);
    } else if (c == '"') {
      v.kind_ = json_value::kind::string;
      string(v.text_);
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      number(v);
    } else if (literal("true")) {
      v.kind_ = json_value::kind::boolean;
      v.bool_ = true;
    } else if (literal("false")) {
      v.kind_ = json_value::kind::boolean;
    } else if (literal("null")) {
      v.kind_ = json_value::kind::null;
    } else {
      fail("unexpected '" + shown(pos_) + "'; expected a value");
    }
  }
  bool literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  void array(json_value& v, std::size_t depth, bool stream) {
    v.kind_ = json_value::kind::array;
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == ']') {
      ++pos_;
      return;
    }
    for (std::size_t i = 0;; ++i) {
      if (stream) {
        json_value element;  // a streamed array holds no element
        value(element, depth);
        sink_(context_, i, element);
      } else {
        v.items_.emplace_back();
        value(v.items_.back(), depth);
      }
      skip_space();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      expect(']', "',' or ']'");
      return;
    }
  }

  void object(json_value& v, std::size_t depth) {
    v.kind_ = json_value::kind::object;
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == '}') {
      ++pos_;
      return;
    }
    for (;;) {
      skip_space();
      if (pos_ >= text_.size() || text_[pos_] != '"') {
        if (pos_ >= text_.size()) fail("unexpected end of input; expected a key");
        fail("unexpected '" + shown(pos_) + "'; expected a key (a string)");
      }
      v.keys_.emplace_back();
      string(v.keys_.back());
      expect(':', "':'");
      v.items_.emplace_back();
      value(v.items_.back(), depth, sink_ && depth == 1 && v.keys_.back() == stream_member_);
      skip_space();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      expect('}', "',' or '}'");
      break;
    }
    check_repeated_keys(v, depth);
  }

  // The first key that appears twice in v (sorted copy: O(k log k)); the message names the node
  // when the object has an integer "id".
  void check_repeated_keys(const json_value& v, std::size_t depth) const {
    if (v.keys_.size() < 2) return;
    std::vector<std::string_view> keys(v.keys_.begin(), v.keys_.end());
    std::sort(keys.begin(), keys.end());
    const auto twice = std::adjacent_find(keys.begin(), keys.end());
    if (twice == keys.end()) return;
    std::string where = depth == 1 ? "the top-level object" : "an object";
    if (depth > 1)
      if (const json_value* id = v.find("id"); id && id->kind_ == json_value::kind::integer) where = "node " + std::to_string(id->int_);
    throw file_error(source_ + ": " + where + ": key \"" + std::string(*twice) + "\" appears twice");
  }

  static int hex_digit(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }
  unsigned hex4() {
    if (text_.size() - pos_ < 4) fail("\\u must be followed by 4 hex digits");
    unsigned u = 0;
    for (int k = 0; k < 4; ++k) {
      const int d = hex_digit(text_[pos_ + k]);
      if (d < 0) fail("\\u must be followed by 4 hex digits");
      u = u * 16 + static_cast<unsigned>(d);
    }
    pos_ += 4;
    return u;
  }
  static void append_utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
  void string(std::string& out) {
    ++pos_;  // the opening quote
    for (;;) {
      // Copy the plain run at once.
      std::size_t end = pos_;
      while (end < text_.size()) {
        const unsigned char c = static_cast<unsigned char>(text_[end]);
        if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) break;
        ++end;
      }
      out.append(text_.data() + pos_, end - pos_);
      pos_ = end;
      if (pos_ >= text_.size()) fail("unexpected end of input inside a string");
      const unsigned char c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"') {
        ++pos_;
        return;
      }
      if (c < 0x20) fail("control character " + shown(pos_) + " inside a string (must be escaped)");
      if (c >= 0x80) {
        const std::size_t n = utf8_sequence_length(reinterpret_cast<const unsigned char*>(text_.data()) + pos_, text_.size() - pos_);
        if (n == 0) fail("invalid UTF-8 byte " + shown(pos_) + " inside a string");
        out.append(text_.data() + pos_, n);
        pos_ += n;
        continue;
      }
      // An escape.
      ++pos_;
      if (pos_ >= text_.size()) fail("unexpected end of input inside a string");
      const char e = text_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned cp = hex4();
          if (cp >= 0xDC00 && cp <= 0xDFFF) fail("a low surrogate \\u escape without a high one before it");
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (text_.substr(pos_, 2) != "\\u") fail("a high surrogate \\u escape must be followed by a low one");
            pos_ += 2;
            const unsigned lo = hex4();
            if (lo < 0xDC00 || lo > 0xDFFF) fail("a high surrogate \\u escape must be followed by a low one");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          append_utf8(out, cp);
          break;
        }
        default: --pos_; fail("invalid escape '\\" + shown(pos_) + "' inside a string");
      }
    }
  }

  void number(json_value& v) {
    const std::size_t start = pos_;
    const auto digits = [&] {
      const std::size_t from = pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
      return pos_ - from;
    };
    if (text_[pos_] == '-') ++pos_;
    if (pos_ >= text_.size() || !(text_[pos_] >= '0' && text_[pos_] <= '9')) fail("a number needs a digit after '-'");
    if (text_[pos_] == '0') {
      ++pos_;
      if (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') fail("a number must not have leading zeros");
    } else {
      digits();
    }
    bool integral = true;
    if (pos_ < text_.size() && text_[pos_] == '.') {
      ++pos_;
      integral = false;
      if (digits() == 0) fail("a number needs a digit after '.'");
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      ++pos_;
      integral = false;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      if (digits() == 0) fail("a number needs a digit in its exponent");
    }
    const char* first = text_.data() + start;
    const char* last = text_.data() + pos_;
    if (integral) {
      if (*first == '-') {
        std::int64_t x = 0;
        if (std::from_chars(first, last, x).ec == std::errc{}) {
          v.kind_ = json_value::kind::integer;
          v.int_ = x;
          return;
        }
      } else {
        std::uint64_t x = 0;
        if (std::from_chars(first, last, x).ec == std::errc{}) {
          if (x <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
            v.kind_ = json_value::kind::integer;
            v.int_ = static_cast<std::int64_t>(x);
          } else {
            v.kind_ = json_value::kind::unsigned_integer;
            v.uint_ = x;
          }
          return;
        }
      }
      // Beyond 64 bits: a double (nlohmann did the same), marked out of range.
      v.out_of_range_ = true;
    }
    double d = 0;
    const auto r = std::from_chars(first, last, d);
    if (r.ec == std::errc::result_out_of_range) {
      // Overflow is an error; underflow reads as the nearest double (0 or a subnormal), as strtod,
      // and is marked out of range when it reads as 0.
      const std::string copy(first, last);
      d = std::strtod(copy.c_str(), nullptr);
      if (!std::isfinite(d)) fail("number " + copy + " is beyond the range of double");
      if (d == 0) v.out_of_range_ = true;
    } else if (r.ec != std::errc{} || r.ptr != last) {
      fail("bad number " + std::string(first, last));
    }
    v.kind_ = json_value::kind::floating;
    v.double_ = d;
  }

  std::string_view text_;
  const std::string& source_;
  std::size_t pos_ = 0;
  bool stream_top_array_ = false;
  std::string_view stream_member_;
  element_sink sink_ = nullptr;
  void* context_ = nullptr;
};

/// Parses `text` as one JSON document; `source` (a file name) starts every message.
/// Throws file_error: "<source>: not valid JSON (line L: ...)" for text that is not JSON (invalid
/// UTF-8 in a string, a number beyond double, nesting deeper than max_nesting_depth: the nesting
/// message names the line too), "<source>: node 3: key \"bytes\" appears twice" for a repeated key.
/// O(size) (O(k log k) per object of k keys).
[[nodiscard]] inline json_value parse_json(std::string_view text, const std::string& source) {
  return json_parser(text, source).parse();
}

/// parse_json, except that the elements of one array are handed to `each(index, element)` as they
/// are read instead of being stored: the top-level array when `top_array`, and the top-level
/// object's member `member` when its value is an array (the result holds an empty array there).
/// A plan or order file of millions of steps then costs its text and what `each` keeps, not a
/// json_value per step (~10 times the step). Syntax errors after a call to `each` are still
/// thrown: `each` should defer its own errors until the whole text is known to be JSON.
/// O(size) plus the calls. Throws what parse_json throws and whatever `each` throws.
template <class Each>
[[nodiscard]] json_value parse_json_streaming(std::string_view text, const std::string& source, bool top_array, std::string_view member,
                                              Each&& each) {
  json_parser parser(text, source);
  parser.stream(top_array, member,
                [](void* context, std::size_t index, const json_value& element) { (*static_cast<std::remove_reference_t<Each>*>(context))(index, element); },
                const_cast<void*>(static_cast<const void*>(std::addressof(each))));
  return parser.parse();
}

}  // namespace memsched::detail
