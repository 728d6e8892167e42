#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "costmodels/rf/rf_cache.hpp"
#include "costmodels/rf/rf_tables.hpp"
#include "sim/hardware/gpu_spec.hpp"

namespace servesim {

// The Vidur compute profiles of one GPU: every <org>/<model>/mlp.csv under its folder.
// Vidur's layout is profiling/compute/<gpu>/<org>/<model>/mlp.csv; the folder given may be
// `profiling`, `profiling/compute` or the GPU folder itself. Immutable.
class RfProfileSet {
 public:
  // `gpu_names`: the spellings to try as the GPU's folder (e.g. the user's "a100" and the
  // catalog name "a100-80gb"). Throws InputError when no folder holds an mlp.csv.
  static RfProfileSet open(const std::string& dir, const std::vector<std::string>& gpu_names);

  const std::string& gpu_dir() const { return gpu_dir_; }
  // Model ids ("org/name") in sorted order.
  std::vector<std::string> model_ids() const;
  // Path of the model's mlp.csv; ids match case-insensitively.
  std::optional<std::string> mlp_path(const std::string& model_id) const;
  // Same, or an InputError naming the folder and the profiled models.
  std::string require_mlp_path(const std::string& model_id) const;
  // The profile (id, path) for `model`: by id, else the first whose layer dimensions (n_embd,
  // n_head, n_kv_head, n_expanded_embd, use_gated_mlp) equal the model's — per-layer kernel
  // times depend only on those, so a fine-tune or renamed copy shares its base's profile. The
  // vocabulary is not compared: Vidur pads it (Llama-2's 32000 is profiled as 32768).
  // InputError naming the profiled models when none matches.
  std::pair<std::string, std::string> require_model(const ModelSpec& model) const;

 private:
  std::string gpu_dir_;
  std::vector<std::pair<std::string, std::string>> profiles_;  // id, path (sorted by id)
};

// The profile files one RfTables is trained from.
struct RfSource {
  std::string model_id;
  std::string mlp_path;
  int tp = 1;
  std::string all_reduce_path;  // "" = no network profile
};

struct RfLoaded {
  RfTables tables;
  bool cache_hit = false;
  double seconds = 0;  // wall time of this load (cache read or training)
  std::uint64_t key = 0;
};

// Cache key of a source under `options`: FNV-1a of the profile bytes, TP, options, XGBoost
// version and the cache format.
std::uint64_t rf_cache_key(const RfSource& source, const RfTrainOptions& options);

// Loads the tables from `cache`, or reads the profiles, trains and stores them.
RfLoaded load_or_train_rf(const RfSource& source, const RfTrainOptions& options,
                          const RfCache& cache);

}  // namespace servesim
