#pragma once
// write_file: the one file writer of the library (graph, order and plan files) and of the tool
// (its CSV and arena files): a write that fails names the file instead of passing in silence.

#include <memsched/core/errors.hpp>

#include <filesystem>
#include <fstream>
#include <ostream>
#include <string>
#include <utility>

namespace memsched {

/// Opens the file `path` (created or truncated), lets `write(std::ostream&)` fill it, flushes it
/// and checks the stream. O(what `write` writes).
/// Throws file_error naming `path` when it cannot be opened ("cannot open the file for writing": a
/// missing directory, no permission) or written ("cannot write the file": a full disk,
/// /dev/full); what `write` throws passes through (the file is then left as far as it got).
template <class Writer>
void write_file(const std::filesystem::path& path, Writer&& write) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw file_error(path.string() + ": cannot open the file for writing");
  std::forward<Writer>(write)(static_cast<std::ostream&>(out));
  out.flush();
  if (!out) throw file_error(path.string() + ": cannot write the file");
}

}  // namespace memsched
