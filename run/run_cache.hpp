#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "sim/config/config_node.hpp"
#include "sim/engine/cost_model.hpp"
#include "sim/hardware/catalog.hpp"

namespace servesim {

// What the runs of one study (a sweep's points) share: catalogs and cost models, which are
// immutable and thread-safe once built. A cost model is shared only with the catalog it was
// built beside, since its per-replica tables key on that catalog's spec addresses. Entries are
// keyed by what builds them (catalog folders; the cost_model section's text and folder), so a
// run built through the cache prices every step exactly as one built alone. Thread-safe.
class RunCache {
 public:
  std::shared_ptr<Catalog> catalog(const std::vector<std::string>& dirs);
  // The cost model of `node` for runs whose catalog is catalog(dirs).
  std::shared_ptr<const CostModel> cost_model(const ConfigNode& node,
                                              const std::vector<std::string>& dirs);
  // file_fnv1a64(path), computed once per path (the runs of a study read the same files).
  std::string file_hash(const std::string& path);

 private:
  std::mutex mutex_;
  std::map<std::vector<std::string>, std::shared_ptr<Catalog>> catalogs_;
  std::map<std::string, std::shared_ptr<const CostModel>> cost_models_;
  std::map<std::string, std::string> file_hashes_;
};

}  // namespace servesim
