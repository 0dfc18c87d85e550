#pragma once
// The parts of the GraphML reader and writer (graph/graphml_io.hpp) behind its functions: the
// builder Boost's read_graphml fills, and the checks of ids and text. Included by
// graph/impl/graphml_io.ipp.

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

namespace memsched::detail {

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

/// What Boost's read_graphml would read wrongly or drop without a word, as file_error naming the
/// element: two <node> elements with the same id (Boost gives them one vertex, the later data
/// overwriting the earlier), a second top-level <graph> (Boost reads the first), a <hyperedge> (a
/// dependency would disappear), a <graph> nested in a <node> or an <edge> (its nodes would
/// disappear), and a top-level <graph> without edgedefault (Boost's message names its internals). Reads the
/// graphs Boost reads (the first <graph> of <graphml> and the <graph> elements nested directly in
/// it, recursively). Text that is not XML is left to Boost's message. O(size log n).
inline void check_graphml_structure(const std::string& text, const std::string& source) {
  namespace pt = boost::property_tree;
  pt::ptree doc;
  try {
    std::istringstream in(text);
    pt::read_xml(in, doc, pt::xml_parser::no_comments | pt::xml_parser::trim_whitespace);
  } catch (const pt::ptree_error&) {
    return;
  }
  const auto root = doc.get_child_optional("graphml");
  if (!root) return;
  std::map<std::string, std::size_t> first;  // id -> position among the <node> elements read
  std::size_t count = 0;
  auto scan = [&](const auto& self, const pt::ptree& graph) -> void {
    for (const auto& [tag, child] : graph) {
      if (tag == "hyperedge")
        fail_file(source, "a <hyperedge>: memsched graphs have plain edges (write one <edge> per producer and consumer)");
      if (tag != "node" && tag != "edge") continue;
      const std::string id = child.get("<xmlattr>.id", std::string());
      if (child.count("graph") != 0)
        fail_file(source, "a <graph> nested in <" + tag + (id.empty() ? "" : " id=\"" + id + "\"") +
                              ">: memsched graphs are flat (move its nodes and edges into the top-level graph)");
      if (tag != "node") continue;
      const auto [it, added] = first.emplace(id, count);
      if (!added)
        fail_file(source, "<node id=\"" + id + "\"> appears twice (<node> elements " + std::to_string(it->second + 1) + " and " +
                              std::to_string(count + 1) + " in file order): node ids must be unique");
      ++count;
    }
    for (const auto& [tag, child] : graph)
      if (tag == "graph") self(self, child);
  };
  bool seen = false;
  for (const auto& [tag, child] : *root)
    if (tag == "graph") {
      if (seen) fail_file(source, "a second <graph> in <graphml>: memsched reads one graph per file");
      seen = true;
      if (!child.get_optional<std::string>("<xmlattr>.edgedefault"))
        fail_file(source, "the <graph> has no edgedefault attribute: write <graph edgedefault=\"directed\">");
      scan(scan, child);
    }
}

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

}  // namespace memsched::detail
