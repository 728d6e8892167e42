#include "tools/sim2real/experiments.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "sim/config/input_error.hpp"
#include "sim/util/csv_reader.hpp"

namespace servesim::sim2real {
namespace {

struct Row {
  const std::string& file;
  int line;
  const std::vector<std::string>& header;
  const std::vector<std::string>& fields;

  const std::string& raw(const std::string& column) const {
    for (std::size_t i = 0; i < header.size(); ++i) {
      if (header[i] == column) return fields[i];
    }
    throw InputError(fmt::format("{}:1: missing column '{}'", file, column));
  }
  [[noreturn]] void fail(const std::string& column, const std::string& expected) const {
    throw InputError(fmt::format("{}:{}: column '{}': expected {}, got '{}'", file, line, column,
                                 expected, raw(column)));
  }
  std::optional<double> number(const std::string& column) const {
    const std::string& s = raw(column);
    if (s.empty()) return std::nullopt;
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size() || errno != 0 || !std::isfinite(v)) fail(column, "a number");
    return v;
  }
  double required(const std::string& column) const {
    const auto v = number(column);
    if (!v) fail(column, "a number");
    return *v;
  }
  std::int64_t integer(const std::string& column, std::int64_t fallback) const {
    const auto v = number(column);
    if (!v) return fallback;
    if (*v < 0 || *v > 2147483647.0 || std::floor(*v) != *v) {
      fail(column, "a whole number in [0, 2147483647]");
    }
    return static_cast<std::int64_t>(*v);
  }
  std::int64_t positive_integer(const std::string& column) const {
    const std::int64_t v = integer(column, 0);
    if (v < 1) fail(column, "a whole number ≥ 1");
    return v;
  }
  // A measured latency: scores divide by it.
  double positive_ms(const std::string& column) const {
    const double v = required(column);
    if (!(v > 0)) fail(column, "a positive time in ms");
    return v;
  }
  std::optional<bool> boolean(const std::string& column) const {
    const std::string& s = raw(column);
    if (s.empty()) return std::nullopt;
    if (s == "True" || s == "true" || s == "1") return true;
    if (s == "False" || s == "false" || s == "0") return false;
    fail(column, "True, False or empty");
  }
};

}  // namespace

const std::vector<std::string>& metric_names() {
  static const std::vector<std::string> names = {"e2e_mean", "e2e_p90",  "e2e_p99", "ttft_mean",
                                                 "ttft_p90", "ttft_p99", "itl_mean"};
  return names;
}

double metric(const Metrics& m, std::size_t index) {
  const double values[] = {m.e2e_mean, m.e2e_p90,  m.e2e_p99, m.ttft_mean,
                           m.ttft_p90, m.ttft_p99, m.itl_mean};
  return values[index];
}

void set_metric(Metrics& m, std::size_t index, double value) {
  double* fields[] = {&m.e2e_mean, &m.e2e_p90,  &m.e2e_p99, &m.ttft_mean,
                      &m.ttft_p90, &m.ttft_p99, &m.itl_mean};
  *fields[index] = value;
}

std::vector<Experiment> read_experiments(const std::string& path) {
  CsvReader csv(path, "experiments.csv");
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  const std::vector<std::string>& header = csv.header();
  std::vector<std::string> fields;
  std::vector<Experiment> out;
  while (csv.next_row()) {
    fields.assign(csv.size(), std::string());
    for (std::size_t i = 0; i < csv.size(); ++i) fields[i] = csv.field(i);
    const int first_line = static_cast<int>(csv.line());
    const Row row{path, first_line, header, fields};
    Experiment e;
    e.line = first_line;
    for (std::size_t i = 0; i < header.size(); ++i) e.columns[header[i]] = fields[i];
    e.id = row.raw("exp_id");
    if (e.id.empty()) row.fail("exp_id", "a run id");
    if (std::any_of(out.begin(), out.end(), [&e](const Experiment& x) { return x.id == e.id; })) {
      row.fail("exp_id", "a run id not used by an earlier row");
    }
    e.folder = row.raw("folder");
    e.set = row.raw("set");
    e.model = row.raw("model");
    e.hardware = row.raw("hardware");
    e.tp = static_cast<int>(row.positive_integer("tp"));
    e.dp = static_cast<int>(row.integer("dp", 1));
    e.precision = row.raw("precision");
    e.vllm_image = row.raw("vllm_image");
    e.max_num_batched_tokens = row.integer("max_num_batched_tokens", 0);
    e.max_num_seqs = row.integer("max_num_seqs", 0);
    e.max_model_len = row.integer("max_model_len", 0);
    e.gpu_mem_util = row.number("gpu_mem_util").value_or(0.9);
    e.cpu_kv_offload = row.boolean("cpu_kv_offload");
    e.kv_blocks_total_gpu = row.integer("kv_blocks_total_gpu", 0);
    e.workload = row.raw("workload");
    e.harness = row.raw("harness");
    for (int s = 0; s < 2; ++s) {
      const auto rate = row.number(fmt::format("stage{}_rate", s));
      const auto dur = row.number(fmt::format("stage{}_duration_s", s));
      if (rate.has_value() != dur.has_value()) {
        row.fail(fmt::format("stage{}_duration_s", s), "a duration with every stage rate");
      }
      if (rate) e.stages.push_back({*rate, *dur});
    }
    e.n_requests_scheduled = row.integer("n_requests_scheduled", 0);
    e.num_groups = row.integer("num_unique_system_prompts", 0);
    e.users_per_group = row.integer("users_per_system_prompt", 0);
    e.system_prompt_len = static_cast<std::int32_t>(row.integer("system_prompt_len", 0));
    e.question_len = static_cast<std::int32_t>(row.integer("question_len", 0));
    e.output_len = static_cast<std::int32_t>(row.integer("output_len", 0));
    e.measured_output_len_mean = row.number("measured_output_len_mean");
    e.n_requests_trace = row.integer("n_requests_trace", 0);
    e.n_failed_trace = row.integer("n_failed_trace", 0);
    e.notes = row.raw("notes");
    for (std::size_t m = 0; m < metric_names().size(); ++m) {
      set_metric(e.real, m, row.positive_ms("summ_" + metric_names()[m] + "_ms"));
    }
    for (int st = 0; st < 2; ++st) {
      const std::string prefix = fmt::format("s{}_", st);
      if (!row.number(prefix + "e2e_mean_ms")) break;
      Metrics m;
      for (std::size_t i = 0; i < metric_names().size(); ++i) {
        set_metric(m, i, row.positive_ms(prefix + metric_names()[i] + "_ms"));
      }
      e.stage_real.push_back(m);
    }
    const std::string trace = row.raw("trace_file");
    if (trace.empty()) {
      // A regenerated run is built from these: none may be missing.
      for (const char* column :
           {"output_len", "question_len", "num_unique_system_prompts", "users_per_system_prompt"}) {
        row.positive_integer(column);
      }
    } else {
      std::filesystem::path p(trace);
      if (p.is_relative()) p = dir / p;
      // Absolute, so a config written elsewhere (sim2real --out) still finds it.
      e.trace_file = absolute_path(p);
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<TraceRequest> read_trace(const std::string& path) {
  CsvReader csv(path, "a measured trace CSV");
  const std::vector<std::string>& header = csv.header();
  std::vector<std::string> fields;
  std::vector<TraceRequest> out;
  while (csv.next_row()) {
    fields.assign(csv.size(), std::string());
    for (std::size_t i = 0; i < csv.size(); ++i) fields[i] = csv.field(i);
    const int line = static_cast<int>(csv.line());
    const Row row{path, line, header, fields};
    TraceRequest r;
    r.arrival_s = row.required("arrival_time_s");
    r.input_tokens = static_cast<std::int32_t>(row.integer("input_tokens", 0));
    r.output_tokens = static_cast<std::int32_t>(row.integer("output_tokens", 0));
    r.error = row.boolean("has_error").value_or(false);
    if (!r.error) {
      r.e2e_ms = row.required("gt_e2e_ms");
      r.ttft_ms = row.required("gt_ttft_ms");
    }
    out.push_back(r);
  }
  return out;
}

}  // namespace servesim::sim2real
