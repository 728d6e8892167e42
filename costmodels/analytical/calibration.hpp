#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "costmodels/analytical/analytical_params.hpp"
#include "costmodels/analytical/profile_validation.hpp"
#include "costmodels/profile/vidur_profile.hpp"
#include "sim/hardware/gpu_spec.hpp"
#include "sim/hardware/link_network.hpp"

namespace servesim {

// What `costmodel fit` produced: the updated constants, a YAML `analytical:` section recording
// each fitted constant with its source and the rows it used, and a human summary.
struct FitReport {
  AnalyticalParams params;
  std::vector<std::string> yaml_fitted;  // lines of the `fitted:` record
  std::string text;
  // The light kernels the rows refitted; the others keep the start's constants.
  std::vector<LightKernel> fitted_light;
  bool refit(LightKernel k) const {
    return std::find(fitted_light.begin(), fitted_light.end(), k) != fitted_light.end();
  }
  void merge(const FitReport& later);
};

// Fits the home-profile constants on Vidur mlp.csv rows (only on the home GPU, so that every
// other GPU tests the declared transfer rules; costmodels/README.md):
//   light kernels (embedding, norm, RoPE, activation, add): floor + bytes/(fraction·BW) by
//     relative-error least squares (Eigen);
//   GEMM: one per-SKU efficiency (tc_util·η_duty·f_clk) and a launch floor, by minimising the
//     MAPE of the four projection GEMMs over a grid, every other term on.
// `data` pairs each file path with its rows; `models[i]` is the model of data[i].
FitReport fit_home_constants(
    const std::vector<std::pair<std::string, std::vector<VidurMlpRow>>>& data,
    const std::vector<ModelSpec>& models, const GpuSpec& gpu, const AnalyticalParams& start);

// Fits NVLink/PCIe achieved efficiency and the per-hop latency of the ring all-reduce on the
// single-node rows of <dir>/<gpu>_{dgx,pairwise_nvlink}/all_reduce.csv (relative least squares).
FitReport fit_network_constants(const std::string& network_dir, const GpuSpec& gpu,
                                const AnalyticalParams& start);

// All-reduce accuracy per (file, worker count) on single-node rows.
struct NetworkValidation {
  struct Slice {
    std::string file;
    std::string topology;
    int workers = 0;
    ErrorStats stats, small, large;         // all rows, those below / from 1 MiB
    std::map<std::string, int> algorithms;  // rows per algorithm the model chose
  };
  std::vector<Slice> slices;
  std::string interconnect;  // GpuSpec::interconnect_summary of the GPU checked
};
NetworkValidation validate_network(const std::string& network_dir, const GpuSpec& gpu,
                                   const AnalyticalParams& params);
// Whether `network_dir` (as validate_network reads it) holds an all_reduce.csv of `gpu`.
bool has_network_profile(const std::string& network_dir, const GpuSpec& gpu);

// One GPU-to-GPU KV copy as disaggregated serving prices it (LinkNetwork with `cluster`: NVLink or
// its bridge inside a node, the NICs between nodes) against Vidur's send_recv.csv beside the
// all_reduce.csv files validate_network reads: rows with devices_per_node 2 are one node, 1 two
// nodes. Per file and placement, all rows and those below / from 1 MiB.
struct KvTransferValidation {
  struct Slice {
    std::string file;
    std::string topology;
    bool same_node = true;
    ErrorStats all, small, large;
  };
  std::vector<Slice> slices;
};
KvTransferValidation validate_kv_transfer(const std::string& network_dir, const GpuSpec& gpu,
                                          const ClusterSpec& cluster);

// Replaces (or appends) the top-level `analytical:` section of a YAML file with the report's
// constants, keeping every other line of the file as it was, and the `fitted:` records of
// constants this report did not refit (e.g. the collectives of a fit without --network). A file
// that does not exist yet starts from `template_yaml` (the GPU's own hardware file), so it is a
// complete hardware file.
void write_fitted_section(const std::string& path, const FitReport& report,
                          const std::string& template_yaml);
// The `analytical:` section text for `params` (with the fitted record).
std::string analytical_section_yaml(const AnalyticalParams& params,
                                    const std::vector<std::string>& fitted);

}  // namespace servesim
