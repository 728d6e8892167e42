#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "sim/config/run_config.hpp"
#include "sim/engine/cost_model.hpp"
#include "sim/engine/engine.hpp"
#include "sim/engine/replica.hpp"
#include "sim/engine/router.hpp"
#include "sim/engine/workload.hpp"
#include "sim/hardware/catalog.hpp"

namespace servesim {

// Everything one run needs, built and validated from a RunConfig before simulated time 0.
struct BuiltRun {
  RunConfig config;
  std::shared_ptr<Catalog> catalog;  // owns the specs the fleet points at (declared first: the
                                     // cost model's tables key on their addresses)
  Fleet fleet;
  std::unique_ptr<Router> router;
  std::unique_ptr<Router> decode_router;  // disaggregated fleets only
  std::shared_ptr<const CostModel> cost_model;
  std::unique_ptr<Workload> workload;
};

// What the runs of one study (a sweep's points) share: catalogs and cost models, which are
// immutable and thread-safe once built. A cost model is shared only with the catalog it was
// built beside, since its per-replica tables key on that catalog's spec addresses. Entries are
// keyed by what builds them (catalog folders; the cost_model section's text and file), so a
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

// The config a run ran with, as YAML: the file after its overrides, with `name`, `seed` (the
// --seed override included) and `config_dir` (the absolute folder its relative paths resolve
// against) written in, so that `simulate config.yaml` from the run's output folder reruns it.
std::string resolved_config_yaml(const RunConfig& config);

// One value given on the command line: "key.path=value" and the flag that gave it (errors on the
// value name the flag: "--set …", or "--vary …" for a sweep point).
struct ConfigOverride {
  std::string flag;
  std::string assignment;
};

// Loads a config file, applies --set overrides and the seed override, validates everything.
RunConfig load_run_config(const std::string& path, const std::vector<std::string>& overrides,
                          std::optional<std::uint64_t> seed);
// The same with each override's flag: what `simulate --set` does is this with "--set" each.
RunConfig load_run_config(const std::string& path, const std::vector<ConfigOverride>& overrides,
                          std::optional<std::uint64_t> seed);
// Builds `config`'s run; with a cache, its catalog and cost model come from (and go into) it.
BuiltRun build_run(const RunConfig& config, RunCache* cache = nullptr);

struct RunOptions {
  std::string out_dir;        // "" = the config's output.dir or out/<name>
  bool write_outputs = true;  // false: summary only, in memory (sweeps, tests)
  bool progress = false;      // progress line on stderr
  // > 0: run twice more (no outputs) with every step time × (1 ± sensitivity_delta) and add
  // summary["sensitivity"]: per latency metric, the % change per 1% of step-time error (gain).
  double sensitivity_delta = 0;
  RunCache* cache = nullptr;  // where the sensitivity runs get their catalog and cost model
  // When set and true, the run stops at the next event and its outputs are the requests
  // simulated so far, summary["complete"] = false (see stop_on_signals).
  const std::atomic<bool>* stop = nullptr;
};

// Installs SIGINT and SIGTERM handlers that set the returned flag (a second signal ends the
// process at once, as without them). received_stop_signal() is the signal that set it, or 0.
const std::atomic<bool>* stop_on_signals();
int received_stop_signal();

// Runs a built run to the end. Returns summary.json's document (also written when outputs are).
nlohmann::json execute_run(BuiltRun& run, const RunOptions& options);

// Human-readable summary table.
std::string format_summary_table(const nlohmann::json& summary);

// Runs `body` as a tool's main: InputError → message on stderr, exit 1; other exceptions →
// "internal error", exit 3.
int guarded_main(const std::function<int()>& body);

// A CLI11 check for an integer option: decimal digits only, within [lo, hi]. CLI11's own
// NonNegativeNumber lets an unsigned option saturate (a 23-digit seed became 2^64 − 1) and words
// its error with the double range.
CLI::Validator whole_number_in(std::uint64_t lo, std::uint64_t hi);
// A CLI11 check for a real-valued option: a finite number within [lo, hi]. CLI::Range lets nan
// through (every comparison with it is false).
CLI::Validator number_in(double lo, double hi);
// A CLI11 check for a path or name option: something other than blanks (an empty value would
// otherwise read as the option left out).
CLI::Validator nonblank(const std::string& what);

// A tool's main: parses the command line (--help exits 0, a usage error exits 2 with CLI11's
// message), then runs `body` under guarded_main.
int tool_main(CLI::App& app, int argc, char** argv, const std::function<int()>& body);

}  // namespace servesim
