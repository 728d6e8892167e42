#include "costmodels/analytical/profile_validation.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "costmodels/analytical/layer_pricer.hpp"
#include "costmodels/common/layer_shapes.hpp"
#include "sim/config/input_error.hpp"
#include "sim/hardware/catalog.hpp"
#include "sim/hardware/replica_spec.hpp"
#include "sim/util/sample_stats.hpp"
#include "sim/util/units.hpp"

namespace servesim {

void ErrorStats::add(double predicted, double measured) {
  if (!(measured > 0) || !std::isfinite(predicted)) return;
  const double e = (predicted - measured) / measured;
  abs_sum += std::abs(e);
  signed_sum += e;
  ++n;
  measured_sum += measured;
  abs_err_sum += std::abs(predicted - measured);
}

void ErrorStats::merge(const ErrorStats& o) {
  abs_sum += o.abs_sum;
  signed_sum += o.signed_sum;
  n += o.n;
  measured_sum += o.measured_sum;
  abs_err_sum += o.abs_err_sum;
}

void ProfileValidation::Slice::merge(const Slice& o) {
  for (std::size_t i = 0; i < kNumVidurOps; ++i) {
    ops[i].merge(o.ops[i]);
    decode_ops[i].merge(o.decode_ops[i]);
    prefill_ops[i].merge(o.prefill_ops[i]);
  }
  block.merge(o.block);
  decode_block.merge(o.decode_block);
  prefill_block.merge(o.prefill_block);
  offset_block.merge(o.offset_block);
  gemm_block.merge(o.gemm_block);
  offset_scale = 0;
}

double ProfileValidation::Slice::time_share(std::size_t op) const {
  return block.measured_sum > 0 ? 100 * ops[op].measured_sum / block.measured_sum : 0;
}

double ProfileValidation::Slice::block_error_points(std::size_t op) const {
  return block.measured_sum > 0 ? 100 * ops[op].abs_err_sum / block.measured_sum : 0;
}

double ProfileValidation::Slice::light_time_share() const {
  double s = 0;
  for (std::size_t i = 0; i < kNumVidurOps; ++i) {
    if (!is_projection_gemm(static_cast<VidurOp>(i))) s += time_share(i);
  }
  return s;
}

double ProfileValidation::Slice::light_error_points() const {
  double s = 0;
  for (std::size_t i = 0; i < kNumVidurOps; ++i) {
    if (!is_projection_gemm(static_cast<VidurOp>(i))) s += block_error_points(i);
  }
  return s;
}

ModelSpec model_from_profile(const VidurMlpRow& row, const std::string& name,
                             const ModelSpec* catalog_model) {
  ModelSpec m;
  if (catalog_model != nullptr) m = *catalog_model;
  m.name = name;
  m.hidden_size = row.n_embd;
  m.num_heads = row.n_head;
  m.num_kv_heads = row.n_kv_head;
  m.head_dim = row.n_embd / row.n_head;
  m.intermediate_size = row.n_expanded_embd;
  m.vocab_size = row.vocab_size;
  m.gated_mlp = row.gated_mlp;
  if (m.num_layers == 0) m.num_layers = 1;
  return m;
}

VidurOpShape vidur_op_shape(const ModelSpec& m, int tp, VidurOp op, int tokens) {
  // The per-GPU widths as the model prices them (rounded up, at least one KV head a rank).
  const LayerShapes s = LayerShapes::make(m, tp);
  const auto q = static_cast<long long>(s.attn_width);
  const auto kv = static_cast<long long>(s.kv_heads * s.head_dim);
  const auto inter = static_cast<long long>(s.inter);
  const long long h = m.hidden_size;
  const long long op_id = static_cast<long long>(op);
  switch (op) {
    case VidurOp::kEmb:  // a vocab-parallel lookup: each rank holds vocab/tp rows
      return {op_id, tokens, h, static_cast<long long>(s.vocab), 0, 0};
    case VidurOp::kInputLayernorm:
    case VidurOp::kPostAttentionLayernorm:
      return {op_id, tokens, h, m.layer_norm ? 1 : 0, 0, 0};
    case VidurOp::kAdd:
      return {op_id, tokens, h, 0, 0, 0};
    case VidurOp::kAttnPreProj:  // one fused GEMM of width q + 2 kv, with or without a bias
      return {op_id, tokens, h, q + 2 * kv, m.attention_bias ? 1 : 0, 0};
    case VidurOp::kAttnRope:
      return {op_id, tokens, h, q, kv, m.head_dim};
    case VidurOp::kAttnPostProj:
      return {op_id, tokens, q, h, m.attention_bias ? 1 : 0, 0};
    case VidurOp::kMlpUpProj:
      return {op_id, tokens, h, inter, m.gated_mlp ? 1 : 0, 0};
    case VidurOp::kMlpAct:
      return {op_id, tokens, inter, m.gated_mlp ? 1 : 0, 0, 0};
    case VidurOp::kMlpDownProj:
      return {op_id, tokens, inter, h, 0, 0};
    case VidurOp::kCount:
      break;
  }
  return {op_id, tokens, 0, 0, 0, 0};
}

ProfileValidation validate_profile(const std::vector<VidurMlpRow>& rows, const std::string& name,
                                   const GpuSpec& gpu, const ModelSpec* catalog_model,
                                   const AnalyticalParams& params, const AnalyticalTerms& terms,
                                   bool keep_residuals) {
  ProfileValidation v;
  v.model = name;
  if (rows.empty()) return v;
  const ModelSpec model = model_from_profile(rows.front(), name, catalog_model);
  std::map<int, ProfileValidation::Slice> per_tp;
  std::map<int, std::vector<std::pair<double, double>>> blocks;  // per TP: (predicted, measured)
  std::map<int, LayerPricer> pricers;
  for (const VidurMlpRow& row : rows) {
    auto it = pricers.find(row.tp);
    if (it == pricers.end()) {
      ReplicaSpec r;
      r.gpu = &gpu;
      r.model = &model;
      r.tp = row.tp;
      it = pricers.emplace(row.tp, LayerPricer(r, params, terms)).first;
    }
    const auto pred = it->second.vidur_ops_ns(row.num_tokens);
    ProfileValidation::Slice& s = per_tp[row.tp];
    s.tp = row.tp;
    const bool decode = row.num_tokens <= 128;
    double block_pred = 0;
    double block_meas = 0;
    double gemm_only_pred = 0;  // the block with the light ops at their measured times
    for (std::size_t i = 0; i < kNumVidurOps; ++i) {
      const double meas = row.ms[i] * kNsPerMsF;
      if (!std::isfinite(meas) || !std::isfinite(pred[i])) continue;
      s.ops[i].add(pred[i], meas);
      (decode ? s.decode_ops : s.prefill_ops)[i].add(pred[i], meas);
      if (keep_residuals) {
        const auto op = static_cast<VidurOp>(i);
        v.residuals.push_back({row.line, row.tp, row.num_tokens, op, pred[i], meas,
                               vidur_op_shape(model, row.tp, op, row.num_tokens)});
      }
      block_pred += pred[i];
      block_meas += meas;
      gemm_only_pred += is_projection_gemm(static_cast<VidurOp>(i)) ? pred[i] : meas;
    }
    s.block.add(block_pred, block_meas);
    s.gemm_block.add(gemm_only_pred, block_meas);
    (decode ? s.decode_block : s.prefill_block).add(block_pred, block_meas);
    if (block_pred > 0 && block_meas > 0) blocks[row.tp].emplace_back(block_pred, block_meas);
  }
  for (auto& [tp, s] : per_tp) {
    std::vector<std::pair<double, double>> ratio_weight;
    for (const auto& [p, m] : blocks[tp]) ratio_weight.emplace_back(m / p, p / m);
    if (ratio_weight.empty()) continue;
    s.offset_scale = weighted_median(std::move(ratio_weight));
    for (const auto& [p, m] : blocks[tp]) s.offset_block.add(s.offset_scale * p, m);
  }
  ProfileValidation::Slice all;
  for (const auto& [tp, s] : per_tp) all.merge(s);
  v.slices.push_back(all);
  for (const auto& [tp, s] : per_tp) v.slices.push_back(s);
  return v;
}

ProfileReproducibility profile_reproducibility(const std::vector<ProfileValidation>& results) {
  // Per shape, its times and the index into `results` of the profile each comes from.
  std::map<VidurOpShape, std::vector<const ProfileValidation::Residual*>> by_shape;
  std::map<VidurOpShape, std::vector<std::size_t>> profile_of;
  for (std::size_t f = 0; f < results.size(); ++f) {
    for (const auto& e : results[f].residuals) {
      // A time of 0 is no measurement (and no scoring counts it): it would pull the best
      // constant to 0.
      if (e.measured_ns <= 0) continue;
      by_shape[e.shape].push_back(&e);
      profile_of[e.shape].push_back(f);
    }
  }
  ProfileReproducibility out;
  for (const auto& [shape, times] : by_shape) {
    if (times.size() < 2) continue;
    const VidurOp op = times.front()->op;
    const bool gemm = is_projection_gemm(op);
    const bool norm_add = op == VidurOp::kInputLayernorm ||
                          op == VidurOp::kPostAttentionLayernorm || op == VidurOp::kAdd;
    const std::vector<std::size_t>& profile = profile_of[shape];
    for (std::size_t i = 0; (gemm || norm_add) && i < times.size(); ++i) {
      for (std::size_t j = i + 1; j < times.size(); ++j) {
        const auto* a = times[i];
        const auto* b = times[j];
        // One "file" here is one model's TP degree (an mlp.csv holds every degree of a model).
        const bool same_file = a->tp == b->tp && profile[i] == profile[j];
        if (same_file ||
            std::min(a->measured_ns, b->measured_ns) < ProfileReproducibility::kBetweenMinNs) {
          continue;
        }
        auto& between = out.between[static_cast<std::size_t>(
            gemm ? ProfileReproducibility::Kind::kGemm : ProfileReproducibility::Kind::kNormAdd)];
        if (a->tp == b->tp) {
          between.equal_tp.push_back(std::max(a->measured_ns, b->measured_ns) /
                                         std::min(a->measured_ns, b->measured_ns) -
                                     1);
        } else {
          const auto* lo = a->tp < b->tp ? a : b;
          const auto* hi = a->tp < b->tp ? b : a;
          between.across_tp[{lo->tp, hi->tp}].push_back(hi->measured_ns / lo->measured_ns - 1);
        }
      }
    }
    ProfileReproducibility::Op& o = out.ops[static_cast<std::size_t>(times.front()->op)];
    ++o.shapes;
    // The constant with the least Σ|c − t|/t over the shape's times: the median of the times
    // weighted by 1/t.
    std::vector<std::pair<double, double>> time_weight;
    for (const auto* e : times) time_weight.emplace_back(e->measured_ns, 1 / e->measured_ns);
    const double best = weighted_median(std::move(time_weight));
    for (const auto* e : times) {
      o.floor.add(best, e->measured_ns);
      o.model.add(e->predicted_ns, e->measured_ns);
    }
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> find_mlp_profiles(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<std::pair<std::string, std::string>> out;
  if (!is_folder(dir)) return out;
  for (const auto& f : files_in(dir, "mlp.csv", true, "--profiles")) {
    if (f.filename() != "mlp.csv") continue;
    const fs::path model_dir = f.parent_path();
    const std::string id =
        model_dir.parent_path().filename().string() + "/" + model_dir.filename().string();
    out.emplace_back(id, f.string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

GpuProfiles find_gpu_profiles(const std::string& dir, const std::vector<std::string>& gpu_names,
                              const std::string& who) {
  namespace fs = std::filesystem;
  if (!is_folder(dir)) {
    throw InputError(who + ": '" + dir +
                     "' is not a folder (expected Vidur's profiling or profiling/compute folder)");
  }
  std::vector<fs::path> candidates;
  for (const std::string& g : gpu_names) {
    for (const std::string& name : {g, lowercase(g)}) {
      candidates.push_back(fs::path(dir) / name);
      candidates.push_back(fs::path(dir) / "compute" / name);
    }
  }
  candidates.push_back(dir);
  // DIR itself must be named after the GPU: another GPU's folder would be scored as this one.
  fs::path norm = absolute_path(dir);
  if (norm.filename().empty()) norm = norm.parent_path();  // "…/a100/" → "…/a100"
  const std::string own = lowercase(norm.filename().string());
  bool named = false;
  for (const std::string& g : gpu_names) named = named || lowercase(g) == own;
  for (const fs::path& c : candidates) {
    if (!is_folder(c)) continue;
    GpuProfiles found{c.string(), {}};
    for (auto& [id, path] : find_mlp_profiles(c.string())) {
      const fs::path rel = fs::path(path).lexically_relative(c);
      if (std::distance(rel.begin(), rel.end()) == 3) found.files.emplace_back(id, path);
    }
    if (found.files.empty()) continue;
    if (c == fs::path(dir) && !named) {
      throw InputError(fmt::format(
          "{}: '{}' holds <org>/<model>/mlp.csv itself, but its name '{}' is not the GPU's ({}): "
          "expected the folder of that GPU's profiles, named after it, or the folder above it",
          who, dir, own, gpu_names.empty() ? std::string("?") : gpu_names.front()));
    }
    return found;
  }
  std::string names;
  std::vector<std::string> seen;
  for (const std::string& g : gpu_names) {
    if (std::find(seen.begin(), seen.end(), lowercase(g)) != seen.end()) continue;
    seen.push_back(lowercase(g));
    names += (names.empty() ? "" : " or ") + g;
  }
  throw InputError(who + ": no mlp.csv for GPU " + names + " under " + dir +
                   " (expected <dir>/<gpu>/<org>/<model>/mlp.csv)");
}

}  // namespace servesim
