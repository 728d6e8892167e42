#include "run/run_cache.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "costmodels/registry.hpp"
#include "sim/util/fnv_hash.hpp"

namespace servesim {

std::shared_ptr<Catalog> RunCache::catalog(const std::vector<std::string>& dirs) {
  const std::lock_guard lock(mutex_);
  auto& entry = catalogs_[dirs];
  if (!entry) entry = std::make_shared<Catalog>(dirs);
  return entry;
}

std::shared_ptr<const CostModel> RunCache::cost_model(const ConfigNode& node,
                                                      const std::vector<std::string>& dirs) {
  // The folder matters beside the text: relative paths in the section resolve against it.
  std::string key = fmt::format("{}\n{}\n{}", fmt::join(dirs, "\n"), node.base_dir(), node.dump());
  const std::lock_guard lock(mutex_);
  auto& entry = cost_models_[key];
  if (!entry) entry = make_cost_model(node);
  return entry;
}

std::string RunCache::file_hash(const std::string& path) {
  {
    const std::lock_guard lock(mutex_);
    if (auto it = file_hashes_.find(path); it != file_hashes_.end()) return it->second;
  }
  std::string h = file_fnv1a64(path);  // outside the lock: a large trace takes a while
  const std::lock_guard lock(mutex_);
  return file_hashes_.emplace(path, std::move(h)).first->second;
}

}  // namespace servesim
