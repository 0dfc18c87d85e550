// memsched::write_file: what the writer wrote arrives in the file (through a temporary file renamed
// into place: a write that stops leaves nothing partial); a file that cannot be opened or
// written is named in a file_error; what the writer throws passes through.

#include <memsched/core/write_file.hpp>
#include <memsched/graph/detail/input_limits.hpp>

#include <doctest/doctest.h>

#include "../support/file_errors.hpp"
#include "../support/temp_dir.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

std::string file_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// The files of `dir`, by name.
std::vector<std::string> names_in(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("write_file writes what the writer gives, and truncates an older file") {
  const memsched::testing::temp_dir dir;
  const auto path = dir / "out.txt";
  memsched::write_file(path, [](std::ostream& out) { out << "a longer first text\n"; });
  CHECK(memsched::detail::read_text_file(path) == "a longer first text\n");
  memsched::write_file(path, [](std::ostream& out) { out << "short\n" << 42; });
  CHECK(memsched::detail::read_text_file(path) == "short\n42");
}

TEST_CASE("write_file names the file it cannot open or write") {
  const memsched::testing::temp_dir dir;
  const std::filesystem::path missing = dir / "no_such_dir" / "x.txt";
  CHECK(memsched::testing::error_of([&] { memsched::write_file(missing, [](std::ostream& out) { out << "x"; }); }) ==
        missing.string() + ": cannot open the file for writing");
  REQUIRE(std::filesystem::exists("/dev/full"));  // Linux: opens, but every write fails (a full disk)
  // More than a stream buffer, so that the failure is seen at the latest by the flush.
  CHECK(memsched::testing::error_of([] { memsched::write_file("/dev/full", [](std::ostream& out) { out << std::string(1 << 16, 'x'); }); }) ==
        "/dev/full: cannot write the file");
}

TEST_CASE("write_file lets the writer's own exception through") {
  const memsched::testing::temp_dir dir;
  CHECK_THROWS_WITH_AS(memsched::write_file(dir / "out.txt", [](std::ostream&) { throw std::runtime_error("the writer failed"); }),
                       "the writer failed", std::runtime_error);
}

TEST_CASE("write_file: a write that stops half-way leaves the file as it was and no temporary behind") {
  using namespace memsched;
  const testing::temp_dir s;
  const auto path = s / "out.txt";
  CHECK_THROWS_AS(write_file(path,
                             [](std::ostream& out) {
                               out << "partial";
                               throw std::runtime_error("stopped");
                             }),
                  std::runtime_error);
  CHECK(!std::filesystem::exists(path));
  CHECK(names_in(s.path()).empty());
  write_file(path, [](std::ostream& out) { out << "first"; });
  CHECK(file_text(path) == "first");
  CHECK_THROWS_AS(write_file(path,
                             [](std::ostream& out) {
                               out << "second, partial";
                               throw std::runtime_error("stopped");
                             }),
                  std::runtime_error);
  CHECK(file_text(path) == "first");
  CHECK(names_in(s.path()) == std::vector<std::string>{"out.txt"});
  // Kept: the replaced file's permissions; a device is written in place.
  std::filesystem::permissions(path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  write_file(path, [](std::ostream& out) { out << "third"; });
  CHECK(file_text(path) == "third");
  CHECK(std::filesystem::status(path).permissions() == (std::filesystem::perms::owner_read | std::filesystem::perms::owner_write));
  if (std::filesystem::exists("/dev/null")) {
    write_file("/dev/null", [](std::ostream& out) { out << "nothing"; });
    CHECK(std::filesystem::is_character_file("/dev/null"));
  }
}
