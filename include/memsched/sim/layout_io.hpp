#pragma once
// Layout problems as CSV files, in MiniMalloc's format: a header row naming the columns, then one
// buffer a row. Columns: `id` (any text without commas), `lower` (or its alias `begin`) and
// `upper` (exclusive) or `end` (inclusive: upper = end + 1), `size`, and optionally `alignment`
// and `offset` (a fixed offset when reading; the solution's offset when written). Other columns
// (MiniMalloc's `gaps`, for one) are refused.

#include <memsched/core/errors.hpp>
#include <memsched/core/write_file.hpp>
#include <memsched/sim/layout.hpp>

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <istream>
#include <limits>
#include <optional>
#include <ostream>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace memsched {

/// A layout problem read from a CSV file: the buffers and their ids, in file order.
struct layout_problem {
  std::vector<std::string> ids;
  std::vector<layout_buffer> buffers;
};

namespace detail {

inline std::vector<std::string_view> split_csv_row(std::string_view line) {
  std::vector<std::string_view> cells;
  for (std::size_t at = 0;;) {
    const std::size_t comma = line.find(',', at);
    cells.push_back(line.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at));
    if (comma == std::string_view::npos) return cells;
    at = comma + 1;
  }
}

inline std::string_view trim_cell(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

}  // namespace detail

/// Reads a layout problem from `in`; `name` names the source in errors. O(file size).
/// Throws file_error "name:line:column: what" for a missing or unknown column, a repeated column,
/// a row with the wrong number of cells, a value that is not an integer, and for buffers that
/// solve_layout would refuse (negative size, upper < lower, alignment < 1, bad fixed offset).
inline layout_problem read_layout_csv(std::istream& in, const std::string& name = "<input>") {
  enum column { id, lower, upper, end, size, alignment, offset, count };
  constexpr std::string_view names[count] = {"id", "lower", "upper", "end", "size", "alignment", "offset"};
  std::string line;
  std::size_t line_no = 0;
  auto fail = [&](std::size_t col, const std::string& what) -> void {
    throw file_error(name + ":" + std::to_string(line_no) + ":" + std::to_string(col) + ": " + what);
  };
  while (std::getline(in, line) && ++line_no && detail::trim_cell(line).empty()) {}
  if (detail::trim_cell(line).empty()) throw file_error(name + ": no header row (expected id,lower,upper,size)");
  std::vector<int> role;  // per cell: its column
  int where[count];
  std::fill(std::begin(where), std::end(where), -1);
  const auto header = detail::split_csv_row(line);
  for (std::size_t c = 0; c < header.size(); ++c) {
    const std::string_view cell = detail::trim_cell(header[c]);
    int k = cell == "begin" ? lower : -1;
    for (int j = 0; j < count && k < 0; ++j)
      if (cell == names[j]) k = j;
    if (k < 0) fail(c + 1, "unknown column '" + std::string(cell) + "' (expected id, lower or begin, upper or end, size, alignment, offset)");
    if (where[k] >= 0 || (k == upper && where[end] >= 0) || (k == end && where[upper] >= 0))
      fail(c + 1, "column '" + std::string(cell) + "' given twice");
    where[k] = static_cast<int>(c);
    role.push_back(k);
  }
  if (where[id] < 0 || where[lower] < 0 || (where[upper] < 0 && where[end] < 0) || where[size] < 0)
    fail(1, "the header must name id, lower (or begin), upper (or end) and size");
  layout_problem p;
  while (std::getline(in, line)) {
    ++line_no;
    if (detail::trim_cell(line).empty()) continue;
    const auto cells = detail::split_csv_row(line);
    if (cells.size() != role.size())
      fail(1, std::to_string(cells.size()) + " cells where the header has " + std::to_string(role.size()));
    layout_buffer b;
    std::string label;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::string_view cell = detail::trim_cell(cells[c]);
      if (role[c] == id) {
        label = std::string(cell);
        continue;
      }
      if (role[c] == offset && cell.empty()) continue;  // no fixed offset
      std::int64_t v = 0;
      const auto [ptr, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), v);
      if (ec != std::errc{} || ptr != cell.data() + cell.size() || cell.empty())
        fail(c + 1, std::string(names[role[c]]) + " '" + std::string(cell) + "' is not an integer");
      switch (role[c]) {
        case lower: b.first = v; break;
        case upper: b.last = v; break;
        case end:
          if (v == std::numeric_limits<std::int64_t>::max()) fail(c + 1, "end is too large");
          b.last = v + 1;
          break;
        case size: b.size = v; break;
        case alignment: b.alignment = v; break;
        case offset: b.offset = v; break;
        default: break;
      }
    }
    auto col = [&](int k) { return static_cast<std::size_t>(where[k] >= 0 ? where[k] : where[end]) + 1; };
    if (b.size < 0) fail(col(size), "size must be >= 0");
    if (b.last < b.first) fail(col(upper), "the buffer ends before it starts");
    if (b.alignment < 1) fail(col(alignment), "alignment must be >= 1");
    if (b.offset && (*b.offset < 0 || *b.offset % b.alignment != 0))
      fail(col(offset), "offset must be >= 0 and a multiple of the alignment");
    p.ids.push_back(std::move(label));
    p.buffers.push_back(b);
  }
  return p;
}

/// Reads the CSV file at `path` (read_layout_csv). Throws file_error naming the file when it
/// cannot be opened, and as read_layout_csv.
inline layout_problem read_layout_csv(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw file_error(path.string() + ": cannot open the file");
  return read_layout_csv(in, path.string());
}

/// Writes `p` with `offsets` (one per buffer, or empty for none) as CSV: id,lower,upper,size,
/// then alignment when some buffer has one, then offset. O(B).
inline void write_layout_csv(std::ostream& out, const layout_problem& p, std::span<const std::int64_t> offsets = {}) {
  bool aligned = false;
  for (const auto& b : p.buffers) aligned = aligned || b.alignment != 1;
  const bool fixed = offsets.empty() && std::any_of(p.buffers.begin(), p.buffers.end(), [](const auto& b) { return b.offset.has_value(); });
  out << "id,lower,upper,size" << (aligned ? ",alignment" : "") << (!offsets.empty() || fixed ? ",offset" : "") << '\n';
  for (std::size_t i = 0; i < p.buffers.size(); ++i) {
    const auto& b = p.buffers[i];
    out << (i < p.ids.size() ? p.ids[i] : std::to_string(i)) << ',' << b.first << ',' << b.last << ',' << b.size;
    if (aligned) out << ',' << b.alignment;
    if (!offsets.empty()) out << ',' << offsets[i];
    else if (fixed) out << ',' << (b.offset ? std::to_string(*b.offset) : std::string());
    out << '\n';
  }
}

/// Writes the CSV file at `path` (write_layout_csv). Throws file_error naming the file.
inline void write_layout_csv(const std::filesystem::path& path, const layout_problem& p, std::span<const std::int64_t> offsets = {}) {
  write_file(path, [&](std::ostream& out) { write_layout_csv(out, p, offsets); });
}

}  // namespace memsched
