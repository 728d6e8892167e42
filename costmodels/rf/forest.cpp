#include "costmodels/rf/forest.hpp"

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <stdexcept>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <xgboost/c_api.h>

namespace servesim {
namespace {

void check(int rc, const char* what) {
  if (rc != 0) throw std::runtime_error(fmt::format("xgboost {}: {}", what, XGBGetLastError()));
}

// Owns a DMatrix for the duration of a call.
class Matrix {
 public:
  Matrix(const std::vector<float>& x, int features) {
    const auto rows = static_cast<bst_ulong>(x.size() / static_cast<std::size_t>(features));
    check(
        XGDMatrixCreateFromMat(x.data(), rows, static_cast<bst_ulong>(features), -1e30f, &handle_),
        "DMatrixCreateFromMat");
  }
  Matrix(const Matrix&) = delete;
  Matrix& operator=(const Matrix&) = delete;
  ~Matrix() { XGDMatrixFree(handle_); }
  DMatrixHandle get() const { return handle_; }

 private:
  DMatrixHandle handle_ = nullptr;
};

}  // namespace

std::string ForestParams::describe() const {
  return fmt::format("trees={} max_depth={} subsample={} threads={} seed={}", trees, max_depth,
                     subsample, threads, seed);
}

Forest Forest::train(const std::vector<float>& x, const std::vector<float>& y, int features,
                     const ForestParams& p) {
  if (y.empty() || x.size() != y.size() * static_cast<std::size_t>(features)) {
    throw std::invalid_argument("Forest::train: x must hold rows × features values, y ≥ 1 row");
  }
  Matrix m(x, features);
  check(XGDMatrixSetFloatInfo(m.get(), "label", y.data(), static_cast<bst_ulong>(y.size())),
        "DMatrixSetFloatInfo");
  BoosterHandle b = nullptr;
  const DMatrixHandle train_set[] = {m.get()};
  check(XGBoosterCreate(train_set, 1, &b), "BoosterCreate");
  Forest f(b, features);
  const double mean = std::accumulate(y.begin(), y.end(), 0.0) / static_cast<double>(y.size());
  // Random-forest mode: one round, many parallel trees, no shrinkage. lambda 0 and
  // min_child_weight 0 keep leaves at the mean of their rows; base_score at the label mean keeps
  // the forest from shrinking toward XGBoost's default 0.5.
  const std::pair<const char*, std::string> params[] = {
      {"booster", "gbtree"},
      {"objective", "reg:squarederror"},
      {"tree_method", "exact"},
      {"learning_rate", "1"},
      {"num_parallel_tree", std::to_string(p.trees)},
      {"max_depth", std::to_string(p.max_depth)},
      {"subsample", fmt::format("{}", p.subsample)},
      {"colsample_bynode", "1"},
      {"lambda", "0"},
      {"min_child_weight", "0"},
      {"base_score", fmt::format("{:.9g}", mean)},
      {"nthread", std::to_string(p.threads)},
      {"seed", std::to_string(p.seed)},
      {"verbosity", "0"},
  };
  for (const auto& [k, v] : params) check(XGBoosterSetParam(b, k, v.c_str()), k);
  check(XGBoosterUpdateOneIter(b, 0, m.get()), "BoosterUpdateOneIter");
  return f;
}

Forest::Forest(Forest&& o) noexcept
    : booster_(std::exchange(o.booster_, nullptr)), features_(o.features_) {}

Forest& Forest::operator=(Forest&& o) noexcept {
  if (this != &o) {
    if (booster_ != nullptr) XGBoosterFree(booster_);
    booster_ = std::exchange(o.booster_, nullptr);
    features_ = o.features_;
  }
  return *this;
}

Forest::~Forest() {
  if (booster_ != nullptr) XGBoosterFree(booster_);
}

std::vector<float> Forest::predict(const std::vector<float>& x) const {
  Matrix m(x, features_);
  bst_ulong n = 0;
  const float* out = nullptr;
  check(XGBoosterPredict(booster_, m.get(), 0, 0, 0, &n, &out), "BoosterPredict");
  return std::vector<float>(out, out + n);
}

std::vector<double> Forest::split_thresholds(int feature) const {
  bst_ulong n = 0;
  const char** trees = nullptr;
  check(XGBoosterDumpModelEx(booster_, "", 0, "text", &n, &trees), "BoosterDumpModelEx");
  // Text dump lines look like "3:[f0<1536.5] yes=7,no=8,missing=7".
  const std::string tag = fmt::format("[f{}<", feature);
  std::vector<double> out;
  for (bst_ulong t = 0; t < n; ++t) {
    const std::string_view dump(trees[t]);
    for (std::size_t pos = dump.find(tag); pos != std::string_view::npos;
         pos = dump.find(tag, pos + tag.size())) {
      out.push_back(std::strtod(trees[t] + pos + tag.size(), nullptr));
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void Forest::save(const std::string& path) const {
  check(XGBoosterSaveModel(booster_, path.c_str()), "BoosterSaveModel");
}

std::string Forest::library_version() {
  int major = 0;
  int minor = 0;
  int patch = 0;
  XGBoostVersion(&major, &minor, &patch);
  return fmt::format("{}.{}.{}", major, minor, patch);
}

}  // namespace servesim
