#pragma once

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "sim/config/config_node.hpp"
#include "sim/hardware/gpu_spec.hpp"

namespace servesim {

// ASCII lower case: how the catalog (and the tools that match names like it) compare names.
std::string lowercase(std::string s);

// Finds and loads hardware files (<dir>/hardware/*.yaml) and model files
// (<dir>/models/<org>/<name>.yaml) by name. GPU names match the file stem, the `name:` key or
// any alias, case-insensitively; model names are Hugging Face ids, matched exactly first, then
// case-insensitively. Directories are searched in order; the first match wins.
// Returned references stay valid for the catalog's lifetime. Thread-safe: the files are indexed
// at construction and the lookups that load a spec on first use take a lock, so several runs
// (a sweep's points) can share one catalog.
class Catalog {
 public:
  explicit Catalog(std::vector<std::string> dirs);
  // The project's own configs/ folder (compiled in), then $SERVESIM_CATALOG if set.
  static std::vector<std::string> default_dirs();
  // The catalog name of GPU `name` in the default folders, from one catalog per process
  // (indexed on first use; thread-safe): for files that only name GPUs (engine profiles), so
  // reading one does not index every hardware file again.
  static std::string default_gpu_name(const std::string& name, const ConfigNode& where);

  // `where` positions the error when the name is unknown (the error lists the known names).
  const GpuSpec& gpu(const std::string& name, const ConfigNode& where);
  // A model is a Hugging Face id with a catalog file, or a path ending in .json to the model's
  // config.json (relative to `where`'s file), read as hf_config_yaml writes it.
  const ModelSpec& model(const std::string& name, const ConfigNode& where);
  std::vector<std::string> gpu_names() const;
  std::vector<std::string> model_names() const;
  // The GPUs of this catalog in `gpu`'s validation class (the same arch, and GDDR or HBM alike)
  // whose prices were scored on a measurement (non-empty `validated`): `gpu` alone when it was
  // measured itself; empty when nothing of its class ever was. For a GPU not measured it loads
  // every hardware file once (costly next to a short run); one that does not parse is no
  // evidence and is passed over (a run that uses it fails on it).
  std::vector<std::string> class_checked_on(const GpuSpec& gpu);

  // Parse one file (exposed for tests and tools that take a path).
  static GpuSpec load_gpu(const ConfigNode& file);
  static ModelSpec load_model(const ConfigNode& file);

 private:
  void index();
  std::vector<std::string> dirs_;
  std::map<std::string, std::string> gpu_files_;    // lower-case name/alias -> path
  std::map<std::string, std::string> model_files_;  // HF id -> path
  std::map<std::string, const GpuSpec*> gpus_;      // path -> loaded
  std::map<std::string, const ModelSpec*> models_;
  std::deque<GpuSpec> gpu_store_;
  std::deque<ModelSpec> model_store_;
  std::vector<std::string> gpu_display_;  // canonical names for messages
  // Guards gpus_, models_ and the stores; held by pointer so that a catalog stays movable.
  std::unique_ptr<std::mutex> mutex_ = std::make_unique<std::mutex>();
};

}  // namespace servesim
