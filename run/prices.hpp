#pragma once

#include <map>
#include <string>
#include <vector>

#include "sim/hardware/catalog.hpp"

namespace servesim::decide {

// What a GPU-hour costs: a price file (configs/prices/on-demand.yaml's layout: source, currency,
// usd_per_gpu_hour: {gpu: price}) and `--price GPU=USD` overrides, GPU names resolved through the
// catalog (aliases work). Unknown GPUs, prices ≤ 0 or not numbers are InputErrors naming the
// file:line or flag.
class Prices {
 public:
  Prices(const std::string& file, const std::vector<std::string>& overrides, Catalog& catalog);
  bool has(const std::string& gpu) const { return usd_.count(gpu) > 0; }
  double usd_per_gpu_hour(const std::string& gpu) const { return usd_.at(gpu); }
  const std::string& source() const { return source_; }

 private:
  std::map<std::string, double> usd_;  // catalog GPU name -> price
  std::string source_;
};

}  // namespace servesim::decide
