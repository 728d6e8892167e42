#include "tools/sim2real/mlenergy.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include "run/run_config_loader.hpp"
#include "run/run_executor.hpp"
#include "run/simulation.hpp"
#include "sim/config/input_error.hpp"
#include "sim/config/run_config.hpp"
#include "sim/util/sample_stats.hpp"
#include "tools/sim2real/replay.hpp"

namespace servesim::sim2real {
namespace {

using nlohmann::json;

InputError field_error(const std::string& where, const std::string& field,
                       const std::string& what) {
  return InputError(fmt::format("{}: field '{}': {}", where, field, what));
}

const json& field(const json& object, const std::string& where, const std::string& key) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) {
    throw field_error(where, key, "missing (expected it in every configuration)");
  }
  return *it;
}

double number(const json& object, const std::string& where, const std::string& key) {
  const json& v = field(object, where, key);
  if (!v.is_number()) throw field_error(where, key, "expected a number, got " + v.dump());
  const double x = v.get<double>();
  if (!std::isfinite(x)) throw field_error(where, key, "expected a finite number");
  return x;
}

double positive(const json& object, const std::string& where, const std::string& key) {
  const double x = number(object, where, key);
  if (x <= 0) throw field_error(where, key, fmt::format("expected a value > 0, got {}", x));
  return x;
}

int whole(const json& object, const std::string& where, const std::string& key) {
  const double x = positive(object, where, key);
  if (x != std::floor(x) || x > 1e6) {
    throw field_error(where, key, fmt::format("expected a whole number ≥ 1, got {}", x));
  }
  return static_cast<int>(x);
}

std::string text(const json& object, const std::string& where, const std::string& key) {
  const json& v = field(object, where, key);
  if (!v.is_string() || v.get<std::string>().empty()) {
    throw field_error(where, key, "expected a non-empty string, got " + v.dump());
  }
  return v.get<std::string>();
}

LengthHistogram histogram(const json& object, const std::string& where, const std::string& key) {
  const json& h = field(object, where, key);
  LengthHistogram out;
  if (!h.is_object() || !h.contains("bins") || !h.contains("counts") || !h["bins"].is_array() ||
      !h["counts"].is_array()) {
    throw field_error(where, key, "expected {bins: [...], counts: [...]}");
  }
  for (const json& b : h["bins"]) {
    if (!b.is_number()) throw field_error(where, key + ".bins", "expected numbers");
    // vLLM emits at least one token: a first edge below 1 covers lengths from 1.
    const double e = std::max(1.0, b.get<double>());
    if (!out.edges.empty() && e <= out.edges.back()) {
      throw field_error(where, key + ".bins", "expected ascending edges");
    }
    out.edges.push_back(e);
  }
  double total = 0;
  for (const json& c : h["counts"]) {
    if (!c.is_number() || c.get<double>() < 0) {
      throw field_error(where, key + ".counts", "expected counts ≥ 0");
    }
    out.counts.push_back(c.get<double>());
    total += out.counts.back();
  }
  if (out.counts.empty() || out.edges.size() != out.counts.size() + 1 || total <= 0) {
    throw field_error(where, key,
                      "expected one more bin edge than counts and at least one length counted");
  }
  return out;
}

// An exponential length distribution of mean `mean`, as a histogram (v2 gives only the mean).
LengthHistogram exponential_histogram(double mean) {
  LengthHistogram h;
  const double width = std::max(1.0, mean / 8);
  for (int i = 0; i <= 64; ++i) h.edges.push_back(1 + width * i);
  for (int i = 0; i < 64; ++i) {
    const double mid = width * (i + 0.5);
    h.counts.push_back(std::exp(-mid / mean));
  }
  return h;
}

std::vector<EnergyRow> read_v3(const json& doc, const std::string& path) {
  std::vector<EnergyRow> rows;
  const std::string model = text(doc, path, "model_id");
  const std::string task = doc.contains("task") && doc["task"].is_string() ? doc["task"] : "";
  const json& configs = field(doc, path, "configurations");
  if (!configs.is_array() || configs.empty()) {
    throw field_error(path, "configurations", "expected a non-empty list");
  }
  for (std::size_t i = 0; i < configs.size(); ++i) {
    const json& c = configs[i];
    EnergyRow r;
    r.file = path;
    r.where = fmt::format("{}: configurations[{}]", path, i);
    r.source = "v3";
    r.model = model;
    r.task = task;
    if (!task.empty() && task != "lm-arena-chat" && task != "gpqa") {
      throw field_error(path, "task",
                        fmt::format("'{}': no request set known for it (expected lm-arena-chat or "
                                    "gpqa)",
                                    task));
    }
    r.gpu = text(c, r.where, "gpu_model");
    r.num_gpus = whole(c, r.where, "num_gpus");
    const json& par = field(c, r.where, "parallelization");
    r.tp = whole(par, r.where + ": parallelization", "tensor_parallel");
    if (r.tp != r.num_gpus) {
      throw field_error(r.where, "num_gpus",
                        fmt::format("{} GPUs at tensor_parallel {} (expected one TP group: "
                                    "data and expert parallelism are not replayed)",
                                    r.num_gpus, r.tp));
    }
    r.max_num_seqs = whole(c, r.where, "max_num_seqs");
    r.avg_batch = positive(c, r.where, "avg_batch_size");
    r.avg_output_tokens = positive(c, r.where, "avg_output_len");
    r.output = histogram(c, r.where, "output_length_distribution");
    r.output_tok_s = positive(c, r.where, "output_throughput_tokens_per_sec");
    r.itl_p50_ms = positive(c, r.where, "median_itl_ms");
    r.itl_p90_ms = positive(c, r.where, "p90_itl_ms");
    r.power_w = positive(c, r.where, "avg_power_watts");
    r.j_per_token = positive(c, r.where, "energy_per_token_joules");
    rows.push_back(std::move(r));
  }
  return rows;
}

EnergyRow read_v2(const json& doc, const std::string& path) {
  EnergyRow r;
  r.file = path;
  r.where = path;
  r.source = "v2";
  r.model = text(doc, path, "Model");
  r.gpu = text(doc, path, "GPU");
  r.tp = whole(doc, path, "TP");
  if (whole(doc, path, "PP") != 1) {
    throw field_error(path, "PP", "expected 1 (pipeline-parallel rows are not replayed)");
  }
  r.num_gpus = r.tp;
  r.max_num_seqs = whole(doc, path, "Max BS (reqs)");
  r.avg_batch = positive(doc, path, "Avg BS (reqs)");
  r.avg_output_tokens = positive(doc, path, "Avg Output Tokens");
  r.output = exponential_histogram(r.avg_output_tokens);
  r.output_tok_s = positive(doc, path, "Token tput (tok/s)");
  r.itl_p50_ms = positive(doc, path, "Avg TPOT (s)") * 1e3;
  const double j_per_request = positive(doc, path, "Energy/req (J)");
  r.j_per_token = j_per_request / r.avg_output_tokens;
  r.power_w = r.j_per_token * r.output_tok_s;
  return r;
}

// The catalog's name for a file's model id: v2 uses Meta's first Hugging Face names for Llama
// 3.1, since renamed (Meta-Llama-3.1-8B-Instruct is Llama-3.1-8B-Instruct).
std::string catalog_model(const std::string& id) {
  const std::string old = "meta-llama/Meta-Llama-3.1-";
  if (id.rfind(old, 0) == 0) return "meta-llama/Llama-3.1-" + id.substr(old.size());
  return id;
}

std::string join(const std::vector<double>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += fmt::format("{}{:g}", i ? ", " : "", v[i]);
  return s;
}

double median_abs(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return !std::isfinite(x); }), v.end());
  if (v.empty()) return std::nan("");
  for (double& x : v) x = std::abs(x);
  return quantile(v, 0.5);
}

const std::vector<std::string>& metric_keys() {
  static const std::vector<std::string> k = {"output_tok_s", "itl_p50", "itl_p90", "power_w",
                                             "j_per_token"};
  return k;
}

std::array<double, 5> sim_values(const SteadyStateWindow::Metrics& m) {
  return {m.output_tok_s, m.itl_p50_ms, m.itl_p90_ms, m.power_w, m.j_per_token};
}
std::array<double, 5> real_values(const EnergyRow& r) {
  return {r.output_tok_s, r.itl_p50_ms, r.itl_p90_ms, r.power_w, r.j_per_token};
}

json nullable(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }

std::string bucket_of(std::int64_t batch) {
  if (batch < 64) return "8-32";
  if (batch < 256) return "64-192";
  return ">=256";
}

}  // namespace

std::vector<EnergyRow> read_energy_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("{}: cannot open (expected an ML.ENERGY JSON file)", path));
  json doc;
  try {
    doc = json::parse(in);
  } catch (const json::parse_error& e) {
    throw InputError(fmt::format("{}: not JSON: {}", path, e.what()));
  }
  if (!doc.is_object()) throw InputError(fmt::format("{}: expected a JSON object", path));
  if (doc.contains("configurations") || doc.contains("model_id")) return read_v3(doc, path);
  if (doc.contains("Model")) return {read_v2(doc, path)};
  throw InputError(
      fmt::format("{}: neither an ML.ENERGY v3 model file (model_id, configurations) nor a v2 "
                  "configuration file (Model, GPU, TP, ...)",
                  path));
}

std::int64_t energy_requests(std::int64_t max_num_seqs) {
  const std::int64_t repeats = max_num_seqs >= 768 ? 3 : max_num_seqs >= 256 ? 2 : 1;
  return 1024 * repeats;
}

std::string energy_config_yaml(const EnergyRow& row, const EnergyReplayOptions& o) {
  // v3 histograms count every request of the run; v2 rows give no count.
  double counted = 0;
  for (double c : row.output.counts) counted += c;
  const std::int64_t requests = row.source == "v3" && counted == std::floor(counted) &&
                                        counted >= 2.0 * static_cast<double>(row.max_num_seqs)
                                    ? static_cast<std::int64_t>(counted)
                                    : energy_requests(row.max_num_seqs);
  std::string y;
  y += fmt::format("# Generated by sim2real --mlenergy from {}\n", row.where);
  y += fmt::format("name: mlenergy_bs{}\nseed: {}\nmodel: {}\n", row.max_num_seqs, o.seed,
                   quoted(catalog_model(row.model)));
  y += "replicas:\n";
  y += fmt::format("  - gpu: {}\n    tp: {}\n    count: 1\n", quoted(row.gpu), row.tp);
  y += "    cuda_graph_mode: piecewise   # vLLM V1\n";
  y += fmt::format("    cuda_graph_max_tokens: {}   # vLLM: min(2 x max_num_seqs, 512)\n",
                   vllm_v1_graph_max_tokens(row.max_num_seqs));
  y += "output: {steady_state: true}\n";
  y += "scheduler:\n  kind: sarathi\n  max_num_batched_tokens: 8192\n";
  y += fmt::format("  max_num_seqs: {}\n", row.max_num_seqs);
  y += "  max_model_len: 20480\n  block_size: 16\n  gpu_memory_utilization: 0.9\n";
  y += "  watermark: 0\n  enable_prefix_caching: true\n  async_scheduling: true\n";
  y += "router: {kind: round_robin}\n";
  y += fmt::format(
      "cost_model: {{kind: analytical, engine: {}, sampling: {{top_p: {}, penalties: {}}}}}\n",
      o.engine, o.top_p ? "true" : "false", o.penalties ? "true" : "false");
  y += "workload:\n";
  y += "  arrival: {kind: static, qps: 1000000}   # every request sent at once\n";
  y += "  lengths:\n    kind: conversation\n";
  if (row.task == "gpqa") {
    y += fmt::format("    turns_mean: 1\n    prompt_tokens_mean: {:g}\n    sigma: {:g}\n",
                     o.gpqa_prompt_tokens_mean, o.gpqa_sigma);
    y += fmt::format("    template_tokens: {}\n", o.template_tokens);
  } else {
    y += fmt::format("    turns_mean: {:g}\n    prompt_tokens_mean: {:g}\n", o.turns_mean,
                     o.prompt_tokens_mean);
    y += fmt::format("    reply_ratio: {:g}\n    sigma: {:g}\n    template_tokens: {}\n",
                     o.reply_ratio, o.sigma, o.template_tokens);
  }
  y += "    max_prompt_tokens: 16384   # max_model_len 20480 less max_completion_tokens 4096\n";
  y += fmt::format("    output: {{edges: [{}], counts: [{}]}}\n", join(row.output.edges),
                   join(row.output.counts));
  y += "    unique_requests: 1024   # the benchmark's request file, sent 1-3 times\n";
  y += fmt::format("  num_requests: {}\n", requests);
  return y;
}

EnergyResult replay_energy_row(const EnergyRow& row, const EnergyReplayOptions& o) {
  EnergyResult res;
  res.row = &row;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    res.config_yaml = energy_config_yaml(row, o);
    const ConfigNode root = ConfigNode::parse(res.config_yaml, row.where);
    const RunConfig config = RunConfig::parse(root, o.seed);
    Simulation sim(config);
    SteadyStateWindow window(row.max_num_seqs);
    res.requests = sim.run({.observers = {&window}}).arrived;
    res.preemptions = window.preemptions();
    res.sim = window.metrics();
    if (window.prompt_tokens() > 0) {
      res.prefix_hit_rate = window.cached_tokens() / window.prompt_tokens();
    }
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", row.where, e.what()));
  }
  res.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

std::vector<EnergyResult> replay_energy_rows(const std::vector<EnergyRow>& rows,
                                             const EnergyReplayOptions& options) {
  std::vector<EnergyResult> out(rows.size());
  std::vector<std::exception_ptr> errors(rows.size());
  tbb::parallel_for(std::size_t{0}, rows.size(), [&](std::size_t i) {
    try {
      out[i] = replay_energy_row(rows[i], options);
    } catch (...) {
      errors[i] = std::current_exception();
    }
  });
  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  return out;
}

double signed_error_pct(double sim, double real) {
  if (!std::isfinite(sim) || !std::isfinite(real) || real == 0) return std::nan("");
  return (sim - real) / real * 100.0;
}

json energy_report_json(const std::vector<EnergyResult>& results, const EnergyReplayOptions& o) {
  json doc;
  doc["assumptions"] = {{"prompt_tokens_mean", o.prompt_tokens_mean},
                        {"turns_mean", o.turns_mean},
                        {"reply_ratio", o.reply_ratio},
                        {"sigma", o.sigma},
                        {"template_tokens", o.template_tokens},
                        {"engine", o.engine},
                        {"sampling_top_p", o.top_p},
                        {"sampling_penalties", o.penalties},
                        {"seed", o.seed}};
  const auto& keys = metric_keys();
  std::vector<std::vector<double>> all(keys.size());
  std::map<std::string, std::vector<std::vector<double>>> by_model;
  std::map<std::string, std::vector<std::vector<double>>> by_bucket;
  json rows = json::array();
  for (const EnergyResult& r : results) {
    const EnergyRow& row = *r.row;
    json j;
    j["where"] = row.where;
    j["source"] = row.source;
    j["model"] = row.model;
    j["gpu"] = row.gpu;
    j["tp"] = row.tp;
    j["max_num_seqs"] = row.max_num_seqs;
    j["avg_batch"] = {{"sim", nullable(r.sim.avg_batch)}, {"real", nullable(row.avg_batch)}};
    j["requests"] = r.requests;
    j["preemptions"] = r.preemptions;
    j["prefix_hit_rate"] = r.prefix_hit_rate;
    j["window_s"] = r.sim.window_s;
    j["wall_s"] = r.wall_s;
    const auto sim = sim_values(r.sim);
    const auto real = real_values(row);
    auto& model = by_model[row.model];
    auto& bucket = by_bucket[bucket_of(row.max_num_seqs)];
    model.resize(keys.size());
    bucket.resize(keys.size());
    for (std::size_t k = 0; k < keys.size(); ++k) {
      const double err = signed_error_pct(sim[k], real[k]);
      j["metrics"][keys[k]] = {
          {"sim", nullable(sim[k])}, {"real", nullable(real[k])}, {"error_pct", nullable(err)}};
      all[k].push_back(err);
      model[k].push_back(err);
      bucket[k].push_back(err);
    }
    rows.push_back(j);
  }
  doc["rows"] = rows;
  auto medians = [&](const std::vector<std::vector<double>>& errs) {
    json m;
    for (std::size_t k = 0; k < keys.size(); ++k) m[keys[k]] = nullable(median_abs(errs[k]));
    return m;
  };
  doc["median"] = medians(all);
  for (const auto& [name, errs] : by_model) doc["median_by_model"][name] = medians(errs);
  for (const auto& [name, errs] : by_bucket) doc["median_by_batch"][name] = medians(errs);
  return doc;
}

std::string energy_report_table(const json& doc) {
  std::ostringstream out;
  out << fmt::format("{:<34} {:>4} {:>5} {:>6} | {:>15} {:>15} {:>15} {:>13} {:>15}\n", "model",
                     "tp", "batch", "avg bs", "output tok/s", "ITL p50 ms", "ITL p90 ms", "power W",
                     "J/token");
  auto cell = [](const json& m) {
    if (m["sim"].is_null() || m["real"].is_null()) return fmt::format("{:>15}", "n/a");
    const double s = m["sim"].get<double>();
    const double r = m["real"].get<double>();
    const double e = m["error_pct"].get<double>();
    const int digits = r >= 100 ? 0 : r >= 1 ? 1 : 3;
    return fmt::format("{:>7.{}f} {:>+6.1f}%", s, digits, e);
  };
  for (const json& r : doc["rows"]) {
    std::string model = r["model"].get<std::string>();
    if (model.size() > 34) model = model.substr(model.size() - 34);
    const json& bs = r["avg_batch"];
    out << fmt::format(
        "{:<34} {:>4} {:>5} {:>6} | {} {} {} {} {}\n", model, r["tp"].get<int>(),
        r["max_num_seqs"].get<std::int64_t>(),
        bs["sim"].is_null() ? std::string("n/a") : fmt::format("{:.0f}", bs["sim"].get<double>()),
        cell(r["metrics"]["output_tok_s"]), cell(r["metrics"]["itl_p50"]),
        cell(r["metrics"]["itl_p90"]), cell(r["metrics"]["power_w"]),
        cell(r["metrics"]["j_per_token"]));
  }
  auto line = [&](const std::string& name, const json& m) {
    auto v = [&](const char* k) {
      return m[k].is_null() ? std::string("n/a") : fmt::format("{:.1f}%", m[k].get<double>());
    };
    out << fmt::format(
        "{:<34} median |error|: tok/s {}  ITL p50 {}  ITL p90 {}  power {}  J/tok {}\n", name,
        v("output_tok_s"), v("itl_p50"), v("itl_p90"), v("power_w"), v("j_per_token"));
  };
  out << "(each cell: simulated, then its signed error against the measurement)\n";
  line("all rows", doc["median"]);
  for (const auto& [name, m] : doc["median_by_model"].items()) line(name, m);
  for (const auto& [name, m] : doc["median_by_batch"].items()) line("batch " + name, m);
  return out.str();
}

}  // namespace servesim::sim2real
