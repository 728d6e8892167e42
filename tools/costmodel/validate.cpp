#include <fstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/config/input_error.hpp"
#include "sim/util/sample_stats.hpp"
#include "tools/costmodel/command_context.hpp"
#include "tools/costmodel/costmodel_args.hpp"

namespace servesim {
using namespace costmodel_cmd;
namespace {

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

}  // namespace servesim
