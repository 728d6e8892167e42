#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace servesim {

// Hyper-parameters of one Random-Forest regressor, trained with XGBoost in random-forest mode
// (one boosting round of `trees` parallel trees, learning rate 1, no shrinkage or leaf
// regularisation, base score = label mean), which is the forest Vidur fits with scikit-learn.
struct ForestParams {
  int trees = 250;  // num_parallel_tree
  int max_depth = 8;
  double subsample = 0.8;  // rows per tree, drawn without replacement
  int threads = 1;         // XGBoost nthread (fixed: results must not depend on the machine)
  std::uint64_t seed = 42;

  std::string describe() const;
};

// A trained forest over dense float features. Move-only owner of an XGBoost booster.
// Threading: a Forest may be used from one thread at a time; distinct forests may be trained
// and queried concurrently.
class Forest {
 public:
  // Trains on `x` (row-major, rows × features) against `y`. Throws std::runtime_error with
  // XGBoost's message when the library fails (never for valid input).
  static Forest train(const std::vector<float>& x, const std::vector<float>& y, int features,
                      const ForestParams& params);
  Forest(Forest&& other) noexcept;
  Forest& operator=(Forest&& other) noexcept;
  Forest(const Forest&) = delete;
  Forest& operator=(const Forest&) = delete;
  ~Forest();

  // Predictions for `x` (row-major, rows × features as trained).
  std::vector<float> predict(const std::vector<float>& x) const;
  // Every split threshold the trees use on feature `feature`, sorted, distinct. A sample goes
  // left when its value is < the threshold, so the forest is constant between neighbours.
  std::vector<double> split_thresholds(int feature) const;
  // XGBoost's own model format (".json" or ".ubj" by extension).
  void save(const std::string& path) const;

  // "major.minor.patch" of the linked XGBoost (part of every cache key).
  static std::string library_version();

 private:
  Forest(void* booster, int features) : booster_(booster), features_(features) {}
  void* booster_ = nullptr;
  int features_ = 1;
};

}  // namespace servesim
