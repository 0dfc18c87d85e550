#pragma once
// write_file: the one file writer of the library (graph, order and plan files) and of the tool
// (its CSV and arena files): a write that fails names the file instead of passing in silence, and
// a write that stops half-way (a failure, an exception, a killed process) leaves no partial file
// under the name asked for.

#include <memsched/core/errors.hpp>

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <string>
#include <system_error>
#include <utility>

namespace memsched {

namespace detail {

/// A name for the temporary file of a write to `path`, in its directory (so that the rename stays
/// on one file system), unique within this process and across processes.
inline std::filesystem::path temporary_path_for(const std::filesystem::path& path) {
  static std::atomic<unsigned long> counter{0};
  std::filesystem::path tmp = path;
  tmp += ".memsched-tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  return tmp;
}

/// Whether `path` should be written through a temporary file and a rename: when it does not exist
/// or is a regular file. A device (/dev/null, /dev/full, /dev/stdout), a pipe or a symbolic link is
/// written in place (a rename would replace it).
inline bool replace_by_rename(const std::filesystem::path& path) {
  std::error_code ec;
  const auto status = std::filesystem::symlink_status(path, ec);
  return status.type() == std::filesystem::file_type::not_found || status.type() == std::filesystem::file_type::regular;
}

/// Opens `path`, lets `write` fill it, flushes and checks the stream.
template <class Writer>
void write_stream_file(const std::filesystem::path& path, const std::filesystem::path& name, Writer&& write) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw file_error(name.string() + ": cannot open the file for writing");
  std::forward<Writer>(write)(static_cast<std::ostream&>(out));
  out.flush();
  if (!out) throw file_error(name.string() + ": cannot write the file");
  out.close();
  if (!out) throw file_error(name.string() + ": cannot write the file");
}

}  // namespace detail

/// Creates or replaces the file `path` with what `write(std::ostream&)` writes. A regular file (or
/// a new one) is written to a temporary file in the same directory that is renamed to `path` once
/// complete, so that `path` is never left partly written; the replaced file's permissions are
/// kept. Devices, pipes and symbolic links are written in place. O(what `write` writes).
/// Throws file_error naming `path` when it cannot be opened ("cannot open the file for writing": a
/// missing directory, no permission) or written ("cannot write the file": a full disk,
/// /dev/full); what `write` throws passes through. In both cases `path` is unchanged (a device or
/// pipe holds what was written).
template <class Writer>
void write_file(const std::filesystem::path& path, Writer&& write) {
  if (!detail::replace_by_rename(path)) {
    detail::write_stream_file(path, path, std::forward<Writer>(write));
    return;
  }
  const std::filesystem::path tmp = detail::temporary_path_for(path);
  {
    // A directory that takes no new file (but whose file may be rewritten): write in place.
    std::ofstream probe(tmp, std::ios::binary);
    if (!probe) {
      detail::write_stream_file(path, path, std::forward<Writer>(write));
      return;
    }
  }
  std::error_code ec;
  try {
    detail::write_stream_file(tmp, path, std::forward<Writer>(write));
    const auto old = std::filesystem::status(path, ec);
    if (!ec && old.type() == std::filesystem::file_type::regular) std::filesystem::permissions(tmp, old.permissions(), ec);
    std::filesystem::rename(tmp, path, ec);
    if (ec) throw file_error(path.string() + ": cannot write the file (" + ec.message() + ")");
  } catch (...) {
    std::filesystem::remove(tmp, ec);
    throw;
  }
}

}  // namespace memsched
