// The memory simulator at scale: simulate_order, plan_arena (greedy by size, first fit) and
// offchip_traffic on random layered graphs of 1,000 / 10,000 / 30,000 vertices (Moccasin's
// generator, graph/random_layered.hpp, seed 0), Kahn's order: "wide" (mean layer width n^0.43,
// about 1,500 tensors live at the peak of the 30k graph) and "narrow" (width n^0.1, a few). The graph, its memory_graph form and
// the order are built once, outside the timed loop.
// Big inputs: a 200,000-vertex chain (sizes 1,000..5,999 bytes; plan_arena with both strategies and
// simulate_order on its only order) and simulate_plan on a 2,000,000-step plan (a 1,000,000-vertex
// chain, each value freed after its consumer ran).
//
//   bench_sim [--benchmark_filter=REGEX] [google benchmark flags]
//
// Counters: n, tensors (non-empty buffers), peak, arena (bytes), fragmentation (arena / peak - 1),
// offchip_bytes (written + read back, on-chip capacity = half the peak).

#include <memsched/graph/random_layered.hpp>
#include <memsched/order/kahn.hpp>
#include <memsched/sim/arena.hpp>
#include <memsched/sim/offchip_traffic.hpp>
#include <memsched/sim/simulate_order.hpp>
#include <memsched/sim/simulate_plan.hpp>

#include <benchmark/benchmark.h>

#include "bench_support.hpp"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace memsched;

struct prepared {
  memory_graph graph;
  std::vector<std::size_t> order;
  std::int64_t peak = 0;
};

std::shared_ptr<const prepared> prepare(std::size_t nodes, double width) {
  memory_graph g = make_memory_graph(make_random_layered(random_layered_options{.nodes = nodes, .width = width}));
  auto order = kahn_order(g).order;
  const std::int64_t peak = simulate_order(g, order).peak_bytes;
  return std::make_shared<const prepared>(prepared{std::move(g), std::move(order), peak});
}

/// A chain 0 -> 1 -> ... -> n-1 with sizes 1,000 + (7,919 i mod 5,000) bytes and unit costs.
memory_graph chain(std::size_t n) {
  memory_graph_data d{.num_nodes = n};
  for (std::size_t i = 0; i + 1 < n; ++i) d.edges.emplace_back(i, i + 1);
  d.bytes.resize(n);
  for (std::size_t i = 0; i < n; ++i) d.bytes[i] = 1000 + static_cast<std::int64_t>((i * 7919) % 5000);
  return memory_graph(d);
}

void register_big() {
  auto c = std::make_shared<const memory_graph>(chain(200000));
  auto order = std::make_shared<std::vector<std::size_t>>(c->size());
  for (std::size_t i = 0; i < order->size(); ++i) (*order)[i] = i;
  for (auto strategy : {arena_strategy::greedy_by_size, arena_strategy::first_fit})
    benchmark::RegisterBenchmark(("plan_arena/" + std::string(to_string(strategy)) + "/chain/200000").c_str(),
                                 [c, order, strategy](benchmark::State& s) {
                                   arena_plan a;
                                   for (auto _ : s) {
                                     a = plan_arena(*c, *order, strategy);
                                     benchmark::DoNotOptimize(a.arena_bytes);
                                   }
                                   s.counters["arena"] = static_cast<double>(a.arena_bytes);
                                   s.counters["peak"] = static_cast<double>(a.peak_bytes);
                                 })
        ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("simulate_order/chain/200000", [c, order](benchmark::State& s) {
    for (auto _ : s) benchmark::DoNotOptimize(simulate_order(*c, *order).peak_bytes);
  })->Unit(benchmark::kMillisecond);
  auto big = std::make_shared<const memory_graph>(chain(1000000));
  auto plan = std::make_shared<execution_plan>();
  for (std::size_t i = 0; i < big->size(); ++i) {
    plan->steps.push_back({plan_op::compute, i});
    if (i > 0) plan->steps.push_back({plan_op::free, i - 1});
  }
  benchmark::RegisterBenchmark("simulate_plan/chain/2000000_steps", [big, plan](benchmark::State& s) {
    for (auto _ : s) benchmark::DoNotOptimize(simulate_plan(*big, *plan).peak_bytes);
    s.counters["steps"] = static_cast<double>(plan->steps.size());
  })->Unit(benchmark::kMillisecond);
}

void register_all() {
  register_big();
  for (const auto& [shape, width] : {std::pair<const char*, double>{"wide", 0.43}, {"narrow", 0.1}})
  for (std::size_t nodes : {1000, 10000, 30000}) {
    const auto p = prepare(nodes, width);
    const std::string size = std::string(shape) + "/" + std::to_string(nodes);
    auto common = [p](benchmark::State& s) {
      s.counters["n"] = static_cast<double>(p->graph.size());
      s.counters["peak"] = static_cast<double>(p->peak);
    };
    benchmark::RegisterBenchmark(("simulate_order/" + size).c_str(), [p, common](benchmark::State& s) {
      for (auto _ : s) benchmark::DoNotOptimize(simulate_order(p->graph, p->order).peak_bytes);
      common(s);
    })->Unit(benchmark::kMillisecond);
    for (auto strategy : {arena_strategy::greedy_by_size, arena_strategy::first_fit}) {
      benchmark::RegisterBenchmark(("plan_arena/" + std::string(to_string(strategy)) + "/" + size).c_str(),
                                   [p, common, strategy](benchmark::State& s) {
                                     arena_plan a;
                                     for (auto _ : s) {
                                       a = plan_arena(p->graph, p->order, strategy);
                                       benchmark::DoNotOptimize(a.arena_bytes);
                                     }
                                     common(s);
                                     s.counters["arena"] = static_cast<double>(a.arena_bytes);
                                     s.counters["fragmentation"] = a.fragmentation;
                                   })
          ->Unit(benchmark::kMillisecond);
    }
    benchmark::RegisterBenchmark(("offchip_traffic/half_peak/" + size).c_str(), [p, common](benchmark::State& s) {
      offchip_traffic_result t;
      for (auto _ : s) {
        t = offchip_traffic(p->graph, p->order, p->peak / 2);
        benchmark::DoNotOptimize(t.bytes_written);
      }
      common(s);
      s.counters["offchip_bytes"] = static_cast<double>(t.bytes_written + t.bytes_read);
    })->Unit(benchmark::kMillisecond);
  }
}

}  // namespace

int main(int argc, char** argv) { return memsched_bench::run_benchmarks(argc, argv, register_all); }
