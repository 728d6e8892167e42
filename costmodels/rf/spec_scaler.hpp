#pragma once

#include <array>
#include <optional>

#include "costmodels/analytical/layer_pricer.hpp"
#include "costmodels/common/layer_shapes.hpp"
#include "costmodels/profile/vidur_profile.hpp"
#include "sim/hardware/gpu_spec.hpp"

namespace servesim {

// Moves an op time measured on a home GPU to a target GPU — the "spec-scaled RF", the most
// charitable thing an RF can do off its profile (`costmodel transfer` scores it). Per op and token
// count:
//   roofline:   ratio = R_target / R_home, R = max(FLOPs / peak, bytes / bandwidth) from the
//               datasheets (BF16 dense peak, HBM bandwidth). Branch-aware: a cell compute-bound on
//               both GPUs gets the compute ratio peak_home/peak_target, a memory-bound one the
//               memory ratio BW_home/BW_target; light ops and the embedding are memory-bound.
//   analytical: ratio = A_target / A_home, A = the analytical model's time of the op on each
//               GPU (LayerPricer::vidur_ops_ns). This imports the analytical model's mechanisms
//               into the RF, so it is a hybrid, not a pure RF baseline.
// All-reduces scale by the NVLink bandwidth ratio (PCIe when a GPU has no NVLink).
// Holds copies; the GPU and model specs must outlive it. Immutable; thread-safe.
class SpecScaler {
 public:
  enum class Mode { kRoofline, kAnalytical };
  SpecScaler(const GpuSpec& home, const GpuSpec& target, const ModelSpec& model, int tp, Mode mode);

  // target time / home time of one layer's `op` at `tokens` tokens.
  double ratio(VidurOp op, double tokens) const;
  // ratio() of every op at once (one analytical evaluation per GPU).
  std::array<double, kNumVidurOps> ratios(double tokens) const;
  double collective_ratio() const { return collective_ratio_; }
  Mode mode() const { return mode_; }

 private:
  double roofline_ratio(VidurOp op, double tokens) const;

  Mode mode_;
  LayerShapes shapes_;
  double peak_home_ = 0;  // FLOP/ns
  double peak_target_ = 0;
  double bw_home_ = 0;  // bytes/ns
  double bw_target_ = 0;
  double collective_ratio_ = 1;
  std::optional<LayerPricer> home_pricer_;  // analytical mode only
  std::optional<LayerPricer> target_pricer_;
};

}  // namespace servesim
