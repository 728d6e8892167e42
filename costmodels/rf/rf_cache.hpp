#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "costmodels/rf/rf_tables.hpp"
#include "sim/util/fnv_hash.hpp"

namespace servesim {

// On-disk cache of trained RfTables, one HDF5 file per key: <dir>/rf-<16 hex digits>.h5.
// The key hashes everything the tables depend on (profile bytes, TP, training options, XGBoost
// version, file format), so a changed profile is a different file; the key is also stored in
// the file and checked on load. A missing, unreadable or mismatched file is a miss, never an
// error: the caller retrains and stores again. The stored step functions are the forests
// themselves evaluated exactly on every integer input (see StepFunction), so nothing is lost by
// not keeping the XGBoost boosters.
// Threading: distinct keys may be loaded and stored concurrently; a store writes a temporary
// file and renames it, so a concurrent reader sees the old file or the new one.
class RfCache {
 public:
  // `dir` empty: caching off (load always misses, store does nothing).
  explicit RfCache(std::string dir) : dir_(std::move(dir)) {}
  // $XDG_CACHE_HOME/servesim, else $HOME/.cache/servesim, else "" (off).
  static std::string default_dir();

  const std::string& dir() const { return dir_; }
  bool enabled() const { return !dir_.empty(); }
  std::string path(std::uint64_t key) const;
  std::optional<RfTables> load(std::uint64_t key) const;
  // Returns false when the file could not be written (the cache is an optimisation).
  bool store(std::uint64_t key, const RfTables& tables) const;

 private:
  std::string dir_;
};

}  // namespace servesim
