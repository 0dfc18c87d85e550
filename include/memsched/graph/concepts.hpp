#pragma once
// C++20 concepts over Boost.Graph for the graphs and property maps that memsched algorithms accept.
// Each graph concept first checks that boost::graph_traits<G> describes a graph, because naming a
// member of graph_traits of a non-graph type is a hard error rather than a substitution failure.
// Non-class types and class types that declare themselves not Boost graphs (detail::not_a_boost_graph,
// as memory_graph does) answer "no" cleanly; another class type that has neither Boost's nested graph
// types nor a graph_traits specialization is still a hard error. This header knows no memsched graph
// type: node_maps.hpp and memory_graph.hpp build on it, never the other way round.

#include <boost/graph/graph_concepts.hpp>
#include <boost/graph/graph_traits.hpp>
#include <boost/property_map/property_map.hpp>

#include <concepts>
#include <cstddef>
#include <type_traits>

namespace memsched {

namespace detail {

/// Specialize to std::true_type for a class type that is not a Boost graph and has no
/// boost::graph_traits specialization (memory_graph does), so the concepts below answer "no" for it
/// instead of instantiating graph_traits, which is a hard error.
template <class G>
struct not_a_boost_graph : std::false_type {};

template <class G, class = void>
struct has_graph_traits : std::false_type {};
template <class G>
struct has_graph_traits<G, std::void_t<typename boost::graph_traits<G>::vertex_descriptor,
                                       typename boost::graph_traits<G>::edge_descriptor,
                                       typename boost::graph_traits<G>::traversal_category,
                                       typename boost::graph_traits<G>::directed_category>>
    : std::true_type {};

// Only class types are probed (Boost's primary graph_traits template fails *inside* its
// instantiation, a hard error, for anything else), and never a type that opted out.
template <class G>
struct is_boost_graph : std::conjunction<std::is_class<G>, std::negation<not_a_boost_graph<G>>, has_graph_traits<G>> {};

template <class G, class Tag>
concept has_traversal = std::is_convertible_v<typename boost::graph_traits<G>::traversal_category, Tag>;

}  // namespace detail

/// A type for which boost::graph_traits<G> is defined.
template <class G>
concept graph = detail::is_boost_graph<std::remove_cvref_t<G>>::value;

/// Boost's VertexListGraph: vertices(g), num_vertices(g).
template <class G>
concept vertex_list_graph = graph<G> && detail::has_traversal<G, boost::vertex_list_graph_tag> &&
    requires(const G& g) {
      vertices(g);
      { num_vertices(g) } -> std::convertible_to<std::size_t>;
    };

/// Boost's IncidenceGraph: out_edges(v, g), target(e, g), out_degree(v, g).
template <class G>
concept incidence_graph = graph<G> && detail::has_traversal<G, boost::incidence_graph_tag> &&
    requires(const G& g, typename boost::graph_traits<G>::vertex_descriptor v,
             typename boost::graph_traits<G>::edge_descriptor e) {
      out_edges(v, g);
      { target(e, g) } -> std::convertible_to<typename boost::graph_traits<G>::vertex_descriptor>;
      { out_degree(v, g) } -> std::convertible_to<std::size_t>;
    };

/// Boost's BidirectionalGraph: in_edges(v, g) as well. Algorithms use in-edges directly when the
/// graph has them and otherwise compute them once.
template <class G>
concept bidirectional_graph = incidence_graph<G> && detail::has_traversal<G, boost::bidirectional_graph_tag> &&
    requires(const G& g, typename boost::graph_traits<G>::vertex_descriptor v) {
      in_edges(v, g);
      { source(*in_edges(v, g).first, g) } -> std::convertible_to<typename boost::graph_traits<G>::vertex_descriptor>;
    };

/// A directed graph whose vertices can be listed and whose out-edges can be walked: what every
/// memsched algorithm needs. An edge u -> v means v reads u's output tensor.
template <class G>
concept schedulable_graph = vertex_list_graph<G> && incidence_graph<G> &&
    std::is_convertible_v<typename boost::graph_traits<G>::directed_category, boost::directed_tag>;

/// A readable property map keyed by G's vertices whose values convert to T.
template <class M, class G, class T>
concept vertex_property_map = graph<G> && requires(const M& m, typename boost::graph_traits<G>::vertex_descriptor v) {
  { get(m, v) } -> std::convertible_to<T>;
};

/// A map from G's vertices to distinct indices 0..num_vertices(g)-1.
template <class M, class G>
concept vertex_index_map = vertex_property_map<M, G, std::size_t>;

}  // namespace memsched
