// Exact arena layouts (solve_layout, sim/layout.hpp).
// - MiniMalloc's 11 challenging instances (tests/data/minimalloc, capacity 1,048,576), decision at
//   that capacity: Layout/decide/A .. K.
// - The order found by Serenity of every bundled inference graph (../shared/graphs, *_inference
//   and moccasin/*), its tensors laid out exactly (plan_arena, strategy exact, 10 s limit):
//   Layout/serenity/<graph>. The order is found once, outside the timed loop.
// - A star of 5,000 branches (one source read by every other vertex, every branch a graph output, so
//   all tensors live to the end), Kahn's order: simulate_order and plan_arena with each strategy
//   (Layout/star/...). Placement is quadratic in the branches there (docs/layout.md, "Limits"):
//   the row tracks it at a size that runs in seconds. Layout/star200k/{first-fit,auto}: 200,000
//   branches, where auto takes first fit.
// - Orders chosen for the arena (arena_order from Serenity's order, 10 s, peak kept optimal):
//   Layout/arena_order/<graph> for moccasin/* and random layered graphs of 250 and 500 vertices
//   (edge density 0.3, seeds 2-8; seeds 1-3 of 250 and seed 4 of 500 were used while developing
//   the search, the others are held out). Counters:
//   peak, start (the arena of Serenity's order, exact layout within the search's first quarter),
//   start10s (Serenity's order laid out alone for the whole 10 s, untimed: what the search must
//   beat), arena (the order found), orders (orders tried), optimal (1 when the arena equals the peak).
// - Minimisation (no capacity, 20 s limit) of MiniMalloc's instances: Layout/minimise/A .. K.
// - Random instances of 20,000 and 50,000 buffers (make_random_layout, seed 1), minimised within
//   10 s: Layout/random/20k, 50k. Counters: arena, bound, greedy (the start: the lower of greedy
//   by size and first fit, first fit alone where greedy by size would be slow), searched, by_size
//   and by_size_s (greedy by size itself, run untimed after the row: the arena to be no worse than).
//
//   bench_layout [--benchmark_filter=REGEX] [google benchmark flags]
//
// Counters: buffers, arena (bytes), bound (proven lower bound), load (most bytes live at once),
// optimal (1 when proven), nodes (search nodes), peak (the order's peak).

#include <memsched/graph/random_layered.hpp>
#include <memsched/graph/read_graph.hpp>
#include <memsched/order/arena_order.hpp>
#include <memsched/order/kahn.hpp>
#include <memsched/order/serenity.hpp>
#include <memsched/sim/arena.hpp>
#include <memsched/sim/detail/arena_placement.hpp>
#include <memsched/sim/layout.hpp>
#include <memsched/sim/layout_io.hpp>
#include <memsched/sim/random_layout.hpp>
#include <memsched/sim/simulate_order.hpp>

#include <benchmark/benchmark.h>

#include "bench_support.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace memsched;

const std::filesystem::path minimalloc_dir = std::filesystem::path(MEMSCHED_BENCH_DATA_DIR) / "minimalloc";

void register_minimalloc() {
  for (const char* name : {"A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K"}) {
    auto problem = std::make_shared<const layout_problem>(read_layout_csv(minimalloc_dir / (std::string(name) + ".1048576.csv")));
    benchmark::RegisterBenchmark((std::string("Layout/decide/") + name).c_str(), [problem](benchmark::State& state) {
      layout_result r;
      for (auto _ : state) r = solve_layout(problem->buffers, {.capacity = 1048576});
      if (!check_layout(problem->buffers, r.offsets, 1048576).valid) state.SkipWithError("invalid layout");
      state.counters["buffers"] = static_cast<double>(problem->buffers.size());
      state.counters["arena"] = static_cast<double>(r.arena_bytes);
      state.counters["bound"] = static_cast<double>(r.lower_bound);
      state.counters["load"] = static_cast<double>(r.stats.max_load);
      state.counters["nodes"] = static_cast<double>(r.stats.nodes);
      state.counters["solved"] = has_solution(r.status) ? 1 : 0;
    })->Unit(benchmark::kSecond)->Iterations(1);
  }
}

void register_minimise() {
  for (const char* name : {"A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K"}) {
    auto problem = std::make_shared<const layout_problem>(read_layout_csv(minimalloc_dir / (std::string(name) + ".1048576.csv")));
    benchmark::RegisterBenchmark((std::string("Layout/minimise/") + name).c_str(), [problem](benchmark::State& state) {
      layout_result r;
      for (auto _ : state) r = solve_layout(problem->buffers, {.time_limit = std::chrono::duration<double>(20.0)});
      if (!check_layout(problem->buffers, r.offsets).valid) state.SkipWithError("invalid layout");
      state.counters["arena"] = static_cast<double>(r.arena_bytes);
      state.counters["bound"] = static_cast<double>(r.lower_bound);
      state.counters["optimal"] = r.status == solve_status::optimal ? 1 : 0;
    })->Unit(benchmark::kSecond)->Iterations(1);
  }
}

/// Greedy by size's arena on `buffers` and its seconds, untimed by the benchmark: the layout the
/// target compares with (solve_layout skips it where its quadratic work would not pay).
std::pair<std::int64_t, double> greedy_by_size_arena(const std::vector<layout_buffer>& buffers) {
  std::vector<std::int64_t> first, last, size;
  for (const auto& b : buffers) {
    first.push_back(b.first);
    last.push_back(b.last);
    size.push_back(b.size);
  }
  const std::vector<detail::arena_buffer> steps = detail::arena_buffers_over_times(first, last, size).buffers;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::int64_t> offsets;
  detail::place_greedy_by_size(steps, offsets);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return {detail::arena_height(steps, offsets), seconds};
}

void register_random() {
  for (std::size_t thousands : {20, 50})
    benchmark::RegisterBenchmark(("Layout/random/" + std::to_string(thousands) + "k").c_str(), [thousands](benchmark::State& state) {
      const auto buffers = make_random_layout({.buffers = thousands * 1000, .seed = 1});
      layout_result r;
      for (auto _ : state) r = solve_layout(buffers, {.time_limit = std::chrono::duration<double>(10.0)});
      if (!check_layout(buffers, r.offsets).valid) state.SkipWithError("invalid layout");
      state.counters["arena"] = static_cast<double>(r.arena_bytes);
      state.counters["bound"] = static_cast<double>(r.lower_bound);
      state.counters["greedy"] = static_cast<double>(r.stats.greedy_bytes);
      state.counters["searched"] = r.stats.searched ? 1 : 0;
      const auto [by_size, by_size_seconds] = greedy_by_size_arena(buffers);
      state.counters["by_size"] = static_cast<double>(by_size);
      state.counters["by_size_s"] = by_size_seconds;
    })->Unit(benchmark::kSecond)->Iterations(1);
}

void register_arena_order_row(const std::string& name, std::function<memory_graph()> make) {
  benchmark::RegisterBenchmark(("Layout/arena_order/" + name).c_str(), [make](benchmark::State& state) {
    const memory_graph g = make();
    const std::vector<std::size_t> start = serenity_order(g, serenity_options{.time_limit = std::chrono::duration<double>(10.0)}).order;
    arena_order_result r;
    for (auto _ : state) r = arena_order(g, start, {.time_limit = std::chrono::duration<double>(10.0)});
    if (!check_arena(g, r.order, r.arena).valid) state.SkipWithError("invalid layout");
    state.counters["peak"] = static_cast<double>(r.arena.peak_bytes);
    state.counters["start"] = static_cast<double>(r.start_arena_bytes);
    state.counters["arena"] = static_cast<double>(r.arena.arena_bytes);
    state.counters["orders"] = static_cast<double>(r.stats.orders_tried);
    // Serenity's order with the whole 10 s given to its layout: what the search must beat.
    const double alone = r.start_arena_bytes == r.arena.peak_bytes
                             ? static_cast<double>(r.start_arena_bytes)
                             : static_cast<double>(plan_arena_with(g, start, arena_strategy::exact, {.time_limit = std::chrono::duration<double>(10.0)}).arena_bytes);
    state.counters["start10s"] = alone;
    state.counters["optimal"] = r.status == solve_status::optimal ? 1 : 0;
  })->Unit(benchmark::kSecond)->Iterations(1);
}

void register_arena_order() {
  for (const auto& file : memsched_bench::shared_graph_files([](const std::string& name) { return name.rfind("moccasin/", 0) == 0; }))
    register_arena_order_row(memsched_bench::graph_name(file), [file] { return make_memory_graph(read_graph(file)); });
  for (std::size_t nodes : {250, 500})
    for (std::uint64_t seed : {2, 3, 4, 5, 6, 7, 8})
      register_arena_order_row("rl" + std::to_string(nodes) + "_seed" + std::to_string(seed), [nodes, seed] {
        return make_memory_graph(make_random_layered({.nodes = nodes, .edge_density = 0.3, .seed = seed}));
      });
}

void register_serenity() {
  for (const auto& file : memsched_bench::shared_graph_files([](const std::string& name) {
         return name.find("inference") != std::string::npos || name.rfind("moccasin/", 0) == 0;
       })) {
    benchmark::RegisterBenchmark(("Layout/serenity/" + memsched_bench::graph_name(file)).c_str(), [file](benchmark::State& state) {
      // Read and ordered here, untimed, so that a filter that skips the row skips the work.
      const memory_graph graph = make_memory_graph(read_graph(file));
      const std::vector<std::size_t> serenity =
          serenity_order(graph, serenity_options{.time_limit = std::chrono::duration<double>(10.0)}).order;
      const memory_graph* g = &graph;
      const std::vector<std::size_t>* order = &serenity;
      arena_plan a;
      for (auto _ : state) a = plan_arena_with(*g, *order, arena_strategy::exact, {.time_limit = std::chrono::duration<double>(10.0)});
      if (!check_arena(*g, *order, a).valid) state.SkipWithError("invalid layout");
      state.counters["arena"] = static_cast<double>(a.arena_bytes);
      state.counters["bound"] = static_cast<double>(a.lower_bound);
      state.counters["peak"] = static_cast<double>(a.peak_bytes);
      state.counters["optimal"] = a.status == solve_status::optimal ? 1 : 0;
      state.counters["greedy"] = static_cast<double>(plan_arena(*g, *order, arena_strategy::greedy_by_size).arena_bytes);
    })->Unit(benchmark::kMillisecond)->Iterations(1);
  }
}

/// Vertex 0 read by vertices 1..n-1 (sinks); sizes 1,000 + (7,919 i mod 5,000) bytes.
memory_graph star(std::size_t n) {
  memory_graph_data d{.num_nodes = n};
  for (std::size_t i = 1; i < n; ++i) d.edges.emplace_back(0, i);
  d.bytes.resize(n);
  for (std::size_t i = 0; i < n; ++i) d.bytes[i] = 1000 + static_cast<std::int64_t>((i * 7919) % 5000);
  return memory_graph(d);
}

void register_star() {
  auto g = std::make_shared<const memory_graph>(star(5000));
  auto order = std::make_shared<const std::vector<std::size_t>>(kahn_order(*g).order);
  benchmark::RegisterBenchmark("Layout/star/simulate_order", [g, order](benchmark::State& state) {
    for (auto _ : state) benchmark::DoNotOptimize(simulate_order(*g, *order).peak_bytes);
  })->Unit(benchmark::kMillisecond);
  for (auto strategy : {arena_strategy::greedy_by_size, arena_strategy::first_fit, arena_strategy::exact})
    benchmark::RegisterBenchmark(("Layout/star/" + std::string(to_string(strategy))).c_str(), [g, order, strategy](benchmark::State& state) {
      arena_plan a;
      for (auto _ : state) a = plan_arena_with(*g, *order, strategy, {.time_limit = std::chrono::duration<double>(10.0)});
      state.counters["arena"] = static_cast<double>(a.arena_bytes);
      state.counters["peak"] = static_cast<double>(a.peak_bytes);
    })->Unit(benchmark::kMillisecond)->Iterations(1);
  // 200,000 branches: first fit, and auto (which takes first fit beyond 2^24 pairs live together).
  auto wide = std::make_shared<const memory_graph>(star(200000));
  auto wide_order = std::make_shared<const std::vector<std::size_t>>(kahn_order(*wide).order);
  for (auto strategy : {arena_strategy::first_fit, arena_strategy::automatic})
    benchmark::RegisterBenchmark(("Layout/star200k/" + std::string(to_string(strategy))).c_str(), [wide, wide_order, strategy](benchmark::State& state) {
      arena_plan a;
      for (auto _ : state) a = plan_arena(*wide, *wide_order, strategy);
      state.counters["arena"] = static_cast<double>(a.arena_bytes);
      state.counters["peak"] = static_cast<double>(a.peak_bytes);
    })->Unit(benchmark::kMillisecond);
}

}  // namespace

int main(int argc, char** argv) {
  return memsched_bench::run_benchmarks(argc, argv, [] {
    register_minimalloc();
    register_minimise();
    register_serenity();
    register_arena_order();
    register_random();
    register_star();
  });
}
