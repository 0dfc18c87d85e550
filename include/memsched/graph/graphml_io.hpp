#pragma once
// Reading and writing graphs as GraphML through Boost.Graph's read_graphml/write_graphml and
// dynamic_properties. Attribute names: see docs/graph-format.md and detail/attribute_graph.hpp.

#include <memsched/core/errors.hpp>
#include <memsched/graph/dataflow_graph.hpp>
#include <memsched/graph/detail/attribute_graph.hpp>
#include <memsched/graph/detail/graph_record.hpp>
#include <memsched/graph/detail/input_limits.hpp>

#include <boost/any.hpp>
#include <boost/graph/graphml.hpp>
#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>

#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

namespace memsched {

namespace detail {

/// Boost's GraphML parser hands every attribute over as text with its declared type; this builder
/// keeps the text (in an attribute_graph, through dynamic_properties) so that the conversion, not
/// boost::lexical_cast, reports bad values, naming the node.
class graphml_builder final : public boost::mutate_graph {
 public:
  graphml_builder(attribute_graph& g, boost::dynamic_properties& dp) : g_(g), dp_(dp) {}
  [[nodiscard]] bool is_directed() const override { return true; }
  boost::any do_add_vertex() override { return boost::any(add_vertex(g_)); }
  std::pair<boost::any, bool> do_add_edge(boost::any source, boost::any target) override {
    const auto [e, added] = add_edge(boost::any_cast<std::size_t>(source), boost::any_cast<std::size_t>(target), g_);
    return {boost::any(e), added};
  }
  void set_graph_property(const std::string& name, const std::string& value, const std::string&) override {
    boost::put(name, dp_, &g_, value);
  }
  void set_vertex_property(const std::string& name, boost::any vertex, const std::string& value, const std::string&) override {
    boost::put(name, dp_, boost::any_cast<std::size_t>(vertex), value);
  }
  void set_edge_property(const std::string&, boost::any, const std::string&, const std::string&) override {}

 private:
  attribute_graph& g_;
  boost::dynamic_properties& dp_;
};

/// Boost's read_graphml gives two <node> elements with the same id one vertex, the later data
/// overwriting the earlier: a silently wrong graph. Reads the same graphs Boost reads (the first
/// <graph> of <graphml> and the <graph> elements nested directly in it, recursively) and throws
/// file_error naming the id and both elements. Run after read_graphml accepted the text (which
/// also bounds the nesting). O(size log n).
inline void check_graphml_node_ids(const std::string& text, const std::string& source) {
  namespace pt = boost::property_tree;
  pt::ptree doc;
  std::istringstream in(text);
  pt::read_xml(in, doc, pt::xml_parser::no_comments | pt::xml_parser::trim_whitespace);
  const auto root = doc.get_child_optional("graphml");
  if (!root) return;
  std::map<std::string, std::size_t> first;  // id -> position among the <node> elements read
  std::size_t count = 0;
  auto scan = [&](const auto& self, const pt::ptree& graph) -> void {
    for (const auto& [tag, child] : graph)
      if (tag == "node") {
        const std::string id = child.get("<xmlattr>.id", std::string());
        const auto [it, added] = first.emplace(id, count);
        if (!added)
          fail_file(source, "<node id=\"" + id + "\"> appears twice (<node> elements " + std::to_string(it->second + 1) + " and " +
                                std::to_string(count + 1) + " in file order): node ids must be unique");
        ++count;
      }
    for (const auto& [tag, child] : graph)
      if (tag == "graph") self(self, child);
  };
  for (const auto& [tag, child] : *root)
    if (tag == "graph") {
      scan(scan, child);
      break;
    }
}

}  // namespace detail

/// Parses a graph in GraphML (the first graph of the document); `source` names the input in
/// messages. Node attributes `bytes` (required), `id`, `name`, `op`, `cost`, `workspace`, `role`,
/// `backward` (legacy), `grad_of`, `output`, `order_position`; graph attributes `name`, `kind`; others are
/// ignored. Without `id` attributes the nodes are numbered 0, 1, ... in file order (Boost's parser
/// creates a node for an edge end that names no <node>; it has no `bytes` unless the key has a
/// <default>, which is then the error reported).
/// O((n + m) log m). Throws file_error, whose message starts with `source`, for text that is not
/// GraphML, elements nested deeper than 256 levels (naming the line), two <node> elements with the
/// same id (naming it), and everything parse_json_graph rejects (same checks, same validation).
[[nodiscard]] inline dataflow_graph parse_graphml_graph(std::string_view text, const std::string& source = "<graphml>") {
  detail::check_xml_nesting(text, source);
  detail::attribute_graph raw;
  auto dp = detail::attribute_properties(raw, "id");
  try {
    const std::string copy(text);
    std::istringstream in{copy};
    detail::graphml_builder builder(raw, dp);
    boost::read_graphml(in, builder, 0);
    detail::check_graphml_node_ids(copy, source);
  } catch (const file_error&) {
    throw;
  } catch (const boost::undirected_graph_error&) {
    throw file_error(source + ": not a directed GraphML graph (edgedefault=\"undirected\"): dataflow edges need a direction");
  } catch (const std::exception& e) {
    throw file_error(source + ": not valid GraphML (" + e.what() + ")");
  }
  return detail::build_dataflow_graph(detail::record_from_attributes(raw, source, detail::attribute_format::graphml), source);
}

/// Reads a GraphML file. Throws file_error naming the path when it is a directory or cannot be opened or
/// read, and everything
/// parse_graphml_graph throws.
[[nodiscard]] inline dataflow_graph read_graphml_graph(const std::filesystem::path& path) {
  return parse_graphml_graph(detail::read_text_file(path), path.string());
}

namespace detail {
/// Boost's read_graphml parses with whitespace trimming and normalization (rapidxml), and the text
/// ends at a NUL: a tab, newline, NUL, leading, trailing or repeated space would not read back.
inline void check_graphml_text(const std::string& text, const std::string& what) {
  bool bad = !text.empty() && (text.front() == ' ' || text.back() == ' ');
  for (std::size_t i = 0; i < text.size() && !bad; ++i)
    bad = text[i] == '\t' || text[i] == '\n' || text[i] == '\r' || text[i] == '\0' || (text[i] == ' ' && i > 0 && text[i - 1] == ' ');
  if (bad)
    throw graph_error("write_graphml_graph: " + what +
                      " has a tab, newline, NUL, or a leading, trailing or repeated space: GraphML readers normalize whitespace, "
                      "so it would not read back (use JSON)");
}
}  // namespace detail

/// Writes the graph as GraphML: nodes "n<index>" with the attributes above but `backward` (`role`
/// only when some node is not forward, `output` only when the graph has explicit outputs, `order_position` only when it has an order, `grad_of` only when
/// a node has one); costs are written with enough digits to read back exactly. O(n + m).
/// Throws graph_error when the graph's outputs or order hold a non-vertex, or when a name, op or
/// kind has a tab, newline, NUL, or a leading, trailing or repeated space (GraphML readers
/// normalize whitespace: it would not read back).
inline void write_graphml_graph(std::ostream& out, const dataflow_graph& g) {
  detail::check_graph_lists(g, "write_graphml_graph");
  detail::check_graphml_text(g[boost::graph_bundle].name, "the graph name");
  detail::check_graphml_text(g[boost::graph_bundle].kind, "the graph kind");
  for (std::size_t v = 0; v < num_vertices(g); ++v) {
    detail::check_graphml_text(g[v].name, "node " + std::to_string(g[v].id) + ": name");
    detail::check_graphml_text(g[v].op, "node " + std::to_string(g[v].id) + ": op");
  }
  const auto dp = detail::written_properties(g, "id");
  boost::write_graphml(out, g, get(boost::vertex_index, g), dp, true);
}

/// Writes the graph to a GraphML file. Throws file_error naming the path when it cannot be written,
/// graph_error as the stream overload.
inline void write_graphml_graph(const std::filesystem::path& path, const dataflow_graph& g) {
  std::ostringstream text;
  write_graphml_graph(text, g);
  std::ofstream out(path, std::ios::binary);
  out << text.str();
  out.flush();
  if (!out) throw file_error(path.string() + ": cannot write the file");
}

}  // namespace memsched
