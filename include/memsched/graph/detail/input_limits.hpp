#pragma once
// Internals of the graph and plan file readers and writers: reading and writing a file as text (a
// directory, an unreadable or unwritable file is named), and the XML and DOT nesting limits
// checked BEFORE a parser sees the text (the JSON reader, graph/detail/json_reader.hpp, checks
// max_nesting_depth as it reads). Boost's GraphML reader (the rapidxml parser of
// Boost.PropertyTree) and Boost's DOT parser descend recursively, one call chain per nested element
// or subgraph: tens of thousands of levels overflow the stack (SIGSEGV, not an exception). The
// scanners below follow each parser's tokenization closely enough that the depth they report is
// never below the depth the parser would reach, and stop where the parser would stop with a syntax
// error. A memsched graph needs a handful of levels; real GraphML and DOT files stay far below
// max_nesting_depth.

#include <memsched/core/errors.hpp>
#include <memsched/core/write_file.hpp>

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

namespace memsched::detail {

/// The deepest nesting of JSON arrays/objects, XML elements or DOT braces the readers accept
/// (Boost 1.78+ caps DOT subgraphs at 255 for the same reason).
inline constexpr std::size_t max_nesting_depth = 256;

/// The most bytes read_text_file reads from a pipe or socket (whose size is not known in
/// advance): far beyond any graph or plan memsched reads, and a bound on what an endless stream
/// costs.
inline constexpr std::size_t max_stream_bytes = std::size_t{1} << 30;

/// The whole file as text. A regular file is read whole; a pipe or socket (a shell's `<(...)`,
/// /dev/stdin) at most `max_bytes`; a device (/dev/zero, /dev/urandom: endless) is refused.
/// O(size). Throws file_error naming `path` for a directory ("is a directory"), a device, a stream
/// longer than `max_bytes` (naming the cap), a file that cannot be opened or one whose reading fails.
[[nodiscard]] inline std::string read_text_file(const std::filesystem::path& path, std::size_t max_bytes = max_stream_bytes) {
  std::error_code ec;
  const auto type = std::filesystem::status(path, ec).type();
  if (type == std::filesystem::file_type::directory) throw file_error(path.string() + ": is a directory, not a file");
  if (type == std::filesystem::file_type::character || type == std::filesystem::file_type::block)
    throw file_error(path.string() + ": is a device, not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw file_error(path.string() + ": cannot open the file");
  if (type == std::filesystem::file_type::regular) {
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) throw file_error(path.string() + ": cannot read the file");
    return text;
  }
  std::string text;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    const auto got = static_cast<std::size_t>(in.gcount());
    if (got > max_bytes - std::min(max_bytes, text.size()))
      throw file_error(path.string() + ": longer than " + std::to_string(max_bytes) + " bytes, the most read from a pipe or stream");
    text.append(buffer, got);
  }
  if (in.bad()) throw file_error(path.string() + ": cannot read the file");
  return text;
}

/// write_file with the whole `text`. The graph and plan writers build their text first, so that an
/// invalid graph or plan throws before the file is created or truncated.
inline void write_text_file(const std::filesystem::path& path, std::string_view text) {
  memsched::write_file(path, [text](std::ostream& out) { out.write(text.data(), static_cast<std::streamsize>(text.size())); });
}

/// 1-based line of text[pos].
[[nodiscard]] inline std::size_t line_of(std::string_view text, std::size_t pos) {
  std::size_t line = 1;
  for (std::size_t i = 0; i < pos && i < text.size(); ++i) line += text[i] == '\n';
  return line;
}

[[noreturn]] inline void fail_nesting(std::string_view text, std::size_t pos, const std::string& source, const char* what) {
  throw file_error(source + ": line " + std::to_string(line_of(text, pos)) + ": " + what + " nested deeper than " +
                   std::to_string(max_nesting_depth) + " levels");
}

/// Throws file_error naming `source` and the line when XML elements nest deeper than
/// max_nesting_depth. Follows rapidxml (Boost.PropertyTree's XML parser): comments, CDATA,
/// processing instructions and DOCTYPE (with its [...] subset) hold no elements, quoted attribute
/// values may hold '>', a NUL ends the input. O(size).
inline void check_xml_nesting(std::string_view text, const std::string& source) {
  const std::size_t nul = text.find('\0');
  if (nul != std::string_view::npos) text = text.substr(0, nul);
  const std::size_t n = text.size();
  auto skip_past = [&](std::size_t from, std::string_view end) {
    const std::size_t at = text.find(end, from);
    return at == std::string_view::npos ? n : at + end.size();
  };
  std::size_t depth = 0;
  std::size_t i = 0;
  while (i < n) {
    if (text[i] != '<') {
      ++i;
      continue;
    }
    const std::string_view rest = text.substr(i);
    if (rest.starts_with("<!--")) {
      i = skip_past(i + 4, "-->");
    } else if (rest.starts_with("<![CDATA[")) {
      i = skip_past(i + 9, "]]>");
    } else if (rest.starts_with("<?")) {
      i = skip_past(i + 2, "?>");
    } else if (rest.starts_with("<!DOCTYPE") && rest.size() > 9 &&
               (rest[9] == ' ' || rest[9] == '\t' || rest[9] == '\n' || rest[9] == '\r')) {
      // rapidxml skips to the '>' that is outside [...] (nested brackets counted); "<!DOCTYPEx" is
      // another "<!" node, which ends at the first '>'.
      std::size_t brackets = 0;
      for (i += 9; i < n && !(text[i] == '>' && brackets == 0); ++i) {
        if (text[i] == '[') ++brackets;
        if (text[i] == ']' && brackets > 0) --brackets;
      }
      ++i;
    } else if (rest.starts_with("<!")) {
      i = skip_past(i + 2, ">");
    } else if (rest.starts_with("</")) {
      if (depth > 0) --depth;
      i = skip_past(i + 2, ">");
    } else {
      if (++depth > max_nesting_depth) fail_nesting(text, i, source, "XML elements");
      // The start tag: attribute values are quoted and may hold '>'; "/>" closes the element.
      char quote = 0;
      std::size_t j = i + 1;
      for (; j < n; ++j) {
        if (quote) {
          if (text[j] == quote) quote = 0;
        } else if (text[j] == '"' || text[j] == '\'') {
          quote = text[j];
        } else if (text[j] == '>') {
          break;
        }
      }
      if (j < n && text[j - 1] == '/' && j - 1 > i) --depth;
      i = j + 1;
    }
  }
}

/// Throws file_error naming `source` and the line when DOT braces (subgraphs) nest deeper than
/// max_nesting_depth. Follows the tokenizer of Boost's read_graphviz: quoted strings with
/// backslash escapes, HTML strings <...> (tags counted, CDATA skipped), // and /* */ comments, and
/// '#' comments; braces inside any of these do not count. Where Boost's tokenizer would stop with
/// an error, so does the scan (the parser recursed no deeper than the braces before). O(size).
inline void check_dot_nesting(std::string_view text, const std::string& source) {
  const std::size_t n = text.size();
  // Boost's '$' ends a line at '\n', '\r' or '\f'.
  auto end_of_line = [&](std::size_t from) {
    while (from < n && text[from] != '\n' && text[from] != '\r' && text[from] != '\f') ++from;
    return from;
  };
  std::size_t depth = 0;
  std::size_t i = 0;
  while (i < n) {
    const char c = text[i];
    if (c == '{') {
      if (++depth > max_nesting_depth) fail_nesting(text, i, source, "DOT subgraphs");
      ++i;
    } else if (c == '}') {
      if (depth > 0) --depth;
      ++i;
    } else if (c == '#') {
      // A comment where Boost's "^#" matches, else a lexing error: either way nothing after it on the line counts.
      i = end_of_line(i);
    } else if (c == '/' && i + 1 < n && text[i + 1] == '/') {
      i = end_of_line(i);
    } else if (c == '/' && i + 1 < n && text[i + 1] == '*') {
      const std::size_t end = text.find("*/", i + 2);
      if (end == std::string_view::npos) return;  // Boost: invalid character '/'
      i = end + 2;
    } else if (c == '"') {
      for (++i; i < n && text[i] != '"'; ++i)
        if (text[i] == '\\') ++i;
      if (i >= n) return;  // unterminated string: Boost stops here
      ++i;
    } else if (c == '<') {
      // An HTML string: tags counted until they balance; the text between tags is skipped.
      long open = 0;
      do {
        if (i >= n) return;  // "Unclosed HTML string"
        if (text[i] != '<') {
          ++i;
          continue;
        }
        if (text.substr(i).starts_with("<![CDATA[")) {
          const std::size_t end = text.find("]]>", i + 9);
          if (end == std::string_view::npos) return;
          i = end + 3;
          continue;
        }
        const bool closing = i + 1 < n && text[i + 1] == '/';
        std::size_t j = i + 1 + (closing ? 1 : 0);
        for (; j < n && text[j] != '>'; ++j) {
          if (text[j] == '!' || text[j] == '?') return;  // "Invalid contents in HTML string"
          if (text[j] == '"' || text[j] == '\'') {
            const std::size_t end = text.find(text[j], j + 1);
            if (end == std::string_view::npos) return;
            j = end;
          }
        }
        if (j >= n) return;
        const bool empty = !closing && j > i + 1 && text[j - 1] == '/';
        if (closing)
          --open;
        else if (!empty)
          ++open;
        i = j + 1;
      } while (open > 0);
    } else {
      ++i;
    }
  }
}

}  // namespace memsched::detail
