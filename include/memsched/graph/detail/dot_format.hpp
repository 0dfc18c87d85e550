#pragma once
// The parts of the DOT reader and writer (graph/dot_io.hpp) behind its functions: the checks that
// run before Boost's read_graphviz, and the attribute writer. Included by graph/impl/dot_io.ipp;
// tests include it for the limits it defines.

#include <memsched/core/errors.hpp>
#include <memsched/graph/dataflow_graph.hpp>
#include <memsched/graph/detail/attribute_graph.hpp>
#include <memsched/graph/detail/graph_record.hpp>
#include <memsched/graph/detail/input_limits.hpp>

#include <boost/algorithm/string/predicate.hpp>
#include <boost/graph/graphviz.hpp>

#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <new>
#include <sstream>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

namespace memsched::detail {

/// DOT's keywords (node, edge, graph, digraph, subgraph, strict), which are case-insensitive.
[[nodiscard]] inline bool is_dot_keyword(std::string_view word) {
  for (std::string_view keyword : {"node", "edge", "graph", "digraph", "subgraph", "strict"})
    if (boost::algorithm::iequals(word, keyword)) return true;
  return false;
}

/// The most edges a DOT text may stand for once Boost expands edges between subgraphs
/// (`{a b c} -> {d e f}` is one edge per pair): 1,000,000 plus 4 per byte of text. A written-out
/// edge takes at least 4 bytes ("1->2"), so only that expansion can reach the limit.
[[nodiscard]] inline std::uint64_t max_dot_expanded_edges(std::size_t text_bytes) noexcept {
  return 1'000'000 + 4 * static_cast<std::uint64_t>(text_bytes);
}

/// The state of check_dot_edge_expansion's scan of one DOT text: a frame per open brace group, the
/// members of each named subgraph, and the edges counted so far (saturating just above the limit,
/// so that no count overflows).
class dot_edge_counter {
 public:
  dot_edge_counter(std::string_view text, const std::string& source)
      : text_(text), source_(source), limit_(max_dot_expanded_edges(text.size())), stack_(1) {}

  /// Scans the whole text; throws file_error at the edge operator whose operands pass the limit.
  void scan() {
    std::size_t i = 0;
    while (i < text_.size()) i = step(i);
  }

 private:
  /// Returned by a step at a construct Boost fails on (an unterminated comment or string): the
  /// scan stops there and Boost reports it.
  static constexpr std::size_t stop = std::string_view::npos;

  struct frame {
    std::uint64_t names = 0;   // node names written inside this brace group (upper bound of its members)
    std::uint64_t left = 0;    // size of the operand before a pending edge operator; 0: none
    bool pending_edge = false; // an edge operator follows `left`
    std::string name;          // the subgraph's name, if any
  };

  std::string_view text_;
  const std::string& source_;
  std::uint64_t limit_;
  std::vector<frame> stack_;
  std::map<std::string, std::uint64_t, std::less<>> named_;  // members of each named subgraph so far
  std::uint64_t expanded_ = 0;
  std::size_t edge_pos_ = 0;
  bool value_next_ = false;  // the next name is an attribute value or a port, not a node
  int subgraph_state_ = 0;   // 1: after `subgraph`, 2: after `subgraph NAME`
  std::string subgraph_name_;

  [[nodiscard]] std::uint64_t sat_add(std::uint64_t a, std::uint64_t b) const { return a > limit_ || b > limit_ - a ? limit_ + 1 : a + b; }
  [[nodiscard]] std::uint64_t sat_mul(std::uint64_t a, std::uint64_t b) const { return b != 0 && a > limit_ / b ? limit_ + 1 : a * b; }

  [[nodiscard]] static bool is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           static_cast<unsigned char>(c) >= 0x80;
  }

  [[nodiscard]] std::size_t end_of_line(std::size_t from) const {
    while (from < text_.size() && text_[from] != '\n' && text_[from] != '\r' && text_[from] != '\f') ++from;
    return from;
  }

  /// An operand of size `size` (a node: 1; a brace group: its names): with a pending edge operator,
  /// the edges between it and the operand before.
  void operand(std::uint64_t size) {
    frame& f = stack_.back();
    if (f.pending_edge) {
      expanded_ = sat_add(expanded_, sat_mul(f.left, size));
      if (expanded_ > limit_)
        throw file_error(source_ + ": line " + std::to_string(line_of(text_, edge_pos_)) +
                         ": edges between subgraphs expand to more than " + std::to_string(limit_) +
                         " edges (the limit for a DOT text of " + std::to_string(text_.size()) +
                         " bytes: 1,000,000 + 4 per byte); write the edges out or use JSON");
      f.pending_edge = false;
    }
    f.left = size;
  }

  void end_statement() {
    stack_.back().left = 0;
    stack_.back().pending_edge = false;
  }

  void finish_subgraph_reference() {
    // `subgraph NAME` without a body: an operand with NAME's members.
    if (subgraph_state_ == 2) {
      const auto it = named_.find(subgraph_name_);
      const std::uint64_t size = it == named_.end() ? 0 : it->second;
      stack_.back().names = sat_add(stack_.back().names, size);
      operand(size);
    }
    subgraph_state_ = 0;
  }

  /// A name (an identifier, a quoted string or an HTML string); only an identifier may be a keyword.
  void name_token(const std::string& word, bool keyword_possible) {
    const bool subgraph = keyword_possible && boost::algorithm::iequals(word, "subgraph");
    if (keyword_possible && !subgraph && is_dot_keyword(word)) {
      finish_subgraph_reference();
      end_statement();
      return;
    }
    if (subgraph) {
      finish_subgraph_reference();
      subgraph_state_ = 1;
      return;
    }
    if (subgraph_state_ == 1) {
      subgraph_name_ = word;
      subgraph_state_ = 2;
      return;
    }
    finish_subgraph_reference();
    if (value_next_) {
      value_next_ = false;
      return;
    }
    stack_.back().names = sat_add(stack_.back().names, 1);
    operand(1);
  }

  /// The token at i; returns where the next one may start, or `stop`.
  std::size_t step(std::size_t i) {
    const std::size_t n = text_.size();
    const char c = text_[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') return i + 1;
    if (c == '#' || (c == '/' && i + 1 < n && text_[i + 1] == '/')) return end_of_line(i);
    if (c == '/' && i + 1 < n && text_[i + 1] == '*') {
      const std::size_t end = text_.find("*/", i + 2);
      return end == std::string_view::npos ? stop : end + 2;
    }
    if (c == '"') return quoted_string(i);
    if (c == '<') return html_string(i);
    if (c == '-' && i + 1 < n && (text_[i + 1] == '>' || text_[i + 1] == '-')) return edge_operator(i);
    if (c == '{') return open_group(i);
    if (c == '}') return close_group(i);
    if (c == '[') return attribute_list(i);
    if (c == ';' || c == ',') {
      finish_subgraph_reference();
      end_statement();
      value_next_ = false;
      return i + 1;
    }
    if (c == '=' || c == ':') return assignment_or_port(i);
    if (is_name_char(c) || c == '-') {
      const std::size_t start = i;
      for (++i; i < n && is_name_char(text_[i]); ++i) {
      }
      name_token(std::string(text_.substr(start, i - start)), true);
      return i;
    }
    return i + 1;  // anything else: Boost reports it; nothing to count
  }

  std::size_t quoted_string(std::size_t i) {
    const std::size_t n = text_.size();
    const std::size_t start = ++i;
    for (; i < n && text_[i] != '"'; ++i)
      if (text_[i] == '\\') ++i;
    if (i >= n) return stop;  // unterminated: Boost fails on it
    name_token(std::string(text_.substr(start, i - start)), false);
    return i + 1;
  }

  std::size_t html_string(std::size_t i) {
    const std::size_t n = text_.size();
    long open = 0;
    const std::size_t start = i;
    for (; i < n; ++i) {
      open += text_[i] == '<';
      open -= text_[i] == '>';
      if (open == 0) break;
    }
    if (i >= n) return stop;
    ++i;
    name_token(std::string(text_.substr(start, i - start)), false);
    return i;
  }

  std::size_t edge_operator(std::size_t i) {
    finish_subgraph_reference();
    value_next_ = false;
    frame& f = stack_.back();
    if (f.left != 0) f.pending_edge = true;
    edge_pos_ = i;
    return i + 2;
  }

  std::size_t open_group(std::size_t i) {
    std::string name = subgraph_state_ == 2 ? subgraph_name_ : std::string();
    subgraph_state_ = 0;
    value_next_ = false;
    stack_.push_back(frame{.name = std::move(name)});
    return i + 1;
  }

  /// A closed brace group is an operand with every name written inside it; a named subgraph's
  /// members add up over its definitions.
  std::size_t close_group(std::size_t i) {
    finish_subgraph_reference();
    value_next_ = false;
    if (stack_.size() > 1) {
      frame closed = std::move(stack_.back());
      stack_.pop_back();
      if (!closed.name.empty()) named_[closed.name] = sat_add(named_[closed.name], closed.names);
      stack_.back().names = sat_add(stack_.back().names, closed.names);
      operand(closed.names);
    } else {
      end_statement();
    }
    return i + 1;
  }

  /// An attribute list: names inside are attributes and values; it ends the statement's operands.
  std::size_t attribute_list(std::size_t i) {
    const std::size_t n = text_.size();
    finish_subgraph_reference();
    for (++i; i < n && text_[i] != ']'; ++i)
      if (text_[i] == '"') {
        for (++i; i < n && text_[i] != '"'; ++i)
          if (text_[i] == '\\') ++i;
      }
    ++i;
    end_statement();
    value_next_ = false;
    return i;
  }

  std::size_t assignment_or_port(std::size_t i) {
    finish_subgraph_reference();
    // `a = b`: a was an attribute name, not a node; b is its value. `a:port`: the port is no node.
    if (text_[i] == '=') {
      frame& f = stack_.back();
      if (f.names > 0) f.names -= 1;
      end_statement();
    }
    value_next_ = true;
    return i + 1;
  }
};

/// Throws file_error naming `source` and the line when the edge statements of `text` could expand
/// to more than max_dot_expanded_edges edges. Boost's parser stores every expanded pair before we
/// see one (14 KB of text made 2.25 M edges), so the text is scanned first. The count is an upper
/// bound: a subgraph operand counts every node name written inside it (nested and repeated ones
/// too), `subgraph NAME` reuses what NAME held; attribute lists and `=` values are not names.
/// Run after check_dot_nesting (the depth stays below max_nesting_depth). O(size).
inline void check_dot_edge_expansion(std::string_view text, const std::string& source) {
  dot_edge_counter(text, source).scan();
}

/// A DOT attribute value as Boost writes it (escape_dot_string: quoted unless it is an identifier
/// or a number), except that two kinds Boost leaves bare are quoted: DOT's keywords (a reader
/// takes `strict` or `node` for the keyword; an op named "strict" did not read back) and "." and
/// "-." (Boost's pattern takes them for numbers, DOT's numerals need a digit; a graph named "."
/// did not read back, found by the ONNX fuzzer).
inline std::string dot_value(const std::string& text) {
  const bool digitless_number = text == "." || text == "-.";
  return is_dot_keyword(text) || digitless_number ? "\"" + text + "\"" : boost::escape_dot_string(text);
}

/// Boost's dynamic-properties writers (vertex, edge and graph attributes, the same text) with
/// dot_value for the values.
template <class Graph>
struct dot_attribute_writer {
  const boost::dynamic_properties* dp;
  const std::string* node_id;  // the vertex property that names the node, not written as an attribute
  const Graph* g;
  template <class Key>
  void operator()(std::ostream& out, Key key) const {
    bool first = true;
    for (auto i = dp->begin(); i != dp->end(); ++i) {
      if (typeid(key) != i->second->key() || i->first == *node_id) continue;
      out << (first ? " [" : ", ") << i->first << "=" << dot_value(i->second->get_string(key));
      first = false;
    }
    if (!first) out << "]";
  }
  void operator()(std::ostream& out) const {
    for (auto i = dp->begin(); i != dp->end(); ++i)
      if (typeid(Graph*) == i->second->key()) out << i->first << "=" << dot_value(i->second->get_string(const_cast<Graph*>(g))) << ";\n";
  }
};

/// Boost writes `"` as `\"` and reads `\"` back as `"`, drops a backslash before a newline (DOT's
/// line continuation), and leaves other backslashes alone; DOT has no escape for a backslash: a
/// string ending in a backslash, or with a backslash before a quote or a newline, would not read
/// back.
inline void check_dot_text(const std::string& text, const std::string& what) {
  if ((!text.empty() && text.back() == '\\') || text.find("\\\"") != std::string::npos || text.find("\\\n") != std::string::npos)
    throw graph_error("write_dot_graph: " + what + " '" + text +
                      "' ends with a backslash or has one before a quote or a newline: DOT cannot hold it (use JSON or GraphML)");
}

}  // namespace memsched::detail
