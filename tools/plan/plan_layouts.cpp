// plan --layouts: the layout search, its files and its printed report.
#include "tools/plan/plan_layouts.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "sim/config/config_node.hpp"
#include "sim/config/input_error.hpp"
#include "sim/hardware/catalog.hpp"

namespace servesim::decide {

namespace fs = std::filesystem;

sim2real::LayoutQuery::Format silicon_format(const std::string& format) {
  static const std::map<std::string, sim2real::LayoutQuery::Format> kFormats{
      {"bf16", {"bf16", ""}},      {"fp8", {"fp8", "fp8"}},     {"fp8_block", {"fp8", "fp8_block"}},
      {"nvfp4", {"fp4", "nvfp4"}}, {"mxfp4", {"fp4", "mxfp4"}}, {"int4", {"int4", ""}}};
  const auto it = kFormats.find(format);
  if (it == kFormats.end()) {
    throw InputError(fmt::format(
        "--formats: unknown weight format '{}' (expected bf16, fp8, fp8_block, nvfp4, mxfp4 or "
        "int4)",
        format));
  }
  return it->second;
}

namespace {

// One regime of data/measured/silicon_bands.yaml: the 10th and 90th percentiles of
// ln(measured / simulated) of mean TTFT and TPOT.
struct Band {
  double ttft_p10 = 0, ttft_p90 = 0, tpot_p10 = 0, tpot_p90 = 0;
  std::int64_t rows = 0;
};
using Bands = std::map<std::tuple<std::string, std::string, std::string>, Band>;

Bands read_bands(const std::string& path) {
  Bands bands;
  const ConfigNode doc = ConfigNode::load_file(path);
  for (const ConfigNode& r : doc.at("regimes").items()) {
    if (r.has("status")) continue;  // unmeasured
    Band b;
    b.ttft_p10 = r.at("ttft").get_double("p10");
    b.ttft_p90 = r.at("ttft").get_double("p90");
    b.tpot_p10 = r.at("tpot").get_double("p10");
    b.tpot_p90 = r.at("tpot").get_double("p90");
    b.rows = r.get_int("n");
    bands[{r.get_string("engine"), r.get_string("mode"), r.get_string("kind")}] = b;
  }
  return bands;
}

// A simulated candidate's 80% band: its TTFT and TPOT as measured would be, by its regime's 10th
// and 90th percentiles, and the frontier point of each corner (slow corner: both times long).
nlohmann::json band_json(const nlohmann::json& c, const Band& b, double mean_out) {
  const double ttft = c["ttft_ms"].get<double>();
  const double tpot = c["tpot_ms"].get<double>();
  const double conc = c["concurrency"].get<double>();
  const double gpus = c["gpus"].get<double>();
  const auto per_gpu = [&](double t0, double t1) {
    return conc * mean_out / ((t0 + (mean_out - 1) * t1) / 1000) / gpus;
  };
  return {{"tokens_per_s_per_user",
           {1000 / (tpot * std::exp(b.tpot_p90)), 1000 / (tpot * std::exp(b.tpot_p10))}},
          {"tokens_per_s_per_gpu",
           {per_gpu(ttft * std::exp(b.ttft_p90), tpot * std::exp(b.tpot_p90)),
            per_gpu(ttft * std::exp(b.ttft_p10), tpot * std::exp(b.tpot_p10))}},
          {"ttft_ms", {ttft * std::exp(b.ttft_p10), ttft * std::exp(b.ttft_p90)}},
          {"tpot_ms", {tpot * std::exp(b.tpot_p10), tpot * std::exp(b.tpot_p90)}},
          {"regime_rows", b.rows}};
}

}  // namespace

PlanReport run_layout_plan(LayoutPlanOptions o) {
  sim2real::LayoutQuery& q = o.query;
  static const std::vector<std::string> kEngines{"sglang", "trtllm", "vllm"};
  for (const auto& e : q.engines) {
    if (std::find(kEngines.begin(), kEngines.end(), e) == kEngines.end()) {
      throw InputError(
          fmt::format("--engines: unknown engine '{}' (expected sglang, trtllm or vllm)", e));
    }
  }
  if (sim2real::silicon_system_gpu(q.system).empty()) {
    throw InputError(fmt::format(
        "--system: unknown system '{}' (expected h100_sxm, h200_sxm, b200_sxm, gb200, b300_sxm "
        "or gb300)",
        q.system));
  }
  q.formats.clear();
  for (const auto& f : o.formats) q.formats.push_back(silicon_format(f));
  sim2real::SiliconOptions silicon;
  silicon.seed = o.seed;
  silicon.prompts_per_seat = o.prompts_per_seat;
  if (!o.bounds.empty()) q.min_user_speed = *std::min_element(o.bounds.begin(), o.bounds.end());
  const sim2real::LayoutSearch search = sim2real::search_layouts(q, silicon);
  nlohmann::json doc = sim2real::layout_search_json(q, search, o.bounds, o.max_ttft_ms);
  // Trust bands: each simulated deployment's range as measured would be, by the error of the
  // silicon replay's rows of its engine, mode and model kind.
  const std::string bands_path =
      o.bands_file.empty() ? std::string(SERVESIM_SILICON_BANDS) : o.bands_file;
  const Bands bands = read_bands(bands_path);
  Catalog catalog(Catalog::default_dirs());
  const std::string model = sim2real::silicon_catalog_model(q.model, catalog.model_names());
  const std::string kind =
      catalog.model(model, ConfigNode::parse("{}", "plan --layouts")).is_moe() ? "moe" : "dense";
  const double osl = static_cast<double>(q.osl);
  const double mean_out = (std::floor(0.8 * osl) + osl) / 2;
  doc["bands"] = {{"source", bands_path},
                  {"what",
                   "each metric's 10th to 90th percentile of ln(measured / simulated) on "
                   "the silicon replay's rows of the deployment's engine, mode and model "
                   "kind"}};
  for (auto& c : doc["candidates"]) {
    if (c["tokens_per_s_per_gpu"].is_null()) continue;
    const auto it =
        bands.find({c["engine"].get<std::string>(), c["mode"].get<std::string>(), kind});
    c["band"] =
        it == bands.end() ? nlohmann::json("unmeasured") : band_json(c, it->second, mean_out);
  }
  const std::string stem = q.model.substr(q.model.find('/') + 1);
  PlanReport report;
  report.dir =
      o.out_dir.empty()
          ? (fs::path("out") / "layouts" / fmt::format("{}-{}-{}x{}", stem, q.system, q.isl, q.osl))
                .string()
          : o.out_dir;
  fs::create_directories(report.dir);
  std::ofstream(fs::path(report.dir) / "layouts.json") << doc.dump(2) << "\n";
  std::string csv =
      "label,mode,engine,format,concurrency,gpus,ttft_ms,tpot_ms,tokens_per_s_per_user,"
      "tokens_per_s_per_gpu,on_frontier\n";
  for (const auto& c : doc["candidates"]) {
    if (c.contains("not_run") || c["tokens_per_s_per_gpu"].is_null()) continue;
    csv += fmt::format("\"{}\",{},{},{},{},{},{:.3f},{:.4f},{:.3f},{:.3f},{}\n",
                       c["label"].get<std::string>(), c["mode"].get<std::string>(),
                       c["engine"].get<std::string>(), c["format"].get<std::string>(),
                       c["concurrency"].get<std::int64_t>(), c["gpus"].get<std::int64_t>(),
                       c["ttft_ms"].get<double>(), c["tpot_ms"].get<double>(),
                       c["tokens_per_s_per_user"].get<double>(),
                       c["tokens_per_s_per_gpu"].get<double>(), c["on_frontier"].get<bool>());
  }
  std::ofstream(fs::path(report.dir) / "points.csv") << csv;
  if (!o.quiet) {
    report.text = sim2real::layout_search_table(doc) +
                  fmt::format("wrote {}/layouts.json and points.csv\n", report.dir);
  }
  return report;
}

}  // namespace servesim::decide
