#pragma once
// Constant folding of the shape arithmetic in ONNX models (used by graph/onnx_io.hpp): PyTorch's
// exporter computes Reshape targets, Slice bounds and Expand shapes from Shape nodes at run time
// (Shape -> Gather -> Div -> Unsqueeze -> Concat -> Reshape). ONNX 1.12's shape inference cannot
// follow such chains, so on a static-shape model the reader evaluates them here and hands the
// values to ONNX's per-node inference as constant inputs.

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace memsched::detail {

/// A small constant tensor: integers (INT64, INT32, BOOL as 0/1) in `ints`, floating point (FLOAT,
/// DOUBLE) in `reals`. Other element types are not evaluated.
struct onnx_value {
  int type = 0;
  std::vector<std::int64_t> dims;
  std::vector<std::int64_t> ints;
  std::vector<double> reals;
  [[nodiscard]] bool real() const { return type == ::onnx::TensorProto::FLOAT || type == ::onnx::TensorProto::DOUBLE; }
  [[nodiscard]] std::size_t size() const { return real() ? reals.size() : ints.size(); }
};

/// Malformed input to an evaluated node; the reader prefixes the file and the node.
struct onnx_value_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Values larger than this are not evaluated (shape arithmetic handles a few dozen elements).
inline constexpr std::int64_t onnx_value_max_elements = 4096;

[[nodiscard]] inline bool onnx_value_type(int t) {
  using T = ::onnx::TensorProto;
  return t == T::INT64 || t == T::INT32 || t == T::BOOL || t == T::FLOAT || t == T::DOUBLE;
}

/// The element count of `dims`, or nullopt when a dim is negative or the count exceeds the cap.
/// The product of the non-zero dims is capped too, so that no product of some of the dims of an
/// evaluated value (strides, block sizes) overflows, even when a zero dim makes it empty.
[[nodiscard]] inline std::optional<std::int64_t> onnx_small_count(const std::vector<std::int64_t>& dims) {
  std::int64_t nonzero = 1;
  bool empty = false;
  for (const std::int64_t d : dims) {
    if (d < 0) return std::nullopt;
    if (d == 0) {
      empty = true;
      continue;
    }
    if (nonzero > onnx_value_max_elements / d) return std::nullopt;
    nonzero *= d;
  }
  return empty ? 0 : nonzero;
}

/// The value of a tensor stored in the model (initializer or Constant), or nullopt when it is
/// external, of another element type or too large. Throws onnx_value_error when its data does not
/// match its dims.
[[nodiscard]] inline std::optional<onnx_value> onnx_value_of(const ::onnx::TensorProto& t) {
  using T = ::onnx::TensorProto;
  if (t.data_location() == T::EXTERNAL || !onnx_value_type(t.data_type())) return std::nullopt;
  onnx_value v;
  v.type = t.data_type();
  v.dims.assign(t.dims().begin(), t.dims().end());
  const auto count = onnx_small_count(v.dims);
  if (!count) return std::nullopt;
  const auto n = static_cast<std::size_t>(*count);
  const std::size_t element = v.type == T::INT64 || v.type == T::DOUBLE ? 8 : v.type == T::BOOL ? 1 : 4;
  auto mismatch = [&](std::size_t held) {
    return onnx_value_error("tensor '" + t.name() + "' holds " + std::to_string(held) + " values for " + std::to_string(n) +
                            " elements (dims)");
  };
  if (!t.raw_data().empty()) {
    const std::string& raw = t.raw_data();
    if (raw.size() != n * element) throw mismatch(raw.size() / element);
    for (std::size_t i = 0; i < n; ++i) {
      const char* p = raw.data() + i * element;
      switch (v.type) {
        case T::INT64: { std::int64_t x; std::memcpy(&x, p, 8); v.ints.push_back(x); break; }
        case T::INT32: { std::int32_t x; std::memcpy(&x, p, 4); v.ints.push_back(x); break; }
        case T::BOOL: v.ints.push_back(*p != 0); break;
        case T::FLOAT: { float x; std::memcpy(&x, p, 4); v.reals.push_back(x); break; }
        default: { double x; std::memcpy(&x, p, 8); v.reals.push_back(x); break; }
      }
    }
    return v;
  }
  auto take = [&](const auto& field, auto& into) {
    if (static_cast<std::size_t>(field.size()) != n) throw mismatch(static_cast<std::size_t>(field.size()));
    for (const auto x : field) into.push_back(x);
  };
  switch (v.type) {
    case T::INT64: take(t.int64_data(), v.ints); break;
    case T::INT32: take(t.int32_data(), v.ints); break;
    case T::BOOL:
      take(t.int32_data(), v.ints);
      for (auto& x : v.ints) x = x != 0;
      break;
    case T::FLOAT: take(t.float_data(), v.reals); break;
    default: take(t.double_data(), v.reals); break;
  }
  return v;
}

/// `v` as a TensorProto named `name` (the form ONNX's inference reads constant inputs in).
[[nodiscard]] inline ::onnx::TensorProto onnx_tensor_of(const onnx_value& v, const std::string& name) {
  using T = ::onnx::TensorProto;
  T t;
  t.set_name(name);
  t.set_data_type(v.type);
  for (const auto d : v.dims) t.add_dims(d);
  for (const auto x : v.ints) {
    if (v.type == T::INT64) t.add_int64_data(x);
    else t.add_int32_data(static_cast<std::int32_t>(x));
  }
  for (const auto x : v.reals) {
    if (v.type == T::FLOAT) t.add_float_data(static_cast<float>(x));
    else t.add_double_data(x);
  }
  return t;
}

/// True for the ops onnx_evaluator evaluates (default domain).
[[nodiscard]] inline bool onnx_evaluated_op(std::string_view op) {
  static constexpr std::string_view ops[] = {
      "Shape", "Size", "Constant", "Identity", "Cast", "Gather", "Unsqueeze", "Squeeze", "Concat", "Slice", "Reshape",
      "ConstantOfShape", "Range", "Expand", "Where", "Transpose", "Neg", "Abs", "Floor", "Ceil", "Sqrt", "Not", "Add",
      "Sub", "Mul", "Div", "Mod", "Min", "Max", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or"};
  return std::find(std::begin(ops), std::end(ops), op) != std::end(ops);
}

/// The evaluation of one node: its attributes, its input values and the shape of input 0.
class onnx_evaluator {
 public:
  onnx_evaluator(const ::onnx::NodeProto& n, int opset, std::vector<const onnx_value*> in, const std::vector<std::int64_t>* shape0)
      : n_(n), opset_(opset), in_(std::move(in)), shape0_(shape0) {}

  /// The value of output 0, or nullopt when the op is not one evaluated here or an input value is
  /// unknown. Throws onnx_value_error on malformed inputs (an index out of range, a division by
  /// zero, an overflow, shapes that do not match).
  [[nodiscard]] std::optional<onnx_value> run() {
    const std::string& op = n_.op_type();
    if (op == "Shape" || op == "Size") return shape0_ ? shape_of(op == "Size") : std::nullopt;
    if (op == "Constant") return constant();
    // Only Slice's and (Un)squeeze's later inputs are optional (read through ints_from); an input
    // of any other op given the empty name is missing, not absent.
    const bool optional_inputs = op == "Slice" || op == "Squeeze" || op == "Unsqueeze";
    for (std::size_t i = 0; i < in_.size(); ++i)
      if (!in_[i] && (i == 0 || !optional_inputs || !n_.input(static_cast<int>(i)).empty())) return std::nullopt;
    if (in_.empty()) return std::nullopt;
    if (op == "Identity") return *in_[0];
    if (op == "Cast") return cast();
    if (op == "Gather") return gather();
    if (op == "Unsqueeze" || op == "Squeeze") return squeeze(op == "Unsqueeze");
    if (op == "Concat") return concat();
    if (op == "Slice") return slice();
    if (op == "Reshape") return reshape();
    if (op == "ConstantOfShape") return constant_of_shape();
    if (op == "Range") return range();
    if (op == "Expand") return expand();
    if (op == "Where") return where();
    if (op == "Transpose") return transpose();
    if (op == "Neg" || op == "Abs" || op == "Floor" || op == "Ceil" || op == "Sqrt" || op == "Not") return unary(op);
    if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Mod" || op == "Min" || op == "Max" || op == "Equal" ||
        op == "Less" || op == "Greater" || op == "LessOrEqual" || op == "GreaterOrEqual" || op == "And" || op == "Or")
      return binary(op);
    return std::nullopt;
  }

 private:
  using T = ::onnx::TensorProto;

  [[noreturn]] static void bad(const std::string& what) { throw onnx_value_error(what); }

  const ::onnx::AttributeProto* attribute(std::string_view name) const {
    for (const auto& a : n_.attribute())
      if (a.name() == name) return &a;
    return nullptr;
  }
  std::int64_t int_attribute(std::string_view name, std::int64_t fallback) const {
    const auto* a = attribute(name);
    return a ? a->i() : fallback;
  }
  /// An int list from attribute `name` (opsets before `since`) or from input `input` (since then);
  /// nullopt when neither is given.
  std::optional<std::vector<std::int64_t>> ints_from(std::string_view name, int since, std::size_t input) const {
    if (opset_ < since) {
      const auto* a = attribute(name);
      if (!a) return std::nullopt;
      return std::vector<std::int64_t>(a->ints().begin(), a->ints().end());
    }
    if (in_.size() <= input || !in_[input]) return std::nullopt;
    if (in_[input]->real()) bad("input " + std::to_string(input) + " (" + std::string(name) + ") is not an integer tensor");
    return in_[input]->ints;
  }
  /// `axis` in [-rank, rank) made non-negative.
  static std::int64_t normalize_axis(std::int64_t axis, std::int64_t rank, std::string_view what) {
    if (axis < -rank || axis >= rank)
      bad(std::string(what) + " " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
    return axis < 0 ? axis + rank : axis;
  }
  static std::int64_t count_of(const std::vector<std::int64_t>& dims) {
    const auto c = onnx_small_count(dims);
    return c ? *c : -1;
  }
  /// A value of `type` with `dims`, room reserved; nullopt (not evaluated) when it is too large.
  static std::optional<onnx_value> make(int type, std::vector<std::int64_t> dims) {
    if (count_of(dims) < 0) return std::nullopt;
    onnx_value v;
    v.type = type;
    v.dims = std::move(dims);
    return v;
  }
  /// Appends element `i` of `from` to `to` (same kind).
  static void push(onnx_value& to, const onnx_value& from, std::size_t i) {
    if (from.real()) to.reals.push_back(from.reals[i]);
    else to.ints.push_back(from.ints[i]);
  }
  static std::vector<std::int64_t> strides(const std::vector<std::int64_t>& dims) {
    std::vector<std::int64_t> s(dims.size(), 1);
    for (std::size_t k = dims.size(); k-- > 1;) s[k - 1] = s[k] * dims[k];
    return s;
  }

  std::optional<onnx_value> shape_of(bool size) const {
    const auto& dims = *shape0_;
    if (static_cast<std::int64_t>(dims.size()) > onnx_value_max_elements) return std::nullopt;
    if (size) {
      std::int64_t n = 1;
      for (const auto d : dims)
        if (__builtin_mul_overflow(n, d, &n)) bad("the element count of its input overflows 64 bits");
      return onnx_value{T::INT64, {}, {n}, {}};
    }
    const auto rank = static_cast<std::int64_t>(dims.size());
    auto clamp = [&](std::int64_t x) { return std::clamp(x < 0 ? x + rank : x, std::int64_t{0}, rank); };
    const std::int64_t start = clamp(int_attribute("start", 0));
    const std::int64_t end = std::max(start, clamp(int_attribute("end", rank)));
    onnx_value v{T::INT64, {end - start}, {dims.begin() + start, dims.begin() + end}, {}};
    return v;
  }

  std::optional<onnx_value> constant() const {
    for (const auto& a : n_.attribute()) {
      if (a.name() == "value" && a.has_t()) return onnx_value_of(a.t());
      if (a.name() == "value_int") return onnx_value{T::INT64, {}, {a.i()}, {}};
      if (a.name() == "value_ints") return onnx_value{T::INT64, {a.ints_size()}, {a.ints().begin(), a.ints().end()}, {}};
      if (a.name() == "value_float") return onnx_value{T::FLOAT, {}, {}, {a.f()}};
      if (a.name() == "value_floats") return onnx_value{T::FLOAT, {a.floats_size()}, {}, {a.floats().begin(), a.floats().end()}};
    }
    return std::nullopt;
  }

  std::optional<onnx_value> cast() const {
    const int to = static_cast<int>(int_attribute("to", 0));
    if (!onnx_value_type(to)) return std::nullopt;
    const onnx_value& x = *in_[0];
    onnx_value v{to, x.dims, {}, {}};
    const bool real = to == T::FLOAT || to == T::DOUBLE;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double r = x.real() ? x.reals[i] : static_cast<double>(x.ints[i]);
      if (real) {
        v.reals.push_back(to == T::FLOAT ? static_cast<double>(static_cast<float>(r)) : r);
      } else if (to == T::BOOL) {
        v.ints.push_back(x.real() ? r != 0 : x.ints[i] != 0);
      } else if (x.real()) {
        if (!std::isfinite(r) || std::trunc(r) < -9.2e18 || std::trunc(r) > 9.2e18) bad("casting " + std::to_string(r) + " to an integer overflows");
        v.ints.push_back(wrap(static_cast<std::int64_t>(r), to));
      } else {
        v.ints.push_back(wrap(x.ints[i], to));
      }
    }
    return v;
  }
  /// Integer conversion to `type` as C++ does it (INT32 keeps the low 32 bits).
  static std::int64_t wrap(std::int64_t x, int type) { return type == T::INT32 ? static_cast<std::int32_t>(x) : x; }

  std::optional<onnx_value> gather() const {
    const onnx_value& data = *in_[0];
    if (in_.size() < 2 || in_[1]->real()) bad("its indices are not an integer tensor");
    const onnx_value& idx = *in_[1];
    const auto rank = static_cast<std::int64_t>(data.dims.size());
    if (rank == 0) bad("its data is a scalar");
    const std::int64_t axis = normalize_axis(int_attribute("axis", 0), rank, "axis");
    std::vector<std::int64_t> dims(data.dims.begin(), data.dims.begin() + axis);
    dims.insert(dims.end(), idx.dims.begin(), idx.dims.end());
    dims.insert(dims.end(), data.dims.begin() + axis + 1, data.dims.end());
    auto v = make(data.type, dims);
    if (!v) return std::nullopt;
    std::int64_t outer = 1, inner = 1;
    for (std::int64_t k = 0; k < axis; ++k) outer *= data.dims[k];
    for (std::int64_t k = axis + 1; k < rank; ++k) inner *= data.dims[k];
    const std::int64_t size = data.dims[axis];
    for (std::int64_t o = 0; o < outer; ++o)
      for (std::int64_t i : idx.ints) {
        if (i < -size || i >= size) bad("index " + std::to_string(i) + " is out of range for axis " + std::to_string(axis) + " of size " + std::to_string(size));
        if (i < 0) i += size;
        for (std::int64_t k = 0; k < inner; ++k) push(*v, data, static_cast<std::size_t>((o * size + i) * inner + k));
      }
    return v;
  }

  std::optional<onnx_value> squeeze(bool unsqueeze) const {
    const onnx_value& x = *in_[0];
    const auto axes = ints_from("axes", 13, 1);
    auto v = x;
    const auto rank = static_cast<std::int64_t>(x.dims.size());
    if (unsqueeze) {
      if (!axes) bad("it has no axes");
      const auto out_rank = rank + static_cast<std::int64_t>(axes->size());
      std::vector<bool> inserted(static_cast<std::size_t>(out_rank), false);
      for (const auto a : *axes) {
        const auto k = static_cast<std::size_t>(normalize_axis(a, out_rank, "axis"));
        if (inserted[k]) bad("axis " + std::to_string(a) + " is given twice");
        inserted[k] = true;
      }
      v.dims.clear();
      auto next = x.dims.begin();
      for (const bool one : inserted) v.dims.push_back(one ? 1 : *next++);
      return v;
    }
    std::vector<bool> removed(static_cast<std::size_t>(rank), false);
    for (std::int64_t k = 0; k < rank; ++k) removed[k] = !axes && x.dims[k] == 1;
    if (axes)
      for (const auto a : *axes) {
        const auto k = normalize_axis(a, rank, "axis");
        if (x.dims[k] != 1) bad("axis " + std::to_string(a) + " has size " + std::to_string(x.dims[k]) + ", not 1");
        removed[k] = true;
      }
    v.dims.clear();
    for (std::int64_t k = 0; k < rank; ++k)
      if (!removed[k]) v.dims.push_back(x.dims[k]);
    return v;
  }

  std::optional<onnx_value> concat() const {
    const onnx_value& first = *in_[0];
    const auto rank = static_cast<std::int64_t>(first.dims.size());
    if (rank == 0) bad("input 0 is a scalar");
    if (!attribute("axis")) bad("it has no axis");
    const std::int64_t axis = normalize_axis(int_attribute("axis", 0), rank, "axis");
    std::vector<std::int64_t> dims = first.dims;
    dims[axis] = 0;
    for (std::size_t i = 0; i < in_.size(); ++i) {
      const onnx_value& x = *in_[i];
      if (x.type != first.type) return std::nullopt;  // ONNX's inference reports the type mismatch
      for (std::int64_t k = 0; k < rank; ++k)
        if (static_cast<std::int64_t>(x.dims.size()) != rank || (k != axis && x.dims[k] != first.dims[k]))
          bad("input " + std::to_string(i) + " does not match input 0's shape outside axis " + std::to_string(axis));
      dims[axis] += x.dims[axis];
    }
    auto v = make(first.type, dims);
    if (!v) return std::nullopt;
    std::int64_t outer = 1;
    for (std::int64_t k = 0; k < axis; ++k) outer *= dims[k];
    for (std::int64_t o = 0; o < outer; ++o)
      for (const onnx_value* x : in_) {
        const std::int64_t block = static_cast<std::int64_t>(x->size()) / std::max<std::int64_t>(outer, 1);
        for (std::int64_t k = 0; k < block; ++k) push(*v, *x, static_cast<std::size_t>(o * block + k));
      }
    return v;
  }

  std::optional<onnx_value> slice() const {
    const onnx_value& x = *in_[0];
    const auto rank = static_cast<std::int64_t>(x.dims.size());
    const auto starts = ints_from("starts", 10, 1), ends = ints_from("ends", 10, 2);
    if (!starts || !ends || starts->size() != ends->size()) bad("its starts and ends are missing or differ in length");
    auto axes = ints_from("axes", 10, 3);
    const auto steps = opset_ < 10 ? std::nullopt : ints_from("steps", 10, 4);
    if (!axes) {
      axes.emplace();
      for (std::size_t k = 0; k < starts->size(); ++k) axes->push_back(static_cast<std::int64_t>(k));
    }
    if (axes->size() != starts->size() || (steps && steps->size() != starts->size())) bad("its axes or steps differ in length from its starts");
    std::vector<std::int64_t> begin(rank, 0), step(rank, 1), dims = x.dims;
    std::vector<bool> seen(rank, false);
    for (std::size_t j = 0; j < axes->size(); ++j) {
      const auto k = normalize_axis((*axes)[j], rank, "axis");
      if (seen[k]) bad("axis " + std::to_string((*axes)[j]) + " is given twice");
      seen[k] = true;
      const std::int64_t d = x.dims[k], st = steps ? (*steps)[j] : 1;
      if (st == 0 || st == std::numeric_limits<std::int64_t>::min()) bad("step " + std::to_string(st) + " is not allowed");
      std::int64_t s = (*starts)[j], e = (*ends)[j];
      if (s < 0) s = s < -d ? -1 : s + d;  // -1: before the axis, clamped next
      if (e < 0) e = e < -d ? -1 : e + d;
      if (d == 0) {
        dims[k] = 0;
      } else if (st > 0) {
        s = std::clamp<std::int64_t>(s, 0, d);
        e = std::clamp<std::int64_t>(e, 0, d);
        dims[k] = e > s ? (e - s - 1) / st + 1 : 0;
      } else {
        s = std::clamp<std::int64_t>(s, 0, d - 1);
        e = std::clamp<std::int64_t>(e, -1, d - 1);
        dims[k] = s > e ? (s - e - 1) / (-st) + 1 : 0;
      }
      begin[k] = s;
      step[k] = st;
    }
    auto v = make(x.type, dims);
    if (!v) return std::nullopt;
    const auto in_strides = strides(x.dims), out_strides = strides(dims);
    const std::int64_t total = count_of(dims);
    for (std::int64_t o = 0; o < total; ++o) {
      std::int64_t at = 0;
      for (std::int64_t k = 0; k < rank; ++k) at += (begin[k] + (o / out_strides[k]) % dims[k] * step[k]) * in_strides[k];
      push(*v, x, static_cast<std::size_t>(at));
    }
    return v;
  }

  std::optional<onnx_value> reshape() const {
    const onnx_value& x = *in_[0];
    if (in_.size() < 2 || in_[1]->real()) bad("its shape is not an integer tensor");
    const bool allow_zero = int_attribute("allowzero", 0) != 0;
    std::vector<std::int64_t> dims = in_[1]->ints;
    std::int64_t known = 1, infer = -1;
    for (std::size_t k = 0; k < dims.size(); ++k) {
      if (dims[k] == 0 && !allow_zero) {
        if (k >= x.dims.size()) bad("shape entry " + std::to_string(k) + " is 0 (copy) beyond the input's rank");
        dims[k] = x.dims[k];
      }
      if (dims[k] == -1) {
        if (infer >= 0) bad("its shape has more than one -1");
        infer = static_cast<std::int64_t>(k);
      } else if (dims[k] < 0) {
        bad("shape entry " + std::to_string(k) + " is " + std::to_string(dims[k]));
      } else if (__builtin_mul_overflow(known, dims[k], &known)) {
        bad("its shape's element count overflows 64 bits");
      }
    }
    const auto n = static_cast<std::int64_t>(x.size());
    if (infer >= 0) {
      if (known == 0 || n % known != 0) bad("its input's " + std::to_string(n) + " elements do not fill the shape");
      dims[infer] = n / known;
    } else if (known != n) {
      bad("its input's " + std::to_string(n) + " elements do not match the shape's " + std::to_string(known));
    }
    if (count_of(dims) < 0) return std::nullopt;  // an empty value with a huge dim
    auto v = x;
    v.dims = dims;
    return v;
  }

  std::optional<onnx_value> constant_of_shape() const {
    const onnx_value& shape = *in_[0];
    if (shape.real() || shape.dims.size() != 1) bad("its input is not a 1-D integer tensor");
    for (const auto d : shape.ints)
      if (d < 0) bad("its shape holds " + std::to_string(d));
    onnx_value fill{T::FLOAT, {}, {}, {0.0}};
    if (const auto* a = attribute("value"); a && a->has_t()) {
      const auto given = onnx_value_of(a->t());
      if (!given) return std::nullopt;
      if (given->size() != 1) bad("its value holds " + std::to_string(given->size()) + " elements, not 1");
      fill = *given;
    }
    auto v = make(fill.type, shape.ints);
    if (!v) return std::nullopt;
    const auto n = static_cast<std::size_t>(count_of(shape.ints));
    if (fill.real()) v->reals.assign(n, fill.reals[0]);
    else v->ints.assign(n, fill.ints[0]);
    return v;
  }

  std::optional<onnx_value> range() const {
    if (in_.size() != 3) bad("it needs start, limit and delta");
    for (const onnx_value* x : in_)
      if (x->size() != 1 || x->type != in_[0]->type) bad("start, limit and delta must be scalars of one type");
    if (in_[0]->real()) {
      const double s = in_[0]->reals[0], l = in_[1]->reals[0], d = in_[2]->reals[0];
      if (d == 0 || !std::isfinite(s) || !std::isfinite(l) || !std::isfinite(d)) bad("delta is 0 or a bound is not finite");
      const double n = std::max(std::ceil((l - s) / d), 0.0);
      if (n > static_cast<double>(onnx_value_max_elements)) return std::nullopt;
      onnx_value v{in_[0]->type, {static_cast<std::int64_t>(n)}, {}, {}};
      for (std::int64_t i = 0; i < v.dims[0]; ++i) v.reals.push_back(s + static_cast<double>(i) * d);
      return v;
    }
    const std::int64_t s = in_[0]->ints[0], l = in_[1]->ints[0], d = in_[2]->ints[0];
    if (d == 0) bad("delta is 0");
    const double n = std::max(std::ceil((static_cast<double>(l) - static_cast<double>(s)) / static_cast<double>(d)), 0.0);
    if (n > static_cast<double>(onnx_value_max_elements)) return std::nullopt;
    onnx_value v{in_[0]->type, {static_cast<std::int64_t>(n)}, {}, {}};
    for (std::int64_t i = 0, x = 0; i < v.dims[0]; ++i) {
      if (__builtin_mul_overflow(i, d, &x) || __builtin_add_overflow(s, x, &x)) bad("Range overflows 64 bits");
      v.ints.push_back(x);
    }
    return v;
  }

  /// The multidirectional (numpy) broadcast of `a` and `b`.
  static std::vector<std::int64_t> broadcast(const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b) {
    std::vector<std::int64_t> out(std::max(a.size(), b.size()), 1);
    for (std::size_t k = 0; k < out.size(); ++k) {
      const std::int64_t x = k < out.size() - a.size() ? 1 : a[k - (out.size() - a.size())];
      const std::int64_t y = k < out.size() - b.size() ? 1 : b[k - (out.size() - b.size())];
      if (x != y && x != 1 && y != 1) bad("shapes do not broadcast (" + std::to_string(x) + " against " + std::to_string(y) + ")");
      out[k] = x == 1 ? y : x;
    }
    return out;
  }
  /// The flat index into a tensor of `dims` of output element `o` of a broadcast to `out`.
  static std::size_t source(std::int64_t o, const std::vector<std::int64_t>& out, const std::vector<std::int64_t>& dims) {
    std::int64_t at = 0, stride = 1;
    for (std::size_t k = 0; k < dims.size(); ++k) {
      const std::size_t j = dims.size() - 1 - k, oj = out.size() - 1 - k;
      std::int64_t outer = 1;
      for (std::size_t q = oj + 1; q < out.size(); ++q) outer *= out[q];
      const std::int64_t i = dims[j] == 1 ? 0 : (o / outer) % out[oj];
      at += i * stride;
      stride *= dims[j];
    }
    return static_cast<std::size_t>(at);
  }

  std::optional<onnx_value> expand() const {
    const onnx_value& x = *in_[0];
    if (in_.size() < 2 || in_[1]->real() || in_[1]->dims.size() != 1) bad("its shape is not a 1-D integer tensor");
    const auto dims = broadcast(x.dims, in_[1]->ints);
    auto v = make(x.type, dims);
    if (!v) return std::nullopt;
    for (std::int64_t o = 0, n = count_of(dims); o < n; ++o) push(*v, x, source(o, dims, x.dims));
    return v;
  }

  std::optional<onnx_value> transpose() const {
    const onnx_value& x = *in_[0];
    const auto rank = static_cast<std::int64_t>(x.dims.size());
    std::vector<std::int64_t> perm;
    if (const auto* a = attribute("perm")) perm.assign(a->ints().begin(), a->ints().end());
    else
      for (std::int64_t k = rank; k-- > 0;) perm.push_back(k);
    std::vector<bool> used(static_cast<std::size_t>(rank), false);
    if (static_cast<std::int64_t>(perm.size()) != rank) bad("perm has " + std::to_string(perm.size()) + " entries for rank " + std::to_string(rank));
    std::vector<std::int64_t> dims;
    for (const auto p : perm) {
      if (p < 0 || p >= rank || used[p]) bad("perm is not a permutation of the axes");
      used[p] = true;
      dims.push_back(x.dims[p]);
    }
    auto v = make(x.type, dims);
    if (!v) return std::nullopt;
    const auto in_strides = strides(x.dims), out_strides = strides(dims);
    for (std::int64_t o = 0, n = count_of(dims); o < n; ++o) {
      std::int64_t at = 0;
      for (std::int64_t k = 0; k < rank; ++k) at += (o / out_strides[k]) % dims[k] * in_strides[perm[k]];
      push(*v, x, static_cast<std::size_t>(at));
    }
    return v;
  }

  std::optional<onnx_value> where() const {
    if (in_.size() != 3 || in_[0]->type != T::BOOL || in_[1]->type != in_[2]->type) return std::nullopt;
    const auto dims = broadcast(broadcast(in_[0]->dims, in_[1]->dims), in_[2]->dims);
    auto v = make(in_[1]->type, dims);
    if (!v) return std::nullopt;
    for (std::int64_t o = 0, n = count_of(dims); o < n; ++o) {
      const bool c = in_[0]->ints[source(o, dims, in_[0]->dims)] != 0;
      const onnx_value& from = c ? *in_[1] : *in_[2];
      push(*v, from, source(o, dims, from.dims));
    }
    return v;
  }

  std::optional<onnx_value> unary(const std::string& op) const {
    auto v = *in_[0];
    if (op == "Not") {
      if (v.type != T::BOOL) return std::nullopt;
      for (auto& x : v.ints) x = !x;
      return v;
    }
    for (auto& x : v.reals) {
      if (op == "Neg") x = -x;
      else if (op == "Abs") x = std::fabs(x);
      else if (op == "Floor") x = std::floor(x);
      else if (op == "Ceil") x = std::ceil(x);
      else x = std::sqrt(x);
      if (v.type == T::FLOAT) x = static_cast<float>(x);
    }
    if (!v.real()) {
      if (op == "Floor" || op == "Ceil" || op == "Sqrt") return std::nullopt;  // float-only ops
      for (auto& x : v.ints) {
        if (x == std::numeric_limits<std::int64_t>::min()) bad("negating " + std::to_string(x) + " overflows");
        x = op == "Neg" ? -x : (x < 0 ? -x : x);
        x = check_int(x, v.type, op);
      }
    }
    return v;
  }

  static std::int64_t check_int(std::int64_t x, int type, const std::string& op) {
    if (type == T::INT32 && (x < INT32_MIN || x > INT32_MAX)) bad(op + " overflows 32 bits");
    return x;
  }

  std::optional<onnx_value> binary(const std::string& op) const {
    if (in_.size() < 2) {
      if (op == "Min" || op == "Max") return *in_[0];
      bad("it needs two inputs");
    }
    onnx_value acc = *in_[0];
    for (std::size_t i = 1; i < in_.size(); ++i) {
      const onnx_value& b = *in_[i];
      if (b.type != acc.type) return std::nullopt;  // ONNX's inference reports the type mismatch
      const auto dims = broadcast(acc.dims, b.dims);
      const bool compare = op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual" || op == "GreaterOrEqual";
      auto v = make(compare ? static_cast<int>(T::BOOL) : acc.type, dims);
      if (!v) return std::nullopt;
      for (std::int64_t o = 0, n = count_of(dims); o < n; ++o) {
        const std::size_t i0 = source(o, dims, acc.dims), i1 = source(o, dims, b.dims);
        if (acc.real()) {
          const double x = acc.reals[i0], y = b.reals[i1];
          if (compare) v->ints.push_back(compare_values(op, x, y));
          else v->reals.push_back(round_to(real_op(op, x, y), acc.type));
        } else if (compare) {
          v->ints.push_back(compare_values(op, acc.ints[i0], b.ints[i1]));
        } else {
          v->ints.push_back(check_int(int_op(op, acc.ints[i0], b.ints[i1]), acc.type, op));
        }
      }
      acc = std::move(*v);
    }
    return acc;
  }
  template <class X>
  static bool compare_values(const std::string& op, X x, X y) {
    if (op == "Equal") return x == y;
    if (op == "Less") return x < y;
    if (op == "Greater") return x > y;
    if (op == "LessOrEqual") return x <= y;
    return x >= y;
  }
  static double round_to(double x, int type) { return type == T::FLOAT ? static_cast<double>(static_cast<float>(x)) : x; }
  double real_op(const std::string& op, double x, double y) const {
    if (op == "Add") return x + y;
    if (op == "Sub") return x - y;
    if (op == "Mul") return x * y;
    if (op == "Div") return x / y;
    if (op == "Mod") return std::fmod(x, y);
    if (op == "Min") return std::min(x, y);
    if (op == "Max") return std::max(x, y);
    bad(op + " is not defined on floating-point tensors");
  }
  std::int64_t int_op(const std::string& op, std::int64_t x, std::int64_t y) const {
    std::int64_t r = 0;
    bool overflow = false;
    if (op == "Add") overflow = __builtin_add_overflow(x, y, &r);
    else if (op == "Sub") overflow = __builtin_sub_overflow(x, y, &r);
    else if (op == "Mul") overflow = __builtin_mul_overflow(x, y, &r);
    else if (op == "Min") r = std::min(x, y);
    else if (op == "Max") r = std::max(x, y);
    else if (op == "And") r = x && y;
    else if (op == "Or") r = x || y;
    else {  // Div (truncates, as C++ and ONNX Runtime do) and Mod (the divisor's sign unless fmod = 1)
      if (y == 0) bad(op + " by zero");
      if (x == std::numeric_limits<std::int64_t>::min() && y == -1) overflow = true;
      else if (op == "Div") r = x / y;
      else {
        r = x % y;
        if (int_attribute("fmod", 0) == 0 && r != 0 && ((r < 0) != (y < 0))) r += y;
      }
    }
    if (overflow) bad(op + " of " + std::to_string(x) + " and " + std::to_string(y) + " overflows 64 bits");
    return r;
  }

  const ::onnx::NodeProto& n_;
  int opset_;
  std::vector<const onnx_value*> in_;
  const std::vector<std::int64_t>* shape0_;
};

}  // namespace memsched::detail
