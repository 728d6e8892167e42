#pragma once

#include <optional>
#include <vector>

#include "sim/engine/workload.hpp"

namespace servesim::test {

// A workload that yields the given requests in order (engine and scheduler tests).
class ListWorkload : public Workload {
 public:
  explicit ListWorkload(std::vector<RequestSpec> specs) : specs_(std::move(specs)) {}
  std::string_view name() const override { return "list"; }
  std::optional<RequestSpec> next() override {
    if (i_ >= specs_.size()) return std::nullopt;
    return specs_[i_++];
  }

 private:
  std::vector<RequestSpec> specs_;
  std::size_t i_ = 0;
};

}  // namespace servesim::test
