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

/// Throws file_error naming `source` and the line when the edge statements of `text` could expand
/// to more than max_dot_expanded_edges edges. Boost's parser stores every expanded pair before we
/// see one (14 KB of text made 2.25 M edges), so the text is scanned first. The count is an upper
/// bound: a subgraph operand counts every node name written inside it (nested and repeated ones
/// too), `subgraph NAME` reuses what NAME held; attribute lists and `=` values are not names.
/// Run after check_dot_nesting (the depth stays below max_nesting_depth). O(size).
inline void check_dot_edge_expansion(std::string_view text, const std::string& source) {
  const std::size_t n = text.size();
  const std::uint64_t limit = max_dot_expanded_edges(n);
  auto sat_add = [&](std::uint64_t a, std::uint64_t b) { return a > limit || b > limit - a ? limit + 1 : a + b; };
  auto sat_mul = [&](std::uint64_t a, std::uint64_t b) { return b != 0 && a > limit / b ? limit + 1 : a * b; };
  struct frame {
    std::uint64_t names = 0;   // node names written inside this brace group (upper bound of its members)
    std::uint64_t left = 0;    // size of the operand before a pending edge operator; 0: none
    bool pending_edge = false; // an edge operator follows `left`
    std::string name;          // the subgraph's name, if any
  };
  std::vector<frame> stack(1);
  std::map<std::string, std::uint64_t, std::less<>> named;  // members of each named subgraph so far
  std::uint64_t expanded = 0;
  std::size_t edge_pos = 0;
  bool value_next = false;       // the next name is an attribute value or a port, not a node
  int subgraph_state = 0;        // 1: after `subgraph`, 2: after `subgraph NAME`
  std::string subgraph_name;
  auto operand = [&](std::uint64_t size) {
    frame& f = stack.back();
    if (f.pending_edge) {
      expanded = sat_add(expanded, sat_mul(f.left, size));
      if (expanded > limit)
        throw file_error(source + ": line " + std::to_string(line_of(text, edge_pos)) +
                         ": edges between subgraphs expand to more than " + std::to_string(limit) +
                         " edges (the limit for a DOT text of " + std::to_string(n) +
                         " bytes: 1,000,000 + 4 per byte); write the edges out or use JSON");
      f.pending_edge = false;
    }
    f.left = size;
  };
  auto end_statement = [&] {
    stack.back().left = 0;
    stack.back().pending_edge = false;
  };
  auto finish_subgraph_reference = [&] {
    // `subgraph NAME` without a body: an operand with NAME's members.
    if (subgraph_state == 2) {
      const auto it = named.find(subgraph_name);
      const std::uint64_t size = it == named.end() ? 0 : it->second;
      stack.back().names = sat_add(stack.back().names, size);
      operand(size);
    }
    subgraph_state = 0;
  };
  auto is_name_char = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           static_cast<unsigned char>(c) >= 0x80;
  };
  auto end_of_line = [&](std::size_t from) {
    while (from < n && text[from] != '\n' && text[from] != '\r' && text[from] != '\f') ++from;
    return from;
  };
  auto name_token = [&](const std::string& word, bool keyword_possible) {
    const bool subgraph = keyword_possible && boost::algorithm::iequals(word, "subgraph");
    if (keyword_possible && !subgraph && is_dot_keyword(word)) {
      finish_subgraph_reference();
      end_statement();
      return;
    }
    if (subgraph) {
      finish_subgraph_reference();
      subgraph_state = 1;
      return;
    }
    if (subgraph_state == 1) {
      subgraph_name = word;
      subgraph_state = 2;
      return;
    }
    finish_subgraph_reference();
    if (value_next) {
      value_next = false;
      return;
    }
    stack.back().names = sat_add(stack.back().names, 1);
    operand(1);
  };
  std::size_t i = 0;
  while (i < n) {
    const char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      ++i;
    } else if (c == '#' || (c == '/' && i + 1 < n && text[i + 1] == '/')) {
      i = end_of_line(i);
    } else if (c == '/' && i + 1 < n && text[i + 1] == '*') {
      const std::size_t end = text.find("*/", i + 2);
      if (end == std::string_view::npos) return;  // Boost fails on it
      i = end + 2;
    } else if (c == '"') {
      const std::size_t start = ++i;
      for (; i < n && text[i] != '"'; ++i)
        if (text[i] == '\\') ++i;
      if (i >= n) return;  // unterminated: Boost fails on it
      name_token(std::string(text.substr(start, i - start)), false);
      ++i;
    } else if (c == '<') {
      long open = 0;
      const std::size_t start = i;
      for (; i < n; ++i) {
        open += text[i] == '<';
        open -= text[i] == '>';
        if (open == 0) break;
      }
      if (i >= n) return;
      ++i;
      name_token(std::string(text.substr(start, i - start)), false);
    } else if ((c == '-' && i + 1 < n && (text[i + 1] == '>' || text[i + 1] == '-'))) {
      finish_subgraph_reference();
      value_next = false;
      frame& f = stack.back();
      if (f.left != 0) f.pending_edge = true;
      edge_pos = i;
      i += 2;
    } else if (c == '{') {
      std::string name = subgraph_state == 2 ? subgraph_name : std::string();
      subgraph_state = 0;
      value_next = false;
      stack.push_back(frame{.name = std::move(name)});
      ++i;
    } else if (c == '}') {
      finish_subgraph_reference();
      value_next = false;
      if (stack.size() > 1) {
        frame closed = std::move(stack.back());
        stack.pop_back();
        if (!closed.name.empty()) named[closed.name] = sat_add(named[closed.name], closed.names);
        stack.back().names = sat_add(stack.back().names, closed.names);
        operand(closed.names);
      } else {
        end_statement();
      }
      ++i;
    } else if (c == '[') {
      // An attribute list: names inside are attributes and values; it ends the statement's operands.
      finish_subgraph_reference();
      for (++i; i < n && text[i] != ']'; ++i)
        if (text[i] == '"') {
          for (++i; i < n && text[i] != '"'; ++i)
            if (text[i] == '\\') ++i;
        }
      ++i;
      end_statement();
      value_next = false;
    } else if (c == ';' || c == ',') {
      finish_subgraph_reference();
      end_statement();
      value_next = false;
      ++i;
    } else if (c == '=' || c == ':') {
      finish_subgraph_reference();
      // `a = b`: a was an attribute name, not a node; b is its value. `a:port`: the port is no node.
      if (c == '=') {
        frame& f = stack.back();
        if (f.names > 0) f.names -= 1;
        end_statement();
      }
      value_next = true;
      ++i;
    } else if (is_name_char(c) || c == '-') {
      const std::size_t start = i;
      for (++i; i < n && is_name_char(text[i]); ++i) {
      }
      name_token(std::string(text.substr(start, i - start)), true);
    } else {
      ++i;  // anything else: Boost reports it; nothing to count
    }
  }
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
