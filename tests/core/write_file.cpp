// memsched::write_file: what the writer wrote arrives in the file; a file that cannot be opened or
// written is named in a file_error; what the writer throws passes through.

#include <memsched/core/write_file.hpp>
#include <memsched/graph/detail/input_limits.hpp>

#include <doctest/doctest.h>

#include "../support/file_errors.hpp"
#include "../support/temp_dir.hpp"

#include <filesystem>
#include <stdexcept>
#include <string>

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
