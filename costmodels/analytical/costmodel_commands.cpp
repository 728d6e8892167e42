#include "costmodels/analytical/costmodel_commands.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <tbb/parallel_for.h>

#include "costmodels/analytical/analytical_cost_model.hpp"
#include "costmodels/analytical/calibration.hpp"
#include "costmodels/analytical/engine_profile.hpp"
#include "costmodels/analytical/gemm_model.hpp"
#include "costmodels/analytical/layer_pricer.hpp"
#include "costmodels/analytical/placement.hpp"
#include "costmodels/analytical/power_model.hpp"
#include "costmodels/analytical/profile_validation.hpp"
#include "costmodels/common/layer_shapes.hpp"
#include "costmodels/registry.hpp"
#include "sim/config/input_error.hpp"
#include "sim/hardware/catalog.hpp"
#include "sim/util/sample_stats.hpp"

namespace servesim {
namespace fs = std::filesystem;
namespace {

struct Context {
  Catalog catalog{Catalog::default_dirs()};
  GpuSpec gpu;
  AnalyticalParams params;
  std::shared_ptr<const EngineProfile> engine;  // --engine, applied to params; null when unset
  std::vector<std::pair<std::string, std::string>> profiles;  // model id, path

  // "GPU h100-sxm" or "GPU h100-sxm, engine vidur-profiler" for the text reports' first line.
  std::string title() const {
    if (!engine) return "GPU " + gpu.name;
    return fmt::format("GPU {}, engine {}{}", gpu.name, engine->name,
                       engine->covers(gpu) ? "" : " (no constants for this GPU)");
  }
  // The JSON reports' "gpu", "engine" and whether it has constants for the GPU
  // ("engine_applies"); both null without --engine.
  void stamp(nlohmann::json& j) const {
    j["gpu"] = gpu.name;
    j["engine"] = engine ? nlohmann::json(engine->name) : nlohmann::json(nullptr);
    j["engine_applies"] = engine ? nlohmann::json(engine->covers(gpu)) : nlohmann::json(nullptr);
  }
};

Context load(const CostmodelArgs& a, bool need_profiles) {
  Context c;
  const ConfigNode where = ConfigNode::flag("--gpu");
  if (!a.hardware_file.empty()) {
    c.gpu = Catalog::load_gpu(ConfigNode::load_file(a.hardware_file));
    // Another GPU's constants would price these rows (and fit --write would file them under it).
    if (!c.gpu.answers_to(a.gpu)) {
      throw InputError(
          fmt::format("--hardware: {} describes {}, not --gpu {} (expected a file "
                      "whose name or aliases include it)",
                      a.hardware_file, c.gpu.name, a.gpu));
    }
  } else {
    c.gpu = c.catalog.gpu(a.gpu, where);
  }
  c.params = AnalyticalParams::for_gpu(c.gpu);
  if (!a.engine.empty()) {
    // An inline map when it looks like one; else a name or path, quoted so that YAML's words
    // (null, ~, a comment) stay the name they look like.
    std::string text = a.engine;
    if (text.find_first_not_of(" \t") == std::string::npos ||
        text[text.find_first_not_of(" \t")] != '{') {
      std::string quoted = "'";
      for (const char ch : text) quoted += ch == '\'' ? std::string("''") : std::string(1, ch);
      text = quoted + "'";
    }
    c.engine = EngineProfile::load(ConfigNode::parse(text, "--engine"));
    c.engine->apply(c.gpu, c.params);
  }
  if (need_profiles) {
    // Only this GPU's rows: DIR/<--gpu>, DIR/<catalog name or alias>, or DIR if it is the GPU's
    // own folder (never every GPU below DIR).
    std::vector<std::string> names = c.gpu.names();
    names.insert(names.begin(), a.gpu);
    for (auto& [id, path] : find_gpu_profiles(a.profiles, names, "--profiles").files) {
      if (a.model.empty() || lowercase(a.model) == lowercase(id)) c.profiles.emplace_back(id, path);
    }
    if (c.profiles.empty()) {
      throw InputError("--profiles: no mlp.csv for GPU '" + a.gpu + "'" +
                       (a.model.empty() ? "" : " and model '" + a.model + "'") + " under " +
                       a.profiles);
    }
  }
  return c;
}

const ModelSpec* catalog_model(Catalog& catalog, const std::string& id) {
  for (const std::string& n : catalog.model_names()) {
    if (lowercase(n) == lowercase(id)) return &catalog.model(n, ConfigNode::flag("--model"));
  }
  return nullptr;
}

// The profiled models the catalog lacks: their dimensions come from the profile rows, but not
// the norm kind or the block layout, which then take model_from_profile's defaults.
std::vector<std::string> uncataloged(Context& c) {
  std::vector<std::string> ids;
  for (const auto& [id, path] : c.profiles) {
    if (catalog_model(c.catalog, id) == nullptr) ids.push_back(id);
  }
  return ids;
}

std::string uncataloged_text(Context& c) {
  std::string out;
  for (const std::string& id : uncataloged(c)) {
    out += fmt::format(
        "note: {} is not in the catalog: priced with RMSNorm and a serial attention-then-MLP "
        "block (add configs/models/{}.yaml for its own)\n",
        id, id);
  }
  return out;
}

std::vector<ProfileValidation> validate_all(Context& c, const AnalyticalParams& params,
                                            const AnalyticalTerms& terms,
                                            bool keep_residuals = false) {
  std::vector<ProfileValidation> out;
  for (const auto& [id, path] : c.profiles) {
    const auto rows = read_vidur_mlp(path);
    out.push_back(validate_profile(rows, id, c.gpu, catalog_model(c.catalog, id), params, terms,
                                   keep_residuals));
  }
  return out;
}

// One line per (profile row, op): where the model is wrong, row by row.
void write_residuals(const std::string& path, const std::vector<ProfileValidation>& results) {
  std::ofstream f(path);
  if (!f) throw InputError("--rows: cannot write '" + path + "'");
  f << "model,line,tp,num_tokens,op,predicted_ms,measured_ms,error_pct\n";
  for (const auto& r : results) {
    for (const auto& e : r.residuals) {
      f << fmt::format("{},{},{},{},{},{:.6f},{:.6f},{:.3f}\n", r.model, e.line, e.tp, e.tokens,
                       vidur_op_name(e.op), e.predicted_ns * 1e-6, e.measured_ns * 1e-6,
                       100 * (e.predicted_ns - e.measured_ns) / e.measured_ns);
    }
  }
  if (!f) throw InputError("--rows: write to '" + path + "' failed");
}

nlohmann::json slice_json(const ProfileValidation::Slice& s) {
  nlohmann::json j;
  for (std::size_t i = 0; i < kNumVidurOps; ++i) {
    if (s.ops[i].n == 0) continue;
    j["ops"][std::string(vidur_op_name(static_cast<VidurOp>(i)))] = {
        {"mape", s.ops[i].mape()},
        {"mean_signed_error", s.ops[i].mspe()},
        {"n", s.ops[i].n},
        {"decode_mape", s.decode_ops[i].mape()},
        {"prefill_mape", s.prefill_ops[i].mape()},
        {"time_weighted_error", s.ops[i].wape()},
        {"share_of_block_time", s.time_share(i)},
        {"block_error_points", s.block_error_points(i)}};
  }
  j["light_ops"] = {{"share_of_block_time", s.light_time_share()},
                    {"block_error_points", s.light_error_points()}};
  j["mlp_block"] = {{"mape", s.block.mape()},
                    {"mean_signed_error", s.block.mspe()},
                    {"decode_mape", s.decode_block.mape()},
                    {"prefill_mape", s.prefill_block.mape()},
                    {"time_weighted_error", s.block.wape()},
                    {"n", s.block.n},
                    {"gemms_alone_mape", s.gemm_block.mape()}};
  // One scale per file (TP slices give theirs; merged slices hold one per file: null).
  j["mlp_block"]["file_offset"] = {
      {"scale", s.offset_scale > 0 ? nlohmann::json(s.offset_scale) : nlohmann::json()},
      {"mape", s.offset_block.n > 0 ? nlohmann::json(s.offset_block.mape()) : nlohmann::json()}};
  return j;
}

// The block line, then one line per op: MAPE and signed error (all, decode-like,
// prefill-like), the op's share of the block's measured time and its |error| in points of block
// time (what judges a light op: its decode MAPE is bounded by the profile's 1 µs resolution).
std::string slice_text(const std::string& label, const ProfileValidation::Slice& s) {
  std::string out = fmt::format(
      "{:<44} block {:6.2f}% (signed {:+6.2f}%, decode {:6.2f}%, "
      "prefill {:6.2f}%, time-weighted {:5.2f}%, n={})\n",
      label, s.block.mape(), s.block.mspe(), s.decode_block.mape(), s.prefill_block.mape(),
      s.block.wape(), s.block.n);
  out += fmt::format("    {:<26} {:>8} {:>8} {:>8} {:>8} {:>9} {:>10}\n", "op", "MAPE", "signed",
                     "decode", "prefill", "of block", "err pts");
  for (std::size_t i = 0; i < kNumVidurOps; ++i) {
    if (s.ops[i].n == 0) continue;
    out += fmt::format("    {:<26} {:7.2f}% {:+7.2f}% {:7.2f}% {:7.2f}% {:8.1f}% {:10.2f}\n",
                       vidur_op_name(static_cast<VidurOp>(i)), s.ops[i].mape(), s.ops[i].mspe(),
                       s.decode_ops[i].mape(), s.prefill_ops[i].mape(), s.time_share(i),
                       s.block_error_points(i));
  }
  out += fmt::format(
      "    light ops (all but the four GEMMs): {:.1f}% of block time, {:.2f} points of "
      "time-weighted block error at most; block with the light ops as measured (the GEMMs "
      "alone priced) {:.2f}%\n",
      s.light_time_share(), s.light_error_points(), s.gemm_block.mape());
  out += fmt::format(
      "    after one offset per model x TP (the scale that best fits each profiling run's blocks: "
      "an oracle of whole-run drift, not a model): block {}\n",
      s.offset_block.n > 0 ? fmt::format("{:.2f}%", s.offset_block.mape()) : "n/a");
  return out;
}

nlohmann::json reproducibility_json(const ProfileReproducibility& r) {
  nlohmann::json j = nlohmann::json::object();
  for (std::size_t i = 0; i < kNumVidurOps; ++i) {
    const auto& o = r.ops[i];
    if (o.shapes == 0) continue;
    j[std::string(vidur_op_name(static_cast<VidurOp>(i)))] = {{"shapes", o.shapes},
                                                              {"n", o.floor.n},
                                                              {"floor_mape", o.floor.mape()},
                                                              {"model_mape", o.model.mape()}};
  }
  return j;
}

// The between-files drift (ProfileReproducibility::between) in percent: every kind, with no
// pair an empty across_tp and an equal_tp of 0 pairs and a null median.
nlohmann::json between_json(const ProfileReproducibility& r) {
  nlohmann::json j = nlohmann::json::object();
  for (std::size_t k = 0; k < r.between.size(); ++k) {
    const auto& b = r.between[k];
    nlohmann::json e = {{"across_tp", nlohmann::json::array()}};
    for (const auto& [tps, v] : b.across_tp) {
      e["across_tp"].push_back({{"lower_tp", tps.first},
                                {"higher_tp", tps.second},
                                {"pairs", v.size()},
                                {"median_pct", 100 * median(v)}});
    }
    e["equal_tp"] = {{"pairs", b.equal_tp.size()},
                     {"median_pct", b.equal_tp.empty() ? nlohmann::json(nullptr)
                                                       : nlohmann::json(100 * median(b.equal_tp))}};
    j[ProfileReproducibility::kKindNames[k]] = e;
  }
  return j;
}

std::string between_text(const ProfileReproducibility& r) {
  std::string rows;
  for (std::size_t k = 0; k < r.between.size(); ++k) {
    const auto& b = r.between[k];
    if (b.empty()) continue;
    std::vector<std::string> cells;
    for (const auto& [tps, v] : b.across_tp) {
      cells.push_back(
          fmt::format("TP{}→TP{} {:+.2f}% ({})", tps.first, tps.second, 100 * median(v), v.size()));
    }
    if (!b.equal_tp.empty()) {
      cells.push_back(
          fmt::format("equal TP {:.2f}% ({})", 100 * median(b.equal_tp), b.equal_tp.size()));
    }
    rows += fmt::format("    {:<8} {}\n", ProfileReproducibility::kKindNames[k],
                        fmt::join(cells, "  "));
  }
  if (rows.empty()) return "between files: no shape was timed in two files\n";
  return fmt::format(
             "between files (times of at least {:.0f} us): one shape timed in two files (model x "
             "TP),\nthe median of time in the higher-TP file / time in the lower-TP file - 1 "
             "(pairs), and\nbetween files of equal TP (other models) of larger / smaller - 1\n",
             ProfileReproducibility::kBetweenMinNs / 1000) +
         rows;
}

// The profiles' own reproducibility beside the model's error on the same times (ops with no
// repeated shape are left out; one line saying so when no shape repeats), then between files.
std::string reproducibility_text(const ProfileReproducibility& r) {
  std::string rows;
  for (std::size_t i = 0; i < kNumVidurOps; ++i) {
    const auto& o = r.ops[i];
    if (o.shapes == 0) continue;
    rows += fmt::format("    {:<26} {:>7} {:>7} {:11.2f}% {:11.2f}%\n",
                        vidur_op_name(static_cast<VidurOp>(i)), o.shapes, o.floor.n, o.floor.mape(),
                        o.model.mape());
  }
  if (rows.empty()) return "profile reproducibility: no op was timed twice on one shape\n";
  return "profile reproducibility: ops timed more than once on one shape (a repeated row, another\n"
         "TP file, another model of equal dimensions); each time against the best single value\n"
         "for its shape (the floor for any model that prices a shape one way), and the model\n" +
         fmt::format("    {:<26} {:>7} {:>7} {:>12} {:>12}\n", "op", "shapes", "times",
                     "floor MAPE", "model MAPE") +
         rows + between_text(r);
}

}  // namespace

std::string run_validate(const CostmodelArgs& a) {
  Context c = load(a, true);
  const auto results = validate_all(c, c.params, AnalyticalTerms{}, true);
  if (!a.rows_file.empty()) write_residuals(a.rows_file, results);
  const ProfileReproducibility repro = profile_reproducibility(results);
  ProfileValidation::Slice all;
  for (const auto& r : results) all.merge(r.slices.front());
  if (a.json) {
    nlohmann::json j = slice_json(all);
    c.stamp(j);
    j["model"] = a.model.empty() ? "all" : a.model;
    for (const auto& r : results) {
      nlohmann::json m = slice_json(r.slices.front());
      for (std::size_t i = 1; i < r.slices.size(); ++i) {
        m["tp"][std::to_string(r.slices[i].tp)] = slice_json(r.slices[i]);
      }
      j["models"][r.model] = m;
    }
    j["reproducibility"] = reproducibility_json(repro);
    j["between_files"] = between_json(repro);
    j["not_in_catalog"] = uncataloged(c);
    return j.dump(2) + "\n";
  }
  std::string out = fmt::format(
      "{} — analytical model vs Vidur mlp.csv (MAPE of median "
      "times; decode-like = tokens ≤ 128)\n",
      c.title());
  for (const auto& r : results) {
    for (std::size_t i = 1; i < r.slices.size(); ++i) {
      const ProfileValidation::Slice& s = r.slices[i];
      const std::string offset =
          s.offset_block.n > 0
              ? fmt::format("x{:.3f} {:6.2f}%", s.offset_scale, s.offset_block.mape())
              : "n/a";
      out += fmt::format(
          "{:<44} TP{}  block {:6.2f}%  decode {:6.2f}%  prefill {:6.2f}%  offset {}\n", r.model,
          s.tp, s.block.mape(), s.decode_block.mape(), s.prefill_block.mape(), offset);
      if (a.per_tp) out += slice_text("", r.slices[i]);
    }
  }
  out += slice_text("ALL", all);
  out += reproducibility_text(repro);
  return out + uncataloged_text(c);
}

std::string run_ablate(const CostmodelArgs& a) {
  Context c = load(a, true);
  AnalyticalTerms terms = AnalyticalTerms::all_off();
  nlohmann::json ladder = nlohmann::json::array();
  std::string out = fmt::format("{} — additive ablation ladder (MLP-block MAPE)\n", c.title());
  auto rung = [&](const std::string& label) {
    ErrorStats block, dec, pre;
    for (const auto& r : validate_all(c, c.params, terms)) {
      block.merge(r.slices.front().block);
      dec.merge(r.slices.front().decode_block);
      pre.merge(r.slices.front().prefill_block);
    }
    ladder.push_back({{"rung", label},
                      {"mlp_block_mape", block.mape()},
                      {"decode_mape", dec.mape()},
                      {"prefill_mape", pre.mape()}});
    out += fmt::format("  {:<22} {:6.2f}%   decode {:6.2f}%   prefill {:6.2f}%\n", label,
                       block.mape(), dec.mape(), pre.mape());
  };
  rung("roofline");
  for (std::size_t i = 0; i < AnalyticalTerms::kNames.size(); ++i) {
    const std::string_view name = AnalyticalTerms::kNames[i];
    if (name == "attention" || name == "collectives" || name == "host") continue;  // not in mlp.csv
    terms[i] = true;
    rung("+ " + std::string(name));
  }
  if (a.json) {
    nlohmann::json j{{"ladder", ladder}, {"not_in_catalog", uncataloged(c)}};
    c.stamp(j);
    return j.dump(2) + "\n";
  }
  return out + uncataloged_text(c);
}

namespace {
nlohmann::json band_json(const ErrorStats& e) {
  return nlohmann::json{{"mape", e.mape()}, {"mean_signed_error", e.mspe()}, {"n", e.n}};
}
}  // namespace

std::string run_network(const CostmodelArgs& a) {
  Context c = load(a, false);
  const NetworkValidation v = validate_network(a.profiles, c.gpu, c.params);
  if (a.json) {
    nlohmann::json j;
    c.stamp(j);
    for (const auto& s : v.slices) {
      j["slices"].push_back({{"file", s.file},
                             {"topology", s.topology},
                             {"workers", s.workers},
                             {"mape", s.stats.mape()},
                             {"mean_signed_error", s.stats.mspe()},
                             {"n", s.stats.n},
                             {"below_1mib", band_json(s.small)},
                             {"from_1mib", band_json(s.large)},
                             {"algorithms", s.algorithms}});
    }
    return j.dump(2) + "\n";
  }
  std::string out = fmt::format(
      "{} — {} all-reduce vs Vidur all_reduce.csv (single-node rows)\n", c.title(),
      c.params.allreduce_algorithm == AllReduceAlgorithm::kVllmCustom
          ? "vLLM custom (NCCL's faster of ring and NVLS above its size limit)"
          : "NCCL (the faster of ring and, on a multicast NVSwitch above 2 GPUs, NVLS)");
  for (const auto& s : v.slices) {
    std::string algorithms;
    for (const auto& [name, n] : s.algorithms) {
      algorithms += fmt::format("{}{} {}", algorithms.empty() ? "" : ", ", name, n);
    }
    out += fmt::format(
        "  {:<48} {:<16} p={}  MAPE {:6.2f}% (signed {:+7.2f}%)  < 1 MiB {:6.2f}%  ≥ 1 MiB "
        "{:6.2f}% (signed {:+7.2f}%)  n={}  [{}]\n",
        s.file, s.topology, s.workers, s.stats.mape(), s.stats.mspe(), s.small.mape(),
        s.large.mape(), s.large.mspe(), s.stats.n, algorithms);
  }
  return out;
}

std::string run_kv_transfer(const CostmodelArgs& a) {
  Context c = load(a, false);
  const KvTransferValidation v = validate_kv_transfer(a.profiles, c.gpu, a.cluster);
  const ClusterSpec& k = a.cluster;
  if (a.json) {
    nlohmann::json j;
    c.stamp(j);
    j["cluster"] = {{"nvlink_efficiency", k.nvlink_efficiency},
                    {"nvlink_latency_us", k.nvlink_latency_us},
                    {"nic_gb_per_s", k.nic_gb_per_s},
                    {"nic_latency_us", k.nic_latency_us}};
    for (const auto& s : v.slices) {
      j["slices"].push_back({{"file", s.file},
                             {"topology", s.topology},
                             {"placement", s.same_node ? "one node" : "two nodes"},
                             {"all", band_json(s.all)},
                             {"below_1mib", band_json(s.small)},
                             {"from_1mib", band_json(s.large)}});
    }
    return j.dump(2) + "\n";
  }
  std::string out = fmt::format(
      "{} — one KV copy between two GPUs (disaggregated serving's link model) vs Vidur "
      "send_recv.csv\n  NVLink at {} of peak + {} µs; NIC {} GB/s + {} µs\n",
      c.title(), k.nvlink_efficiency, k.nvlink_latency_us, k.nic_gb_per_s, k.nic_latency_us);
  for (const auto& s : v.slices) {
    out += fmt::format(
        "  {:<48} {:<16} {:<9}  MAPE {:6.2f}% (signed {:+7.2f}%)  < 1 MiB {:6.2f}%  ≥ 1 MiB "
        "{:6.2f}% (signed {:+7.2f}%)  n={}\n",
        s.file, s.topology, s.same_node ? "one node" : "two nodes", s.all.mape(), s.all.mspe(),
        s.small.mape(), s.large.mape(), s.large.mspe(), s.all.n);
  }
  return out;
}

namespace {
// The profiles of `c` as `fit_home_constants` takes them: (path, rows) and the model of each.
struct FitData {
  std::vector<std::pair<std::string, std::vector<VidurMlpRow>>> files;
  std::vector<ModelSpec> models;
};
FitData read_fit_data(Context& c) {
  FitData d;
  d.models.reserve(c.profiles.size());
  for (const auto& [id, path] : c.profiles) {
    auto rows = read_vidur_mlp(path);
    d.models.push_back(model_from_profile(rows.front(), id, catalog_model(c.catalog, id)));
    d.files.emplace_back(path, std::move(rows));
  }
  return d;
}

// The four projection GEMMs of a slice pooled.
ErrorStats gemm_stats(const ProfileValidation::Slice& s) {
  ErrorStats e;
  for (std::size_t i = 0; i < kNumVidurOps; ++i) {
    if (is_projection_gemm(static_cast<VidurOp>(i))) e.merge(s.ops[i]);
  }
  return e;
}
}  // namespace

std::string run_fit(const CostmodelArgs& a) {
  if (!a.engine.empty() && !a.write_file.empty()) {
    // The engine's constants (a tile ladder, say) would be written as the GPU's own.
    throw InputError(
        "--write with --engine: a hardware file holds the GPU's constants, not a software "
        "stack's; fit without --engine to write one");
  }
  Context c = load(a, true);
  std::error_code exists_ec;
  if (!a.write_file.empty() && fs::exists(a.write_file, exists_ec)) {
    const GpuSpec target = Catalog::load_gpu(ConfigNode::load_file(a.write_file));
    if (target.name != c.gpu.name) {
      throw InputError(fmt::format(
          "--write: {} is {}'s hardware file, not {}'s (expected a new file or this GPU's)",
          a.write_file, target.name, c.gpu.name));
    }
  }
  const FitData d = read_fit_data(c);
  FitReport report = fit_home_constants(d.files, d.models, c.gpu, c.params);
  if (!a.network.empty()) report.merge(fit_network_constants(a.network, c.gpu, report.params));
  if (c.engine) {
    report.text = c.title() +
                  (c.engine->covers(c.gpu) ? ": the fit refits its constants from its own start; "
                                             "the engine's others (a tile ladder, say) hold\n"
                                           : "\n") +
                  report.text;
  }
  if (!a.write_file.empty()) {
    // A new FILE starts as the hardware file's own text, comments and layout included.
    std::ostringstream text;
    text << open_input_file(c.gpu.file.file(), "the GPU's hardware file").rdbuf();
    write_fitted_section(a.write_file, report, text.str());
  }
  return report.text + uncataloged_text(c);
}

namespace {
// Leave-one-group-out folds: models that time one projection GEMM (the same M × K × N, as any
// of q/k/v, o, gate+up or down, at any TP degree) are held out together, or the held-out rows
// would have been fitted as another model's. Each fold is a list of indices into `d`,
// ascending; folds in order of first member.
std::vector<std::vector<std::size_t>> gemm_shape_folds(const FitData& d) {
  const std::size_t n = d.files.size();
  std::vector<std::size_t> group(n);
  for (std::size_t i = 0; i < n; ++i) group[i] = i;
  using Gemm = std::array<long long, 3>;  // M, K, N
  std::map<Gemm, std::size_t> owner;      // GEMM -> first model timing it
  for (std::size_t i = 0; i < n; ++i) {
    for (const VidurMlpRow& row : d.files[i].second) {
      const LayerShapes s = LayerShapes::make(d.models[i], row.tp);
      for (std::size_t op = 0; op < kNumProjOps; ++op) {
        const GemmShape g = s.gemm(static_cast<ProjOp>(op), row.num_tokens);
        const auto [it, fresh] =
            owner.emplace(Gemm{std::llround(g.m), std::llround(g.k), std::llround(g.n)}, i);
        if (fresh) continue;
        // Merge the two groups (relabel the later one).
        const std::size_t from = std::max(group[i], group[it->second]);
        const std::size_t to = std::min(group[i], group[it->second]);
        for (std::size_t& label : group) {
          if (label == from) label = to;
        }
      }
    }
  }
  std::vector<std::vector<std::size_t>> folds;
  std::map<std::size_t, std::size_t> fold_of_group;
  for (std::size_t i = 0; i < n; ++i) {
    const auto [it, fresh] = fold_of_group.emplace(group[i], folds.size());
    if (fresh) folds.emplace_back();
    folds[it->second].push_back(i);
  }
  return folds;
}

// The kernel whose constants price `k` when no training model runs `k`: the kernel of the same
// structure (one CTA per token row): LayerNorm as RMSNorm, GELU as SiLU-and-mul; none else.
std::optional<LightKernel> sibling_kernel(LightKernel k) {
  if (k == LightKernel::kLayerNorm) return LightKernel::kRmsNorm;
  if (k == LightKernel::kGelu) return LightKernel::kSiluMul;
  return std::nullopt;
}

// The light kernels `model` runs in Vidur's ops.
std::vector<LightKernel> light_kernels_of(const ModelSpec& model, const VidurMlpRow& row,
                                          const GpuSpec& gpu, const AnalyticalParams& params) {
  ReplicaSpec r;
  r.gpu = &gpu;
  r.model = &model;
  r.tp = row.tp;
  std::vector<LightKernel> out;
  for (const auto& u : LayerPricer(r, params, {}).vidur_light_uses(row.num_tokens)) {
    if (u.count > 0 && std::find(out.begin(), out.end(), u.kernel) == out.end()) {
      out.push_back(u.kernel);
    }
  }
  return out;
}
}  // namespace

std::string run_crossval(const CostmodelArgs& a) {
  Context c = load(a, true);
  const FitData d = read_fit_data(c);
  const std::size_t n = d.files.size();
  const std::vector<std::vector<std::size_t>> folds = gemm_shape_folds(d);
  if (folds.size() < 2) {
    throw InputError(fmt::format(
        "--profiles: leave-one-group-out needs two or more groups of models of {} that share no "
        "GEMM shape (found {} model{} in {} group)",
        c.gpu.name, n, n == 1 ? "" : "s", folds.size()));
  }
  const FitReport all_report = fit_home_constants(d.files, d.models, c.gpu, c.params);
  const AnalyticalParams& all_fit = all_report.params;
  // Fold f is fitted on every other fold's files. The fits are independent (and each
  // deterministic), so they run in parallel with the same results.
  std::vector<ProfileValidation> in(n);
  std::vector<ProfileValidation> out(n);
  std::vector<std::size_t> fold_of(n);
  // Light kernels no training model runs: priced as their sibling, else with the fit on all
  // models (in sample), else (fitted nowhere) with the hardware file's constants.
  std::vector<std::vector<std::string>> borrowed(n);
  std::vector<std::vector<std::string>> in_sample(n);
  std::vector<std::vector<std::string>> from_file(n);
  tbb::parallel_for(std::size_t{0}, folds.size(), [&](std::size_t f) {
    FitData rest;
    for (std::size_t j = 0; j < n; ++j) {
      if (std::find(folds[f].begin(), folds[f].end(), j) != folds[f].end()) continue;
      rest.files.push_back(d.files[j]);
      rest.models.push_back(d.models[j]);
    }
    const FitReport held = fit_home_constants(rest.files, rest.models, c.gpu, c.params);
    for (const std::size_t i : folds[f]) {
      fold_of[i] = f;
      // A kernel no training model runs would keep the start constants (on the home GPU fitted
      // on this model too): price it as its sibling where the training fitted that.
      AnalyticalParams p = held.params;
      for (const LightKernel k :
           light_kernels_of(d.models[i], d.files[i].second.front(), c.gpu, c.params)) {
        if (held.refit(k)) continue;
        const auto sib = sibling_kernel(k);
        if (sib && held.refit(*sib)) {
          p.light[static_cast<std::size_t>(k)] = p.light[static_cast<std::size_t>(*sib)];
          borrowed[i].push_back(
              fmt::format("{} as {}", light_kernel_name(k), light_kernel_name(*sib)));
        } else if (all_report.refit(k)) {
          p.light[static_cast<std::size_t>(k)] = all_fit.light[static_cast<std::size_t>(k)];
          in_sample[i].emplace_back(light_kernel_name(k));
        } else {
          from_file[i].emplace_back(light_kernel_name(k));
        }
      }
      const std::string& id = c.profiles[i].first;
      in[i] = validate_profile(d.files[i].second, id, c.gpu, &d.models[i], all_fit, {});
      out[i] = validate_profile(d.files[i].second, id, c.gpu, &d.models[i], p, {});
    }
  });
  ProfileValidation::Slice in_all;
  ProfileValidation::Slice out_all;
  for (std::size_t i = 0; i < n; ++i) {
    in_all.merge(in[i].slices.front());
    out_all.merge(out[i].slices.front());
  }
  auto pair_json = [](const ProfileValidation::Slice& si, const ProfileValidation::Slice& so) {
    return nlohmann::json{
        {"in_sample", {{"block_mape", si.block.mape()}, {"gemm_mape", gemm_stats(si).mape()}}},
        {"held_out",
         {{"block_mape", so.block.mape()},
          {"decode_mape", so.decode_block.mape()},
          {"prefill_mape", so.prefill_block.mape()},
          {"gemm_mape", gemm_stats(so).mape()},
          {"n", so.block.n}}}};
  };
  if (a.json) {
    nlohmann::json j = pair_json(in_all, out_all);
    c.stamp(j);
    j["not_in_catalog"] = uncataloged(c);
    j["groups"] = nlohmann::json::array();
    for (const auto& fold : folds) {
      nlohmann::json ids = nlohmann::json::array();
      for (const std::size_t i : fold) ids.push_back(c.profiles[i].first);
      j["groups"].push_back(ids);
    }
    for (std::size_t i = 0; i < n; ++i) {
      nlohmann::json m = pair_json(in[i].slices.front(), out[i].slices.front());
      m["group"] = fold_of[i] + 1;
      m["kernels_as_sibling"] = borrowed[i];
      m["kernels_in_sample"] = in_sample[i];
      m["kernels_from_hardware_file"] = from_file[i];
      j["models"][c.profiles[i].first] = m;
    }
    return j.dump(2) + "\n";
  }
  std::string text = fmt::format(
      "{} — leave-one-group-out: each model priced with the constants `costmodel fit` finds "
      "on the models outside its group (models sharing a GEMM shape are held out together)\n",
      c.title());
  for (std::size_t f = 0; f < folds.size(); ++f) {
    std::vector<std::string> ids;
    for (const std::size_t i : folds[f]) ids.push_back(c.profiles[i].first);
    text += fmt::format("  group {}: {}\n", f + 1, fmt::join(ids, ", "));
  }
  text += fmt::format("{:<44} {:>5} {:>16} {:>15} {:>8} {:>8} {:>12} {:>12}\n",
                      "model (MLP-block MAPE; GEMM = the four pooled)", "group", "in-sample block",
                      "held-out block", "decode", "prefill", "GEMM in", "GEMM out");
  auto line = [&text](const std::string& label, const std::string& group,
                      const ProfileValidation::Slice& si, const ProfileValidation::Slice& so) {
    text += fmt::format("{:<44} {:>5} {:15.2f}% {:14.2f}% {:7.2f}% {:7.2f}% {:11.2f}% {:11.2f}%\n",
                        label, group, si.block.mape(), so.block.mape(), so.decode_block.mape(),
                        so.prefill_block.mape(), gemm_stats(si).mape(), gemm_stats(so).mape());
  };
  for (std::size_t i = 0; i < n; ++i) {
    line(c.profiles[i].first, std::to_string(fold_of[i] + 1), in[i].slices.front(),
         out[i].slices.front());
  }
  line("ALL", "", in_all, out_all);
  for (std::size_t i = 0; i < n; ++i) {
    if (!borrowed[i].empty()) {
      text += fmt::format(
          "note: {} runs kernels no model outside its group runs, priced with a sibling's "
          "constants: {}\n",
          c.profiles[i].first, fmt::join(borrowed[i], ", "));
    }
    if (!in_sample[i].empty()) {
      text += fmt::format(
          "note: {} runs {} kernels no model outside its group runs and no sibling covers: "
          "priced with the fit on all models (in sample)\n",
          c.profiles[i].first, fmt::join(in_sample[i], ", "));
    }
    if (!from_file[i].empty()) {
      text += fmt::format(
          "note: {} runs {} kernels no profile here times: priced with the hardware file's "
          "constants\n",
          c.profiles[i].first, fmt::join(from_file[i], ", "));
    }
  }
  return text + uncataloged_text(c);
}

namespace {
const char* launch_name(StepLaunch l) {
  switch (l) {
    case StepLaunch::kEager:
      return "eager";
    case StepLaunch::kFullGraph:
      return "full CUDA graph";
    case StepLaunch::kPiecewiseGraph:
      return "piecewise CUDA graph";
  }
  return "?";
}
}  // namespace

std::string run_predict(const CostmodelArgs& a) {
  Context c = load(a, false);
  if (a.model.empty()) throw InputError("--model: required for predict");
  const ModelSpec& model = c.catalog.model(a.model, ConfigNode::flag("--model"));
  if (const std::string why = model.tp_problem(a.tp); !why.empty()) {
    throw InputError("--tp: " + why);
  }
  if (const std::string why = model.pp_problem(a.pp); !why.empty()) {
    throw InputError("--pp: " + why);
  }
  ReplicaSpec r;
  r.gpu = &c.gpu;
  r.model = &model;
  r.tp = a.tp;
  r.pp = a.pp;
  r.cluster = a.cluster;
  if (const std::string why = r.cluster.stage_placement_problem(r.tp, r.pp); !why.empty()) {
    throw InputError("--tp: " + why + " (--gpus-per-node sets the node size)");
  }
  r.cuda_graphs = !a.eager;
  r.topology = a.topology;
  if (const std::string why = c.gpu.topology_problem(r.links()); !why.empty()) {
    throw InputError("--topology: " + why);
  }
  if (a.power_cap_w > 0) {
    if (const std::string why = c.gpu.power_cap_problem(a.power_cap_w); !why.empty()) {
      throw InputError("--power-cap-w: " + why);
    }
    r.power_cap_w = a.power_cap_w;
  }
  if (a.precision == "fp8") {
    if (c.gpu.fp8_tflops <= 0) {
      throw InputError(
          fmt::format("--precision fp8: GPU '{}' has no FP8 tensor cores", c.gpu.name));
    }
    r.weights = Precision::kFp8;
  } else if (a.precision != "bf16" && a.precision != "fp16") {
    throw InputError(
        fmt::format("--precision: unknown '{}' (known: bf16, fp16, fp8)", a.precision));
  }
  const ConfigNode cost_model = ConfigNode::parse(a.cost_model_yaml, "--cost-model");
  if (!a.graph_mode.empty()) {
    const auto mode = cuda_graph_mode_named(a.graph_mode);
    if (!mode) {
      throw InputError(
          fmt::format("--graph-mode: unknown '{}' (known: decode_only, piecewise)", a.graph_mode));
    }
    r.cuda_graph_mode = *mode;
  }
  r.cuda_graph_max_tokens = std::max(0, a.graph_max_tokens);
  // As simulate builds a replica.
  EngineProfile::default_graph_launch(EngineProfile::of_cost_model(cost_model).get(),
                                      !a.graph_mode.empty(), a.graph_max_tokens >= 0,
                                      a.max_num_seqs, r);
  BatchShape b;
  if (a.prefill_tokens > 0) b.prefills.push_back({a.prefill_tokens, a.context});
  b.decode_contexts.assign(static_cast<std::size_t>(std::max(0, a.decodes)), a.context);
  if (b.empty()) throw InputError("--tokens/--decodes: the batch is empty");
  if (a.decodes > 0 && a.context < 1) {
    throw InputError("--context: a decode attends to its context (expected --context ≥ 1)");
  }
  const std::int64_t longest =
      static_cast<std::int64_t>(a.context) + std::max(a.prefill_tokens, a.decodes > 0 ? 1 : 0);
  if (model.max_position_embeddings > 0 && longest > model.max_position_embeddings) {
    throw InputError(
        fmt::format("--context/--tokens: a sequence of {} tokens exceeds {}'s context ({} tokens)",
                    longest, model.name, model.max_position_embeddings));
  }
  const auto cm = make_cost_model(cost_model);
  if (const std::string why = cm->power_cap_problem(r.power_cap_w); !why.empty()) {
    throw InputError("--power-cap-w: " + why +
                     " (expected --cost-model kind analytical, or no cap)");
  }
  const StepCost cost = cm->step(b, r);
  const char* launch = launch_name(r.step_launch(!b.prefills.empty(), b.total_tokens()));
  if (a.json) {
    nlohmann::json j = {
        {"total_ns", cost.total_ns},
        {"launch", launch},
        {"topology", r.links()},
        {"power_cap_w", r.effective_power_cap_w()},
        {"energy_j", cost.energy_j > 0 ? nlohmann::json(cost.energy_j) : nlohmann::json(nullptr)}};
    for (std::size_t i = 0; i < kNumCostComponents; ++i) {
      j["breakdown_ns"][std::string(cost_component_name(static_cast<CostComponent>(i)))] =
          cost.breakdown_ns[i];
    }
    j["provenance"] = {{"constants", c.gpu.provenance}, {"validated", c.gpu.validated}};
    return j.dump(2) + "\n";
  }
  std::string out = fmt::format(
      "{} on {}×{} (TP{} PP{}, {} weights, {}, {} W{}), {} prefill tokens + {} decodes, "
      "context {}, {}: {:.3f} ms\n",
      model.name, a.tp * a.pp, c.gpu.name, a.tp, a.pp, a.precision, r.links(),
      r.effective_power_cap_w(), r.power_cap_w > 0 ? " cap" : " TDP", a.prefill_tokens, a.decodes,
      a.context, launch, sim_to_ms(cost.total_ns));
  for (std::size_t i = 0; i < kNumCostComponents; ++i) {
    out += fmt::format("  {:<12} {:10.3f} ms\n", cost_component_name(static_cast<CostComponent>(i)),
                       cost.breakdown_ns[i] / 1e6);
  }
  if (cost.energy_j > 0) {
    out += fmt::format("  {:<12} {:10.3f} J   mean board power {:.0f} W\n", "energy", cost.energy_j,
                       cost.energy_j / sim_to_s(cost.total_ns));
  }
  // What a user pricing an unprofiled GPU must know: where its constants come from.
  out += fmt::format("constants  {}\n", c.gpu.provenance.empty()
                                            ? std::string("no provenance in the hardware file")
                                            : c.gpu.provenance);
  out += c.gpu.validated.empty()
             ? std::string("validated  nothing measured on this GPU\n")
             : fmt::format("validated  {}\n", fmt::join(c.gpu.validated, "\n           "));
  return out;
}

std::string run_power(const CostmodelArgs& a) {
  Context c = load(a, false);
  const std::optional<PowerModel> pm = PowerModel::for_gpu(c.gpu);
  if (!pm) {
    throw InputError(fmt::format(
        "--gpu {}: its hardware file has no `power:` section (the power model's constants; "
        "configs/hardware/rtx-5090.yaml has one)",
        c.gpu.name));
  }
  std::vector<double> caps = a.caps;
  if (caps.empty()) caps = {c.gpu.min_power_w > 0 ? c.gpu.min_power_w : c.gpu.tdp_w, c.gpu.tdp_w};
  for (const double cap : caps) {
    if (const std::string why = c.gpu.power_cap_problem(cap); !why.empty()) {
      throw InputError("--caps: " + why);
    }
  }
  std::sort(caps.begin(), caps.end());
  caps.erase(std::unique(caps.begin(), caps.end()), caps.end());
  std::vector<int> ms = a.token_counts;
  if (ms.empty()) ms = {64, 256, 1024, 4096, 8192, 16384};
  const double peak = c.gpu.bf16_tflops * 1e3;  // FLOP per ns at boost
  const AnalyticalTerms terms;
  struct Cell {
    KernelClock k;
    double tflops = 0;
  };
  std::vector<std::vector<Cell>> cells(ms.size(), std::vector<Cell>(caps.size()));
  for (std::size_t i = 0; i < ms.size(); ++i) {
    const GemmShape g{static_cast<double>(ms[i]), static_cast<double>(a.gemm_k),
                      static_cast<double>(a.gemm_n), 1};
    for (std::size_t j = 0; j < caps.size(); ++j) {
      Cell& cell = cells[i][j];
      cell.k = gemm_under_cap(g, 2, peak, c.params.clock_fraction, *pm, caps[j], c.gpu, c.params,
                              terms, 1.0);
      cell.tflops = g.flops() / cell.k.time_ns / 1e3;
    }
  }
  // Least-squares slope of the clock over the caps, MHz per W.
  auto slope = [&](std::size_t i) {
    if (caps.size() < 2) return 0.0;
    double mx = 0, my = 0;
    for (std::size_t j = 0; j < caps.size(); ++j) {
      mx += caps[j];
      my += cells[i][j].k.f_mhz;
    }
    mx /= static_cast<double>(caps.size());
    my /= static_cast<double>(caps.size());
    double sxy = 0, sxx = 0;
    for (std::size_t j = 0; j < caps.size(); ++j) {
      sxy += (caps[j] - mx) * (cells[i][j].k.f_mhz - my);
      sxx += (caps[j] - mx) * (caps[j] - mx);
    }
    return sxy / sxx;
  };
  auto penalty = [&](std::size_t i) {
    return 100 * (1 - cells[i].front().tflops / cells[i].back().tflops);
  };
  if (a.json) {
    nlohmann::json j = {{"gpu", c.gpu.name},
                        {"gemm", {{"k", a.gemm_k}, {"n", a.gemm_n}}},
                        {"caps_w", caps},
                        {"max_clock_mhz", pm->max_clock_mhz},
                        {"rows", nlohmann::json::array()}};
    for (std::size_t i = 0; i < ms.size(); ++i) {
      nlohmann::json row = {{"m", ms[i]},
                            {"penalty_pct", penalty(i)},
                            {"clock_slope_mhz_per_w", slope(i)},
                            {"cells", nlohmann::json::array()}};
      for (std::size_t k = 0; k < caps.size(); ++k) {
        const Cell& cell = cells[i][k];
        row["cells"].push_back({{"cap_w", caps[k]},
                                {"clock_mhz", cell.k.f_mhz},
                                {"power_w", cell.k.power_w},
                                {"tflops", cell.tflops},
                                {"tensor_activity", cell.k.u},
                                {"dram_activity", cell.k.m}});
      }
      j["rows"].push_back(row);
    }
    return j.dump(2) + "\n";
  }
  std::string out = fmt::format(
      "GPU {}: bf16 GEMM M × K {} × N {} under each cap (clock MHz / board W / TFLOP/s as "
      "priced, at the TDP as fitted); V/F top {:.0f} MHz, boost {:.0f} MHz\n",
      c.gpu.name, a.gemm_k, a.gemm_n, pm->max_clock_mhz, c.gpu.boost_clock_mhz);
  out += fmt::format("{:>7}", "M");
  for (const double cap : caps) out += fmt::format(" | {:>5.0f} W: MHz     W TFLOP/s", cap);
  out += fmt::format(" | penalty {:.0f}→{:.0f} W | MHz/W\n", caps.back(), caps.front());
  for (std::size_t i = 0; i < ms.size(); ++i) {
    out += fmt::format("{:>7}", ms[i]);
    for (const Cell& cell : cells[i]) {
      out +=
          fmt::format(" | {:>12.0f} {:>5.0f} {:>8.1f}", cell.k.f_mhz, cell.k.power_w, cell.tflops);
    }
    out += fmt::format(" | {:>15.2f}% | {:>5.2f}\n", penalty(i), slope(i));
  }
  return out;
}

}  // namespace servesim

namespace servesim {
namespace {

// "16384,64x8" → {16384, 64, 64, …}.
std::vector<int> parse_mix(const std::string& mix) {
  std::vector<int> out;
  std::size_t pos = 0;
  while (pos <= mix.size()) {
    const std::size_t end = std::min(mix.find(',', pos), mix.size());
    const std::string item = mix.substr(pos, end - pos);
    const std::size_t x = item.find('x');
    long long tokens = 0;
    long long times = 1;
    try {
      std::size_t used = 0;
      const std::string head = item.substr(0, x);
      tokens = std::stoll(head, &used);
      if (used != head.size()) throw std::invalid_argument(item);
      if (x != std::string::npos) {
        const std::string tail = item.substr(x + 1);
        times = std::stoll(tail, &used);
        if (used != tail.size()) throw std::invalid_argument(item);
      }
    } catch (const std::logic_error&) {
      tokens = 0;
    }
    if (tokens < 1 || tokens > (1 << 20) || times < 1 || times > 64) {
      throw InputError(fmt::format(
          "--mix '{}': '{}' is not a chunk (expected TOKENS or TOKENSxCOUNT, 1 ≤ TOKENS ≤ "
          "1048576, 1 ≤ COUNT ≤ 64, comma-separated)",
          mix, item));
    }
    out.insert(out.end(), static_cast<std::size_t>(times), static_cast<int>(tokens));
    pos = end + 1;
  }
  return out;
}

}  // namespace

std::string run_place(const CostmodelArgs& a) {
  Context c = load(a, false);
  if (a.model.empty()) throw InputError("--model: required for place");
  const ModelSpec& model = c.catalog.model(a.model, ConfigNode::flag("--model"));
  if (a.caps.size() < 2) {
    throw InputError("--caps: one GPU per cap, at least two (e.g. --caps 400,575)");
  }
  if (a.mixes.empty()) throw InputError("--mix: at least one mix of chunks (e.g. 16384,64x8)");
  const auto cm = make_cost_model(ConfigNode::parse(a.cost_model_yaml, "--cost-model"));
  for (const double cap : a.caps) {
    if (std::string why = c.gpu.power_cap_problem(cap); !why.empty()) {
      throw InputError("--caps: " + why);
    }
    if (std::string why = cm->power_cap_problem(cap); !why.empty()) {
      throw InputError("--caps: " + why);
    }
  }
  // One prefill chunk of `tokens` (no context before it) on the GPU capped at `cap` (0: TDP).
  std::map<std::pair<int, double>, double> memo;
  auto price = [&](int tokens, double cap) {
    auto [it, fresh] = memo.try_emplace({tokens, cap}, 0.0);
    if (fresh) {
      ReplicaSpec r;
      r.gpu = &c.gpu;
      r.model = &model;
      r.power_cap_w = cap;
      it->second = static_cast<double>(cm->lone_prefill(r, tokens).total_ns);
    }
    return it->second;
  };
  struct Row {
    std::vector<int> chunks;
    Placement aware, blind, oracle;
    double blind_first_ns = 0;  // blind with its ties to the first GPU of --caps
  };
  std::vector<Row> rows;
  for (const std::string& mix : a.mixes) {
    Row row;
    row.chunks = parse_mix(mix);
    PriceTable capped, uncapped;
    for (const int t : row.chunks) {
      capped.emplace_back();
      uncapped.emplace_back();
      for (const double cap : a.caps) {
        capped.back().push_back(price(t, cap));
        uncapped.back().push_back(price(t, 0));
      }
    }
    row.aware = earliest_finish(capped);
    row.blind = earliest_finish(uncapped);
    row.blind_first_ns = makespan_ns(row.blind.gpu_of, capped);
    // Judged by the true prices, over every order of its tied GPUs.
    row.blind.makespan_ns = earliest_finish_makespan_over_orders(uncapped, capped);
    row.oracle = brute_force(capped, kOracleMaxAssignments, "--mix '" + mix + "'");
    rows.push_back(std::move(row));
  }
  int matches = 0;
  double gain_sum = 0, gain_max = 0, regret_sum = 0, first_sum = 0, first_max = 0;
  for (const Row& r : rows) {
    // Equal within the step times' rounding to the nanosecond.
    if (r.aware.makespan_ns <= r.oracle.makespan_ns * (1 + 1e-12)) ++matches;
    const double gain = 100 * (r.blind.makespan_ns / r.aware.makespan_ns - 1);
    gain_sum += gain;
    gain_max = std::max(gain_max, gain);
    regret_sum += 100 * (r.blind.makespan_ns / r.oracle.makespan_ns - 1);
    const double first = 100 * (r.blind_first_ns / r.aware.makespan_ns - 1);
    first_sum += first;
    first_max = std::max(first_max, first);
  }
  const double n = static_cast<double>(rows.size());
  if (a.json) {
    nlohmann::json j = {{"gpu", c.gpu.name},
                        {"model", model.name},
                        {"caps_w", a.caps},
                        {"aware_equals_oracle", matches},
                        {"mixes", rows.size()},
                        {"mean_gain_pct", gain_sum / n},
                        {"max_gain_pct", gain_max},
                        {"mean_blind_regret_pct", regret_sum / n},
                        {"mean_gain_first_order_pct", first_sum / n},
                        {"max_gain_first_order_pct", first_max},
                        {"rows", nlohmann::json::array()}};
    for (const Row& r : rows) {
      j["rows"].push_back(
          {{"chunks", r.chunks},
           {"aware", {{"gpu_of", r.aware.gpu_of}, {"makespan_ms", r.aware.makespan_ns / 1e6}}},
           {"blind", {{"gpu_of", r.blind.gpu_of}, {"makespan_ms", r.blind.makespan_ns / 1e6}}},
           {"oracle", {{"gpu_of", r.oracle.gpu_of}, {"makespan_ms", r.oracle.makespan_ns / 1e6}}}});
    }
    return j.dump(2) + "\n";
  }
  std::string out = fmt::format(
      "{}: {} GPUs capped at {} W, {}; prefill chunks placed by their capped prices (aware), "
      "by the uncapped price (blind: mean over the GPU orders its ties may take), and by "
      "enumeration (oracle); makespan in ms under the "
      "capped prices\n",
      c.title(), a.caps.size(), fmt::join(a.caps, " / "), model.name);
  out += fmt::format("{:<34} {:>10} {:>10} {:>10} {:>9} {:>9}\n", "chunks (tokens)", "aware",
                     "blind", "oracle", "gain %", "regret %");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    out += fmt::format("{:<34} {:>10.2f} {:>10.2f} {:>10.2f} {:>9.2f} {:>9.2f}\n",
                       a.mixes[i].size() > 34 ? a.mixes[i].substr(0, 31) + "..." : a.mixes[i],
                       r.aware.makespan_ns / 1e6, r.blind.makespan_ns / 1e6,
                       r.oracle.makespan_ns / 1e6,
                       100 * (r.blind.makespan_ns / r.aware.makespan_ns - 1),
                       100 * (r.blind.makespan_ns / r.oracle.makespan_ns - 1));
  }
  out += fmt::format(
      "aware = oracle on {}/{} mixes; aware beats blind by {:.2f}% mean makespan (max {:.2f}%); "
      "blind regret vs oracle {:.2f}% mean; with blind's ties to the first GPU ({} W) the gain "
      "is {:.2f}% mean (max {:.2f}%)\n",
      matches, rows.size(), gain_sum / n, gain_max, regret_sum / n, a.caps[0], first_sum / n,
      first_max);
  return out;
}

}  // namespace servesim
