#include "run/error_model.hpp"

#include <algorithm>
#include <cmath>

#include "sim/config/config_node.hpp"
#include "sim/config/input_error.hpp"

namespace servesim {
namespace {

const std::vector<std::string>& class_names() {
  static const std::vector<std::string> k = {"home", "hbm", "gddr", "datasheet"};
  return k;
}

std::string key(const std::string& cost_model, const std::string& cls, StepKind kind) {
  return cost_model + "/" + cls + "/" + std::string(step_kind_name(kind));
}

std::string one_of(const ConfigNode& node, const std::vector<std::string>& known,
                   const std::string& what) {
  const std::string v = node.as_string();
  for (const auto& k : known) {
    if (k == v) return v;
  }
  std::string list;
  for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
  node.fail("unknown " + what + " '" + v + "' (known: " + list + ")");
}

// A log-ratio: finite and within ±3 (a factor of 20), beyond which no pricing is meant.
double log_ratio(const ConfigNode& node, std::string_view k) {
  const ConfigNode v = node.at(k);
  const double x = v.as_double();
  if (!std::isfinite(x) || std::abs(x) > 3) {
    v.fail("expected a log-ratio ln(measured / priced) between -3 and 3");
  }
  return x;
}

}  // namespace

double ErrorQuantiles::log_ratio_at(double u) const {
  if (u <= 0.5) return p10 + (p50 - p10) * (u - 0.1) / 0.4;
  return p50 + (p90 - p50) * (u - 0.5) / 0.4;
}

std::string ErrorModel::default_path() { return SERVESIM_ERROR_MODEL; }

ErrorModel ErrorModel::load(const std::string& path) {
  const ConfigNode root = ConfigNode::load_file(path);
  root.require_map("an error model (provenance, gpu_classes, regimes)");
  root.check_keys({"provenance", "gpu_classes", "regimes"});
  ErrorModel m;
  m.file_ = path;
  const ConfigNode classes = root.at("gpu_classes");
  classes.require_map("a map from GPU class to a list of GPU names");
  for (const std::string& cls : classes.keys()) {
    const ConfigNode list = classes.at(cls);
    const std::vector<std::string> measured(class_names().begin(), class_names().end() - 1);
    if (std::find(measured.begin(), measured.end(), cls) == measured.end()) {
      list.fail("unknown GPU class '" + cls + "' (known: home, hbm, gddr)");
    }
    if (!list.is_sequence()) list.fail("expected a list of GPU names");
    for (const ConfigNode& gpu : list.items()) m.class_of_gpu_[gpu.as_string()] = cls;
  }
  const ConfigNode regimes = root.at("regimes");
  if (!regimes.is_sequence()) regimes.fail("expected a list of regimes");
  std::vector<std::string> kinds;
  for (std::size_t i = 0; i < kNumStepKinds; ++i) {
    kinds.emplace_back(step_kind_name(static_cast<StepKind>(i)));
  }
  for (const ConfigNode& r : regimes.items()) {
    r.require_map("a regime (cost_model, gpu_class, step_kind, n, p10, p50, p90 or status)");
    r.check_keys({"cost_model", "gpu_class", "step_kind", "n", "p10", "p50", "p90", "status"});
    const std::string cm = r.get_string("cost_model");
    const std::string cls = one_of(r.at("gpu_class"), class_names(), "GPU class");
    const std::string kind_name = one_of(r.at("step_kind"), kinds, "step kind");
    const auto kind =
        static_cast<StepKind>(std::find(kinds.begin(), kinds.end(), kind_name) - kinds.begin());
    const std::int64_t n = r.at("n").as_int();
    if (n < 0) r.at("n").fail("expected a row count ≥ 0");
    if (r.has("status")) {
      const ConfigNode s = r.at("status");
      if (s.as_string() != "unmeasured") s.fail("expected status: unmeasured (or p10, p50, p90)");
      if (r.has("p10") || r.has("p50") || r.has("p90")) {
        s.fail("an unmeasured regime has no p10, p50, p90");
      }
      continue;
    }
    ErrorQuantiles q{log_ratio(r, "p10"), log_ratio(r, "p50"), log_ratio(r, "p90"), n};
    if (!(q.p10 <= q.p50 && q.p50 <= q.p90)) r.at("p50").fail("expected p10 ≤ p50 ≤ p90");
    if (n < 1) r.at("n").fail("expected a row count ≥ 1 for a measured regime");
    if (!m.regimes_.emplace(key(cm, cls, kind), q).second) {
      r.fail("regime " + key(cm, cls, kind) + " is listed twice");
    }
  }
  return m;
}

std::string ErrorModel::gpu_class(const std::string& gpu_name) const {
  const auto it = class_of_gpu_.find(gpu_name);
  return it == class_of_gpu_.end() ? "datasheet" : it->second;
}

std::optional<ErrorQuantiles> ErrorModel::find(const std::string& cost_model,
                                               const std::string& cls, StepKind kind) const {
  const auto it = regimes_.find(key(cost_model, cls, kind));
  if (it == regimes_.end()) return std::nullopt;
  return it->second;
}

}  // namespace servesim
