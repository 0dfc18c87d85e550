#pragma once
// Exceptions thrown for bad input. Every message names the function or file and the node or field.

#include <boost/config.hpp>  // boost/graph/exception.hpp uses BOOST_SYMBOL_VISIBLE without including it
#include <boost/graph/exception.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

namespace memsched {

/// Bad graph data: self loops, negative or overflowing sizes, unknown vertices, bad indices.
struct graph_error : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

/// The graph has a cycle. Derives from boost::not_a_dag so that code written against Boost.Graph's
/// topological_sort catches it too; `node` is the index of one vertex on the cycle.
class cycle_error : public boost::not_a_dag {
 public:
  cycle_error(std::string message, std::size_t node) : message_(std::move(message)), node_(node) {}
  [[nodiscard]] const char* what() const noexcept override { return message_.c_str(); }
  [[nodiscard]] std::size_t node() const noexcept { return node_; }

 private:
  std::string message_;
  std::size_t node_;
};

/// A bad value of one of an algorithm's or generator's options (a field of its options struct).
/// what() is "function: option requirement", e.g. "serenity_order: max_states must be > 0";
/// option() is the field's name, so that a front end can name its own flag for it (the memsched
/// tool reports "--max-states must be > 0").
class option_error : public std::invalid_argument {
 public:
  option_error(const std::string& function, std::string option, const std::string& requirement)
      : std::invalid_argument(function + ": " + option + " " + requirement), option_(std::move(option)), requirement_(requirement) {}
  /// The option's field name, e.g. "max_states".
  [[nodiscard]] const std::string& option() const noexcept { return option_; }
  /// What the value must be, e.g. "must be > 0" (what() without the function and the option).
  [[nodiscard]] const std::string& requirement() const noexcept { return requirement_; }

 private:
  std::string option_, requirement_;
};

/// A graph, order or plan file that cannot be read: the message starts with the file name.
struct file_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A sequence of vertices that is not a complete topological order of the graph.
class invalid_order : public std::invalid_argument {
 public:
  invalid_order(const std::string& message, std::size_t position)
      : std::invalid_argument(message), position_(position) {}
  /// The position in the order of the first offending entry (the order's length if a node is missing).
  [[nodiscard]] std::size_t position() const noexcept { return position_; }

 private:
  std::size_t position_;
};

/// An execution plan that breaks a rule of the plan semantics.
class invalid_plan : public std::invalid_argument {
 public:
  invalid_plan(const std::string& message, std::size_t step) : std::invalid_argument(message), step_(step) {}
  /// The index of the first offending step (the plan's length for end-of-plan violations).
  [[nodiscard]] std::size_t step() const noexcept { return step_; }

 private:
  std::size_t step_;
};

}  // namespace memsched
