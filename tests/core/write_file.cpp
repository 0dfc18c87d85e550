// memsched::write_file: what the writer wrote arrives in the file; a file that cannot be opened or
// written is named in a file_error; what the writer throws passes through.

#include <memsched/core/write_file.hpp>

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

namespace {

std::string file_error_of(const auto& call) {
  try {
    call();
  } catch (const memsched::file_error& e) {
    return e.what();
  }
  return "no file_error";
}

std::string contents(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("write_file writes what the writer gives, and truncates an older file") {
  const auto path = std::filesystem::temp_directory_path() / "memsched_test_write_file.txt";
  memsched::write_file(path, [](std::ostream& out) { out << "a longer first text\n"; });
  CHECK(contents(path) == "a longer first text\n");
  memsched::write_file(path, [](std::ostream& out) { out << "short\n" << 42; });
  CHECK(contents(path) == "short\n42");
  std::filesystem::remove(path);
}

TEST_CASE("write_file names the file it cannot open or write") {
  const std::filesystem::path missing = std::filesystem::temp_directory_path() / "memsched_no_such_dir" / "x.txt";
  REQUIRE_FALSE(std::filesystem::exists(missing.parent_path()));
  CHECK(file_error_of([&] { memsched::write_file(missing, [](std::ostream& out) { out << "x"; }); }) ==
        missing.string() + ": cannot open the file for writing");
  REQUIRE(std::filesystem::exists("/dev/full"));  // Linux: opens, but every write fails (a full disk)
  // More than a stream buffer, so that the failure is seen at the latest by the flush.
  CHECK(file_error_of([] { memsched::write_file("/dev/full", [](std::ostream& out) { out << std::string(1 << 16, 'x'); }); }) ==
        "/dev/full: cannot write the file");
}

TEST_CASE("write_file lets the writer's own exception through") {
  const auto path = std::filesystem::temp_directory_path() / "memsched_test_write_file_throw.txt";
  CHECK_THROWS_WITH_AS(memsched::write_file(path, [](std::ostream&) { throw std::runtime_error("the writer failed"); }), "the writer failed",
                       std::runtime_error);
  std::filesystem::remove(path);
}
