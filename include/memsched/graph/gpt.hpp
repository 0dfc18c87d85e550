#pragma once
// GPT-style decoder stacks as memsched dataflow graphs, at the granularity of the aten-level traces
// in ../shared/graphs/torch (gpt2_small, gpt2_medium, gpt_96): one node per aten op, float32
// tensors, costs in FLOPs. Used to build training graphs of any depth (11,000+ nodes) for the
// hierarchical remat methods, whose point is a stack of identical blocks.

#include <memsched/core/errors.hpp>
#include <memsched/graph/dataflow_graph.hpp>
#include <memsched/graph/detail/generator_support.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace memsched {

/// Options of make_gpt. The defaults are GPT-2 small (12 layers, d = 768, 12 heads, vocabulary
/// 50,257) at sequence 256, batch 1: make_gpt() reproduces ../shared/graphs/torch/gpt2_small.inference.json.
struct gpt_options {
  std::size_t layers = 12;        ///< Transformer blocks.
  std::int64_t hidden = 768;      ///< Model width d.
  std::int64_t heads = 12;        ///< Attention heads (must divide hidden).
  std::int64_t sequence = 256;    ///< Tokens per sequence S.
  std::int64_t batch = 1;         ///< Sequences per batch B.
  std::int64_t vocab = 50257;     ///< Vocabulary size of the output head.
  std::int64_t mlp_ratio = 4;     ///< MLP width = mlp_ratio * hidden.
  std::string name = "gpt";       ///< The graph's name.
};

/// Builds the forward graph of a GPT decoder stack. Nodes (op, bytes with T = B*S tokens and
/// float32, cost in FLOPs):
///   inputs idx (B*S*4), pos (S*4), mask (S*S*4), all cost 0;
///   embedding(idx) and embedding_1(pos) (T*d, S*d elements; cost = elements), add;
///   per block: layernorm (5 per element) -> addmm QKV (T x 3d; 2*T*d*3d + T*3d) -> bmm scores
///   (B*h*S*S; 2*B*S*S*d) -> mul (scale) -> add (reads mask) -> softmax (5 per element) -> bmm
///   (reads QKV and softmax; T x d) -> copy (head merge) -> addmm proj -> add (residual) ->
///   layernorm -> addmm MLP up (T x r*d) -> gelu (8 per element) -> addmm down -> add (residual);
///   final layernorm, mm head (T x vocab; 2*T*d*vocab).
/// Names follow torch's aten trace (native_layer_norm_3, addmm_7, ...). 15 * layers + 8 nodes,
/// ids 0..n-1 in a topological order (stored as the graph's `order`), output = the head.
/// Complexity: O(layers). Throws option_error naming the field for layers == 0, a size
/// below 1 or heads not dividing hidden; std::invalid_argument for tensor sizes beyond 2^62 bytes.
[[nodiscard]] inline dataflow_graph make_gpt(const gpt_options& o = {}) {
  auto fail = [](const char* option, const std::string& requirement) { throw option_error("make_gpt", option, requirement); };
  if (o.layers == 0) fail("layers", "must be >= 1");
  if (o.hidden < 1) fail("hidden", "must be >= 1");
  if (o.heads < 1) fail("heads", "must be >= 1");
  if (o.hidden % o.heads != 0)
    fail("heads", "(" + std::to_string(o.heads) + ") must divide hidden (" + std::to_string(o.hidden) + ")");
  if (o.sequence < 1) fail("sequence", "must be >= 1");
  if (o.batch < 1) fail("batch", "must be >= 1");
  if (o.vocab < 1) fail("vocab", "must be >= 1");
  if (o.mlp_ratio < 1) fail("mlp_ratio", "must be >= 1");
  // Every element count below is a product of at most three options; check them in long double so
  // an absurd configuration is refused instead of wrapping around.
  constexpr long double limit = static_cast<long double>(std::numeric_limits<std::int64_t>::max() / 4 / detail::float_bytes);
  const long double tokens = static_cast<long double>(o.batch) * o.sequence;
  for (long double elements : {tokens * o.hidden * 3, tokens * o.hidden * o.mlp_ratio, tokens * o.vocab,
                               tokens * o.sequence * o.heads})
    if (elements > limit) throw std::invalid_argument("make_gpt: tensor sizes beyond 2^62 bytes (reduce batch, sequence, hidden, heads or vocab)");

  const std::int64_t T = o.batch * o.sequence, d = o.hidden, S = o.sequence, f = o.mlp_ratio * o.hidden;
  const std::int64_t scores = o.batch * o.heads * S * S;  // elements of one attention score tensor
  constexpr std::int64_t fb = detail::float_bytes;
  auto D = [](std::int64_t x) { return static_cast<double>(x); };

  detail::graph_builder b;
  std::unordered_map<std::string, std::size_t> counts;
  // torch names the k-th call of an op `op_k` (the first one just `op`).
  auto name_of = [&](const std::string& base) {
    const std::size_t k = counts[base]++;
    return k == 0 ? base : base + "_" + std::to_string(k);
  };
  auto add = [&](const std::string& base, const std::string& op, std::int64_t elements, double cost,
                 const std::vector<std::size_t>& inputs) { return b.add(name_of(base), op, elements * fb, cost, inputs); };
  auto addmm = [&](std::size_t x, std::int64_t in, std::int64_t out) {
    return add("addmm", "addmm", T * out, 2 * D(T) * D(in) * D(out) + D(T * out), {x});
  };
  auto layernorm = [&](std::size_t x) { return add("native_layer_norm", "layernorm", T * d, 5 * D(T * d), {x}); };

  const std::size_t idx = b.add("idx", "input", T * fb, 0);
  const std::size_t pos = b.add("pos", "input", S * fb, 0);
  const std::size_t mask = b.add("mask", "input", S * S * fb, 0);
  const std::size_t tok = add("embedding", "embedding", T * d, D(T * d), {idx});
  const std::size_t posemb = add("embedding", "embedding", S * d, D(S * d), {pos});
  std::size_t residual = add("add", "add", T * d, D(T * d), {tok, posemb});
  for (std::size_t layer = 0; layer < o.layers; ++layer) {
    const std::size_t ln1 = layernorm(residual);
    const std::size_t qkv = addmm(ln1, d, 3 * d);
    std::size_t a = add("bmm", "bmm", scores, 2 * D(o.batch) * D(S) * D(S) * D(d), {qkv});
    a = add("mul", "mul", scores, D(scores), {a});
    a = add("add", "add", scores, D(scores), {mask, a});
    a = add("_softmax", "softmax", scores, 5 * D(scores), {a});
    a = add("bmm", "bmm", T * d, 2 * D(o.batch) * D(S) * D(S) * D(d), {qkv, a});
    a = add("clone", "copy", T * d, D(T * d), {a});
    a = addmm(a, d, d);
    const std::size_t mid = add("add", "add", T * d, D(T * d), {residual, a});
    a = layernorm(mid);
    a = addmm(a, d, f);
    a = add("gelu", "gelu", T * f, 8 * D(T * f), {a});
    a = addmm(a, f, d);
    residual = add("add", "add", T * d, D(T * d), {mid, a});
  }
  const std::size_t ln_f = layernorm(residual);
  const std::size_t head = add("mm", "mm", T * o.vocab, 2 * D(T) * D(d) * D(o.vocab), {ln_f});
  return b.build(o.name, "inference", {head});
}

}  // namespace memsched
