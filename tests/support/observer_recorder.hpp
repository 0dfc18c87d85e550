// Test support: an observer that records what a search reports.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace memsched::testing {

/// Records the incumbents' values and the phases, each in the order reported, and both in one
/// sequence (`events`: a phase's name, or "incumbent").
struct observer_recorder {
  std::vector<double> values;
  std::vector<std::string> phases;
  std::vector<std::string> events;
  void on_incumbent(double, double value, double) {
    values.push_back(value);
    events.emplace_back("incumbent");
  }
  void on_phase(double, std::string_view p) {
    phases.emplace_back(p);
    events.emplace_back(p);
  }
};

}  // namespace memsched::testing
