// Built twice by tests/consumer: header-only (memsched::memsched) and with the separately compiled
// library (memsched::compiled, MEMSCHED_SEPARATE_COMPILATION). Both print the same lines or run.sh
// fails: every serenity_order result (order, peak, bound, status, state counts) on random DAGs of
// 6 to 300 vertices (bitset widths 1 to 5 words) under several option sets, each order re-checked
// by the simulator, and the message of a rejected option; then every separately compiled
// rematerialization core (best heuristic, DTR, lifetime search, free order, the cost lower bound,
// HiRemate) on training graphs of such DAGs at three budgets, each plan re-checked by the
// simulator, and memory_graph's cycle error; then solve_layout's exact layouts of random buffers
// (minimisation and decision), each re-checked by check_layout; then the graph files: each
// training graph written as JSON, GraphML and DOT and read back (the texts' hashes and the graphs
// read), and one error message per reader. Work is bounded by counted limits (max_states, node_limit,
// rounds) and no time limit is set, so the output is deterministic.
#include <memsched/graph/dataflow_graph.hpp>
#include <memsched/graph/read_graph.hpp>
#include <memsched/graph/write_graph.hpp>
#include <memsched/order/serenity.hpp>
#include <memsched/remat/best_heuristic.hpp>
#include <memsched/remat/checkpoint_plan.hpp>
#include <memsched/remat/cost_lower_bound.hpp>
#include <memsched/remat/dtr.hpp>
#include <memsched/remat/free_order.hpp>
#include <memsched/remat/hiremate.hpp>
#include <memsched/remat/lifetime_search.hpp>
#include <memsched/remat/remat_plan.hpp>
#include <memsched/remat/training_graph.hpp>
#include <memsched/sim/layout.hpp>
#include <memsched/sim/random_layout.hpp>
#include <memsched/sim/simulate_order.hpp>
#include <memsched/sim/simulate_plan.hpp>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace {

// xorshift64: the same numbers in both builds and on every standard library.
struct xorshift {
  std::uint64_t x;
  std::uint64_t operator()(std::uint64_t bound) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x % bound;
  }
};

// A DAG shaped like a network: each vertex reads 1 to 3 of the `window` vertices before it.
memsched::dataflow_graph random_dag(std::size_t n, std::size_t window, std::uint64_t seed) {
  xorshift next{seed * 0x9E3779B97F4A7C15ull + 1};
  memsched::dataflow_graph g(n);
  for (std::size_t v = 0; v < n; ++v) {
    g[v].id = static_cast<std::int64_t>(v);
    g[v].bytes = static_cast<std::int64_t>(1 + next(100));
    g[v].workspace = next(4) == 0 ? static_cast<std::int64_t>(next(50)) : 0;
    if (v == 0) continue;
    const std::size_t lo = v > window ? v - window : 0;
    const std::size_t preds = 1 + next(3);
    for (std::size_t k = 0; k < preds; ++k) {
      const std::size_t u = lo + next(v - lo);
      if (!boost::edge(u, v, g).second) boost::add_edge(u, v, g);
    }
  }
  return g;
}

// One line per plan: status, peak, cost and the steps, re-checked by the simulator.
int print_plan(const char* name, const memsched::dataflow_graph& g, std::int64_t budget, const memsched::remat_result& r) {
  std::printf("  %s: status=%s peak=%lld cost=%.6g steps=", name, std::string(memsched::to_string(r.status)).c_str(),
              static_cast<long long>(r.peak_bytes), r.total_cost);
  for (const auto& step : r.plan.steps) std::printf("%c%zu ", step.op == memsched::plan_op::compute ? 'c' : 'f', step.node);
  std::printf("\n");
  if (r.plan.steps.empty()) return 0;
  if (!memsched::check_plan(g, r.plan).valid || memsched::simulate_plan(g, r.plan).peak_bytes != r.peak_bytes || r.peak_bytes > budget) {
    std::printf("  ^ wrong: the simulator disagrees or the plan is over budget\n");
    return 1;
  }
  return 0;
}

// Random buffers over 12 time steps (the library's generator), every third aligned to 4 bytes, the
// first fixed at offset 0.
std::vector<memsched::layout_buffer> random_buffers(std::size_t n, std::uint64_t seed) {
  auto buffers = memsched::make_random_layout(
      {.buffers = n, .horizon = 12, .long_lived = 0.1, .mean_short = 3, .min_size = 8, .max_size = 40, .seed = seed});
  for (std::size_t i = 0; i < n; i += 3) buffers[i].alignment = 4;
  buffers[0].offset = 0;
  return buffers;
}

// One line per layout: status, arena, bound, search nodes and offsets, re-checked by check_layout.
int print_layout(const char* name, std::span<const memsched::layout_buffer> buffers, const memsched::layout_result& r) {
  std::printf("  %s: status=%s arena=%lld bound=%lld nodes=%llu offsets=", name, std::string(memsched::to_string(r.status)).c_str(),
              static_cast<long long>(r.arena_bytes), static_cast<long long>(r.lower_bound),
              static_cast<unsigned long long>(r.stats.nodes));
  for (auto offset : r.offsets) std::printf("%lld ", static_cast<long long>(offset));
  std::printf("\n");
  if (!r.offsets.empty() && !memsched::check_layout(buffers, r.offsets).valid) {
    std::printf("  ^ wrong: check_layout rejects the layout\n");
    return 1;
  }
  return 0;
}

// FNV-1a of a text: the written files are compared by hash, not printed.
unsigned long long text_hash(const std::string& text) {
  unsigned long long h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

// Writes g in `format` (a file extension), reads it back, and prints the text's size and hash and
// what was read. Returns 1 when the graph read is not the graph written.
int round_trip(const memsched::dataflow_graph& g, const std::filesystem::path& dir, const char* format) {
  const auto path = dir / (std::string("g") + format);
  memsched::write_graph(path, g);
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const memsched::dataflow_graph back = memsched::read_graph(path);
  std::printf("  %s: %zu bytes hash=%llx read %zu vertices %zu edges\n", format, text.size(), text_hash(text), num_vertices(back),
              num_edges(back));
  bool same = num_vertices(back) == num_vertices(g) && num_edges(back) == num_edges(g);
  for (std::size_t v = 0; same && v < num_vertices(g); ++v)
    same = back[v].id == g[v].id && back[v].bytes == g[v].bytes && back[v].role == g[v].role && back[v].grad_of == g[v].grad_of;
  if (!same) std::printf("  ^ wrong: the graph read back differs\n");
  return same ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  int bad = 0;
  const std::size_t sizes[] = {6, 12, 40, 70, 150, 200, 300};
  for (std::size_t n : sizes)
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      const auto g = random_dag(n, n < 40 ? n : 8, seed);
      const memsched::serenity_options opts[] = {
          {.max_states = 20000},
          {.divide = false, .max_states = 20000, .decision_budget = 0},
          {.divide = false, .max_states = 20000, .free_moves = false, .beam_width = 0},
          {.budget = 150, .max_states = 20000},
      };
      for (std::size_t k = 0; k < std::size(opts); ++k) {
        const auto r = memsched::serenity_order(g, opts[k]);
        std::printf("n=%zu seed=%llu options=%zu status=%s peak=%lld lb=%lld expanded=%llu stored=%llu order=", n,
                    static_cast<unsigned long long>(seed), k, std::string(memsched::to_string(r.status)).c_str(),
                    static_cast<long long>(r.peak_bytes), static_cast<long long>(r.lower_bound),
                    static_cast<unsigned long long>(r.stats.states_expanded),
                    static_cast<unsigned long long>(r.stats.states_stored));
        for (auto v : r.order) std::printf("%zu ", v);
        std::printf("\n");
        if (r.order.size() != n || memsched::order_peak(g, r.order) != r.peak_bytes || r.lower_bound > r.peak_bytes) {
          std::printf("  ^ wrong: the simulator disagrees or the bound exceeds the peak\n");
          ++bad;
        }
      }
    }
  try {
    (void)memsched::serenity_order(random_dag(5, 5, 1), memsched::serenity_options{.max_states = 0});
    std::printf("max_states = 0 accepted\n");
    ++bad;
  } catch (const std::invalid_argument& e) {
    std::printf("rejected: %s\n", e.what());
  }

  // Small: run.sh builds this program without optimization.
  for (std::size_t n : {8, 16})
    for (std::uint64_t seed = 1; seed <= 2; ++seed) {
      const memsched::dataflow_graph g = memsched::make_training_graph(random_dag(n, 6, seed));
      const std::int64_t peak = memsched::checkpoint_all_plan(g, memsched::unlimited_budget).peak_bytes;
      for (int percent : {80, 60}) {
        const std::int64_t budget = peak * percent / 100;
        std::printf("training n=%zu seed=%llu budget=%lld\n", n, static_cast<unsigned long long>(seed), static_cast<long long>(budget));
        bad += print_plan("best-heuristic", g, budget, memsched::best_heuristic_plan(g, budget, {.use_spare_memory = true}));
        bad += print_plan("dtr", g, budget, memsched::dtr_plan(g, budget));
        bad += print_plan("lifetime", g, budget, memsched::lifetime_search_plan(g, budget, {.max_rounds = 20}));
        bad += print_plan("free-order", g, budget, memsched::free_order_plan(g, budget));
        bad += print_plan("hiremate", g, budget, memsched::hiremate_plan(g, budget));
        bad += print_plan("remat-plan", g, budget, memsched::remat_plan(g, budget));
        const auto bound = memsched::remat_cost_lower_bound(g, budget, {.max_states = 2000});
        std::printf("  bound: status=%s cost=%.6g states=%zu\n", std::string(memsched::to_string(bound.status)).c_str(), bound.total_cost,
                    bound.states);
      }
    }
  for (std::size_t n : {10, 24})
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      const auto buffers = random_buffers(n, seed);
      std::printf("layout n=%zu seed=%llu\n", n, static_cast<unsigned long long>(seed));
      const auto least = memsched::solve_layout(buffers, {.node_limit = 100000});
      bad += print_layout("least", buffers, least);
      bad += print_layout("within bound", buffers, memsched::solve_layout(buffers, {.capacity = least.lower_bound, .node_limit = 100000}));
    }
  // The files go to argv[1] (run.sh gives each program its own directory).
  const std::filesystem::path dir = argc > 1 ? std::filesystem::path(argv[1]) : std::filesystem::temp_directory_path() / "memsched_agree";
  std::filesystem::create_directories(dir);
  for (std::uint64_t seed = 1; seed <= 2; ++seed) {
    memsched::dataflow_graph g = memsched::make_training_graph(random_dag(12, 6, seed));
    g[0].name = "input \"x\"";
    g[1].op = "conv";
    std::printf("files seed=%llu\n", static_cast<unsigned long long>(seed));
    for (const char* format : {".json", ".graphml", ".dot"}) bad += round_trip(g, dir, format);
  }
  std::filesystem::remove_all(dir);
  // The public file functions are ordinary functions in both modes (core/config.hpp's
  // MEMSCHED_INLINE): they have a type, which a function template (what MEMSCHED_DECL gives detail
  // functions header-only) would not, so they can be stored, as below.
  using reader = memsched::dataflow_graph(const std::filesystem::path&);
  using text_parser = memsched::dataflow_graph(std::string_view, const std::string&);
  static_assert(std::is_same_v<decltype(memsched::read_json_graph), reader> && std::is_same_v<decltype(memsched::read_graphml_graph), reader> &&
                std::is_same_v<decltype(memsched::read_dot_graph), reader> && std::is_same_v<decltype(memsched::parse_json_graph), text_parser> &&
                std::is_same_v<decltype(memsched::parse_graphml_graph), text_parser> &&
                std::is_same_v<decltype(memsched::parse_dot_graph), text_parser> &&
                std::is_same_v<decltype(memsched::write_json_graph), void(const std::filesystem::path&, const memsched::dataflow_graph&)>);
  struct broken_file {
    text_parser* parse;
    const char* text;
    const char* format;
  };
  const broken_file broken[] = {{memsched::parse_json_graph, "{\"nodes\": [{\"id\": 1}]}", "json"},
                                {memsched::parse_graphml_graph, "<graphml><graph><node id=\"a\"/>", "graphml"},
                                {memsched::parse_dot_graph, "digraph { 1 -> 2 [", "dot"}};
  for (const auto& [parse, text, format] : broken) {
    try {
      (void)parse(text, std::string("<") + format + ">");
      std::printf("broken %s accepted\n", format);
      ++bad;
    } catch (const memsched::file_error& e) {
      std::printf("rejected: %s\n", e.what());
    }
  }
  try {
    memsched::dataflow_graph cycle(2);
    boost::add_edge(0, 1, cycle);
    boost::add_edge(1, 0, cycle);
    (void)memsched::dtr_plan(cycle, 10);
    std::printf("a cycle accepted\n");
    ++bad;
  } catch (const std::exception& e) {
    std::printf("rejected: %s\n", e.what());
  }
  return bad == 0 ? 0 : 1;
}
