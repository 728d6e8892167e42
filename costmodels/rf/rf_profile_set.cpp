#include "costmodels/rf/rf_profile_set.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include <fmt/format.h>

#include "costmodels/analytical/profile_validation.hpp"
#include "sim/config/input_error.hpp"
#include "sim/hardware/catalog.hpp"

namespace servesim {
namespace fs = std::filesystem;
namespace {

std::string read_bytes(const std::string& path) {
  std::ifstream in = open_input_file(path, "a Vidur profile CSV");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

RfProfileSet RfProfileSet::open(const std::string& dir, const std::vector<std::string>& gpu_names) {
  GpuProfiles found = find_gpu_profiles(dir, gpu_names, "rf: profiles");
  RfProfileSet set;
  set.gpu_dir_ = std::move(found.dir);
  set.profiles_ = std::move(found.files);
  return set;
}

std::vector<std::string> RfProfileSet::model_ids() const {
  std::vector<std::string> ids;
  for (const auto& [id, path] : profiles_) ids.push_back(id);
  return ids;
}

std::optional<std::string> RfProfileSet::mlp_path(const std::string& model_id) const {
  for (const auto& [id, path] : profiles_) {
    if (lowercase(id) == lowercase(model_id)) return path;
  }
  return std::nullopt;
}

std::string RfProfileSet::require_mlp_path(const std::string& model_id) const {
  if (auto p = mlp_path(model_id)) return *p;
  std::string known;
  for (const auto& [id, path] : profiles_) known += (known.empty() ? "" : ", ") + id;
  throw InputError("rf: no profile for model '" + model_id + "' under " + gpu_dir_ +
                   " (profiled: " + known + ")");
}

std::pair<std::string, std::string> RfProfileSet::require_model(const ModelSpec& m) const {
  for (const auto& [id, path] : profiles_) {
    if (lowercase(id) == lowercase(m.name)) return {id, path};
  }
  for (const auto& [id, path] : profiles_) {
    const std::vector<VidurMlpRow> rows = read_vidur_mlp(path);
    if (rows.empty()) continue;
    const VidurMlpRow& r = rows.front();
    if (r.n_embd == m.hidden_size && r.n_head == m.num_heads && r.n_kv_head == m.num_kv_heads &&
        r.n_expanded_embd == m.intermediate_size && r.gated_mlp == m.gated_mlp) {
      return {id, path};
    }
  }
  std::string known;
  for (const auto& [id, path] : profiles_) known += (known.empty() ? "" : ", ") + id;
  throw InputError("rf: no profile for model '" + m.name + "' under " + gpu_dir_ +
                   ", by name or by layer dimensions (profiled: " + known + ")");
}

std::uint64_t rf_cache_key(const RfSource& s, const RfTrainOptions& o) {
  std::uint64_t h = fnv1a64(read_bytes(s.mlp_path));
  h = fnv1a64(s.all_reduce_path.empty() ? std::string("no-network") : read_bytes(s.all_reduce_path),
              h);
  h = fnv1a64(fmt::format("|id={}|tp={}|{}|xgboost={}|format=1", lowercase(s.model_id), s.tp,
                          o.describe(), Forest::library_version()),
              h);
  return h;
}

RfLoaded load_or_train_rf(const RfSource& s, const RfTrainOptions& o, const RfCache& cache) {
  const auto start = std::chrono::steady_clock::now();
  RfLoaded out;
  out.key = rf_cache_key(s, o);
  if (auto t = cache.load(out.key)) {
    out.tables = std::move(*t);
    out.cache_hit = true;
  } else {
    const std::vector<VidurMlpRow> rows = read_vidur_mlp(s.mlp_path);
    std::vector<VidurNetworkRow> net;
    if (!s.all_reduce_path.empty()) net = read_vidur_network(s.all_reduce_path, "all_reduce");
    out.tables =
        train_rf_tables(rows, s.model_id, s.tp, s.all_reduce_path.empty() ? nullptr : &net, o);
    cache.store(out.key, out.tables);
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace servesim
