#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "run/step_kind_scaled_cost_model.hpp"

namespace servesim {

// The signed step-pricing error of one regime (cost model × GPU class × step kind): quantiles of
// ln(measured / priced) over the rows that built it. Invariant: p10 ≤ p50 ≤ p90.
struct ErrorQuantiles {
  double p10 = 0;
  double p50 = 0;
  double p90 = 0;
  std::int64_t n = 0;
  // ln(measured / priced) at quantile level u ∈ [0.1, 0.9], linear between the three points.
  double log_ratio_at(double u) const;
};

// The error model a band is drawn from (data/measured/error_model.yaml, written by
// tools/error_model.py). GPUs are grouped into classes (`gpu_classes:`); a GPU listed in none is
// of class "datasheet". A regime absent from the file, or stored as `status: unmeasured`, has no
// quantiles and is reported as "unmeasured", never as a number. Immutable after loading.
class ErrorModel {
 public:
  // Loads and validates the file; throws InputError naming file:line:col and the key.
  static ErrorModel load(const std::string& path);
  // Where data/measured/error_model.yaml of this checkout lies.
  static std::string default_path();

  const std::string& file() const { return file_; }
  std::string gpu_class(const std::string& gpu_name) const;
  // The regime's quantiles, or nullopt when it is unmeasured.
  std::optional<ErrorQuantiles> find(const std::string& cost_model, const std::string& gpu_class,
                                     StepKind kind) const;

 private:
  std::string file_;
  std::map<std::string, std::string> class_of_gpu_;
  std::map<std::string, ErrorQuantiles> regimes_;  // "cost_model/class/kind"
};

}  // namespace servesim
