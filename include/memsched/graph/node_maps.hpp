#pragma once
// How algorithms read per-vertex data (index, id, bytes, cost, workspace, training role, grad_of,
// in-place output)
// and the graph outputs. Built on the graph concepts only; the maps of memsched's own node bundles
// (default_node_maps) live with the bundle, in dataflow_graph.hpp.

#include <memsched/graph/concepts.hpp>
#include <memsched/graph/node_role.hpp>

#include <boost/graph/properties.hpp>
#include <boost/property_map/property_map.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <vector>

namespace memsched {

/// A property map that gives every vertex the same value (cost 1, workspace 0, ...).
template <class T>
using constant_map = boost::static_property_map<T>;

/// The role map of a graph without training roles: every vertex is forward.
using forward_role_map = constant_map<node_role>;
/// The grad_of map of a graph without gradients: no vertex has one.
using no_grad_of_map = constant_map<std::optional<std::int64_t>>;
/// The inplace map of a graph without in-place outputs: no vertex reuses an input's buffer.
using no_inplace_map = constant_map<bool>;

namespace detail {
/// The default value of a map member: the constant for the constant maps above, a value-initialized
/// map otherwise.
template <class M, class V>
M default_map(V value) {
  if constexpr (std::is_constructible_v<M, V>)
    return M(value);
  else
    return M{};
}
}  // namespace detail

/// The property maps an algorithm reads, as one aggregate. `index` maps vertices to 0..n-1, `id`
/// gives the number used in error messages and files, `bytes` the output size, `cost` the compute
/// cost, `workspace` the scratch bytes, `role` the training role (node_role), `grad_of` the id of
/// the forward vertex whose gradient a vertex computes (std::optional<std::int64_t>; nullopt:
/// none), `inplace` whether a vertex's output may take over the buffer of an equal-size input that
/// dies at it (bool; the rule is in docs/simulator.md). `outputs` lists the graph outputs by index
/// (nullopt: every vertex without consumers). `role`, `grad_of` and `inplace` default to "all
/// forward", "none" and "never".
template <class IndexMap, class IdMap, class BytesMap, class CostMap, class WorkspaceMap,
          class RoleMap = forward_role_map, class GradOfMap = no_grad_of_map, class InplaceMap = no_inplace_map>
struct node_maps {
  IndexMap index;
  IdMap id;
  BytesMap bytes;
  CostMap cost;
  WorkspaceMap workspace;
  RoleMap role = detail::default_map<RoleMap>(node_role::forward);
  GradOfMap grad_of = detail::default_map<GradOfMap>(std::optional<std::int64_t>());
  InplaceMap inplace = detail::default_map<InplaceMap>(false);
  std::optional<std::vector<std::size_t>> outputs;
};

/// Maps for a graph that has only sizes: cost 1, workspace 0, id = index, every vertex forward,
/// outputs = sinks. O(1), never throws.
template <class IndexMap, class BytesMap>
[[nodiscard]] auto make_node_maps(IndexMap index, BytesMap bytes) {
  return node_maps<IndexMap, IndexMap, BytesMap, constant_map<double>, constant_map<std::int64_t>>{
      index, index, bytes, constant_map<double>(1.0), constant_map<std::int64_t>(0)};
}

/// Maps with explicit cost and workspace; id = index, every vertex forward. O(1), never throws.
template <class IndexMap, class BytesMap, class CostMap, class WorkspaceMap>
[[nodiscard]] auto make_node_maps(IndexMap index, BytesMap bytes, CostMap cost, WorkspaceMap workspace) {
  return node_maps<IndexMap, IndexMap, BytesMap, CostMap, WorkspaceMap>{index, index, bytes, cost, workspace};
}

/// Maps of a training graph: explicit cost, workspace, role and grad_of (grad_of values are ids,
/// and id = index here). O(1), never throws.
template <class IndexMap, class BytesMap, class CostMap, class WorkspaceMap, class RoleMap, class GradOfMap>
[[nodiscard]] auto make_node_maps(IndexMap index, BytesMap bytes, CostMap cost, WorkspaceMap workspace, RoleMap role,
                                  GradOfMap grad_of) {
  return node_maps<IndexMap, IndexMap, BytesMap, CostMap, WorkspaceMap, RoleMap, GradOfMap>{
      index, index, bytes, cost, workspace, role, grad_of};
}

namespace detail {
template <class G>
concept has_vertex_index = graph<G> && requires(const G& g) { get(boost::vertex_index, g); };
}  // namespace detail

}  // namespace memsched
