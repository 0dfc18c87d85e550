#pragma once
// What every bench_* suite needs: where ../shared/graphs is, the graph files in it, numbers from
// the environment, and Google Benchmark's main.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <system_error>
#include <vector>

namespace memsched_bench {

/// MEMSCHED_SHARED_GRAPHS if set, else the folder CMake found beside the project.
inline std::filesystem::path graphs_dir() {
  if (const char* p = std::getenv("MEMSCHED_SHARED_GRAPHS")) return p;
  return MEMSCHED_SHARED_GRAPHS;
}

/// The value of environment variable `name` as a number, or `fallback` when it is unset.
inline double env_number(const char* name, double fallback) {
  const char* v = std::getenv(name);
  return v ? std::atof(v) : fallback;
}

/// The .json graph files one folder below graphs_dir() (checkmate/, moccasin/, torch/) whose
/// "folder/stem" name `keep` accepts, sorted; none when the folder is missing.
inline std::vector<std::filesystem::path> shared_graph_files(const std::function<bool(const std::string&)>& keep = {}) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& sub : fs::directory_iterator(graphs_dir(), ec))
    if (sub.is_directory())
      for (const auto& f : fs::directory_iterator(sub.path(), ec))
        if (f.path().extension() == ".json" && (!keep || keep(sub.path().filename().string() + "/" + f.path().stem().string())))
          files.push_back(f.path());
  std::sort(files.begin(), files.end());
  return files;
}

/// "folder/stem" of a shared graph file: the name benchmarks report.
inline std::string graph_name(const std::filesystem::path& file) {
  return file.parent_path().filename().string() + "/" + file.stem().string();
}

/// Google Benchmark's main after `register_all` has registered the benchmarks.
inline int run_benchmarks(int argc, char** argv, const std::function<void()>& register_all) {
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace memsched_bench
