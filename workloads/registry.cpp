#include "workloads/registry.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/config/input_error.hpp"
#include "sim/config/suggest.hpp"
#include "workloads/benchmark_client_workload.hpp"
#include "workloads/closed_loop_config.hpp"
#include "workloads/lora_adapter_workload.hpp"
#include "workloads/mooncake_workload.hpp"
#include "workloads/prompt_filter.hpp"
#include "workloads/synthetic_workload.hpp"
#include "workloads/trace_reader.hpp"
#include "workloads/trace_workload.hpp"

namespace servesim {
namespace {

std::int32_t read_tokens(const ConfigNode& section, std::string_view key) {
  return static_cast<std::int32_t>(section.get_positive_int(key));  // ≤ INT32_MAX
}

// An existing, readable file; relative paths are taken from the config file's folder.
std::string read_file_path(const ConfigNode& section) {
  const ConfigNode file = section.at("file");
  std::filesystem::path p(file.as_string());
  if (p.is_relative()) p = std::filesystem::path(section.base_dir()) / p;
  std::string path = p.lexically_normal().string();
  if (const std::string why = unreadable_reason(path); !why.empty()) {
    // The path as written and where it led: a relative one resolves against the config's folder.
    const std::string written = file.as_string();
    const std::string absolute = absolute_path(p);
    file.fail(written == absolute
                  ? fmt::format("'{}': {} (expected a readable CSV file)", written, why)
                  : fmt::format("'{}', which resolves to '{}': {} (relative paths are taken from "
                                "the config's folder, {}; expected a readable CSV file)",
                                written, absolute, why, section.base_dir()));
  }
  return path;
}

// A time in seconds read from `key` of `node`, in ns; past the simulated-time horizon is an error
// at the key (before it can wrap an int64).
SimTime horizon_seconds(const ConfigNode& node, std::string_view key, double v) {
  if (v > kSimHorizonS) {
    node.at(key).fail(
        fmt::format("{} s is past the simulated-time horizon ({:.0e} s)", v, kSimHorizonS));
  }
  return seconds_to_sim(v);
}

WorkloadOptions read_options(const ConfigNode& node) {
  WorkloadOptions o;
  auto seconds = [&node](std::string_view key, double v) { return horizon_seconds(node, key, v); };
  o.start = seconds("start_s", node.get_nonnegative("start_s", 0.0));
  if (node.has("duration_s")) o.duration = seconds("duration_s", node.get_positive("duration_s"));
  if (node.has("num_requests")) o.num_requests = node.get_positive_int("num_requests");
  if (node.has("max_tokens")) {
    const std::int32_t m = read_tokens(node, "max_tokens");
    if (m < 2) {
      node.at("max_tokens")
          .fail(fmt::format("{} is too small (expected ≥ 2: one prompt and one output token)", m));
    }
    o.max_tokens = m;
  }
  if (const auto prefix = node.find("shared_prefix")) {
    prefix->require_map("a shared_prefix section");
    if (prefix->has("group_by")) {
      prefix->check_keys({"group_by"});
      const ConfigNode by = prefix->at("group_by");
      if (by.as_string() != "prompt_length") {
        by.fail(fmt::format("unknown grouping '{}' (known: prompt_length)", by.as_string()));
      }
      o.prefix_by_prompt_length = true;
    } else {
      prefix->check_keys({"num_groups", "prefix_tokens", "group_by"});
      o.prefix_groups = prefix->get_positive_int("num_groups");
      o.prefix_tokens = read_tokens(*prefix, "prefix_tokens");
    }
  }
  return o;
}

// One `workload.trace.format` of the registry.
struct TraceFormatEntry {
  std::string_view kind;
  // Its rows name their shared prefixes (Mooncake's hash_ids), so `shared_prefix:` cannot be
  // combined with it.
  bool brings_own_prefixes = false;
  std::unique_ptr<Workload> (*make)(const std::string& path, const TraceRescale& rescale,
                                    const WorkloadOptions& options, std::uint64_t seed);
};

template <TraceFormat kFormat>
std::unique_ptr<Workload> make_csv_trace(const std::string& path, const TraceRescale& rescale,
                                         const WorkloadOptions& options, std::uint64_t seed) {
  return std::make_unique<TraceWorkload>(path, kFormat, rescale, options, seed);
}

// The explicit table of trace formats: the CSV formats of trace_reader.hpp and the JSON-lines
// Mooncake format. Keep sorted by kind.
const std::vector<TraceFormatEntry>& trace_format_entries() {
  static const std::vector<TraceFormatEntry> entries{
      {"azure", false, &make_csv_trace<TraceFormat::kAzure>},
      {"measured", false, &make_csv_trace<TraceFormat::kMeasured>},
      {"mooncake", true,
       [](const std::string& path, const TraceRescale& rescale, const WorkloadOptions& options,
          std::uint64_t seed) -> std::unique_ptr<Workload> {
         return std::make_unique<MooncakeWorkload>(path, rescale, options, seed);
       }},
      {"vidur", false, &make_csv_trace<TraceFormat::kVidur>},
  };
  return entries;
}

std::unique_ptr<Workload> make_trace(const ConfigNode& trace, WorkloadOptions options,
                                     std::uint64_t seed) {
  trace.require_map("a trace section");
  trace.check_keys({"format", "file", "qps", "time_scale", "output_tokens"});
  if (trace.has("output_tokens"))
    options.output_tokens_override = read_tokens(trace, "output_tokens");
  const ConfigNode format_node = trace.at("format");
  const TraceFormatEntry& format = lookup_kind(trace_format_entries(), format_node, "trace format");
  if (format.brings_own_prefixes &&
      (options.prefix_groups > 0 || options.prefix_by_prompt_length)) {
    format_node.fail(fmt::format(
        "a {} trace cannot be combined with 'shared_prefix' (its rows give the shared prefixes)",
        format.kind));
  }
  TraceRescale rescale;
  if (trace.has("qps") && trace.has("time_scale")) {
    trace.at("time_scale").fail("give qps or time_scale, not both");
  }
  if (trace.has("qps")) {
    rescale = {TraceRescale::Kind::kQps, trace.get_positive("qps"), trace.at("qps").where()};
  }
  if (trace.has("time_scale")) {
    rescale = {TraceRescale::Kind::kTimeScale, trace.get_positive("time_scale"),
               trace.at("time_scale").where()};
  }
  return format.make(read_file_path(trace), rescale, options, seed);
}

ArrivalSpec parse_diurnal(const ConfigNode& arrival) {
  arrival.check_keys({"kind", "peak_qps", "trough_qps", "peak_hour", "day_s"});
  DiurnalArrivals d;
  d.peak_qps = arrival.get_positive("peak_qps");
  d.trough_qps = arrival.get_nonnegative("trough_qps", 0.0);
  if (d.trough_qps > d.peak_qps) {
    arrival.at("trough_qps")
        .fail(fmt::format("expected at most peak_qps ({}), got {}", d.peak_qps, d.trough_qps));
  }
  d.peak_hour = arrival.get_nonnegative("peak_hour", 14.0);
  if (d.peak_hour >= 24) arrival.at("peak_hour").fail("expected an hour in [0, 24)");
  d.day = horizon_seconds(arrival, "day_s", arrival.get_positive("day_s", 86400.0));
  return d;
}

ArrivalSpec parse_gamma(const ConfigNode& arrival) {
  arrival.check_keys({"kind", "qps", "cv"});
  const double cv = arrival.get_positive("cv");
  // Gamma shape 1/cv²: outside [1e-4, 1e4] the draws degenerate (0, or NaN for shapes that
  // overflow). Bursty production traces have cv of 1 to 10.
  if (cv < kMinGammaCv || cv > kMaxGammaCv) {
    arrival.at("cv").fail(fmt::format("expected a coefficient of variation in [{}, {}], got {}",
                                      kMinGammaCv, kMaxGammaCv, cv));
  }
  return GammaArrivals{arrival.get_positive("qps"), cv};
}

ArrivalSpec parse_poisson(const ConfigNode& arrival) {
  arrival.check_keys({"kind", "qps"});
  return PoissonArrivals{arrival.get_positive("qps")};
}

ArrivalSpec parse_static(const ConfigNode& arrival) {
  arrival.check_keys({"kind", "qps"});
  return StaticArrivals{arrival.get_positive("qps")};
}

ArrivalSpec parse_stages(const ConfigNode& arrival) {
  arrival.check_keys({"kind", "stages", "gap_s"});
  StagedArrivals staged;
  staged.gap = horizon_seconds(arrival, "gap_s", arrival.get_nonnegative("gap_s", 0.0));
  const ConfigNode list = arrival.at("stages");
  if (!list.is_sequence() || list.size() == 0) {
    list.fail("expected a list of stages [{rate, duration_s}, …]");
  }
  for (const ConfigNode& st : list.items()) {
    st.require_map("a stage {rate, duration_s}");
    st.check_keys({"rate", "duration_s"});
    ArrivalStage stage;
    stage.rate = st.get_positive("rate");
    const double duration_s = st.get_positive("duration_s");
    stage.duration = horizon_seconds(st, "duration_s", duration_s);
    const double n = stage.rate * duration_s;
    stage.requests = std::llround(n);
    if (std::abs(n - static_cast<double>(stage.requests)) > 1e-6 * std::max(1.0, n)) {
      st.fail(
          fmt::format("rate × duration_s = {} is not a whole number of requests (expected "
                      "exactly rate × duration_s requests per stage)",
                      n));
    }
    if (stage.requests < 1) {
      st.fail(
          fmt::format("rate × duration_s = {} gives no request (expected at least one per "
                      "stage)",
                      n));
    }
    staged.stages.push_back(stage);
    // The stages and the gaps between them must end inside the horizon (each is below it,
    // so the running sum cannot wrap).
    if (const SimTime end = stages_end(staged); end > kSimHorizon) {
      st.fail(
          fmt::format("the stages so far end {:.3g} s into the run, past the simulated-time "
                      "horizon ({:.0e} s)",
                      sim_to_s(end), kSimHorizonS));
    }
  }
  return staged;
}

// min_tokens and max_tokens of a zipf or uniform section.
std::pair<std::int32_t, std::int32_t> read_token_range(const ConfigNode& lengths) {
  const std::int32_t lo = read_tokens(lengths, "min_tokens");
  const std::int32_t hi = read_tokens(lengths, "max_tokens");
  if (hi < lo) {
    lengths.at("max_tokens")
        .fail(fmt::format("{} is below min_tokens {} (expected max_tokens ≥ min_tokens)", hi, lo));
  }
  return {lo, hi};
}

// `output: {edges: [...], counts: [...]}` of conversation lengths.
LengthHistogram read_histogram(const ConfigNode& node) {
  node.require_map("a length histogram ({edges: [...], counts: [...]})");
  node.check_keys({"edges", "counts"});
  LengthHistogram h;
  for (const ConfigNode& e : node.at("edges").items()) {
    const double v = e.as_double();
    if (!std::isfinite(v) || v < 1 || (!h.edges.empty() && v <= h.edges.back())) {
      e.fail("expected ascending finite bin edges, the first ≥ 1 token");
    }
    h.edges.push_back(v);
  }
  double total = 0;
  for (const ConfigNode& c : node.at("counts").items()) {
    const double v = c.as_double();
    if (!std::isfinite(v) || v < 0) c.fail("expected a count ≥ 0");
    h.counts.push_back(v);
    total += v;
  }
  if (h.counts.empty() || h.edges.size() != h.counts.size() + 1) {
    node.at("counts").fail(
        fmt::format("{} counts for {} edges (expected one count per bin: one "
                    "fewer than the edges, at least one)",
                    h.counts.size(), h.edges.size()));
  }
  if (total <= 0) node.at("counts").fail("every count is 0 (expected at least one length)");
  return h;
}

LengthSpec parse_conversation(const ConfigNode& lengths) {
  lengths.check_keys({"kind", "turns_mean", "prompt_tokens_mean", "reply_ratio", "sigma",
                      "template_tokens", "max_prompt_tokens", "unique_requests", "output"});
  ConversationLengths c;
  c.turns_mean = lengths.get_positive("turns_mean");
  if (c.turns_mean < 1) lengths.at("turns_mean").fail("expected a mean of at least 1 turn");
  c.prompt_tokens_mean = lengths.get_positive("prompt_tokens_mean");
  c.reply_ratio = lengths.get_nonnegative("reply_ratio", 1.0);
  c.sigma = lengths.get_nonnegative("sigma", 1.0);
  if (c.sigma > 4) lengths.at("sigma").fail("expected a lognormal shape in [0, 4]");
  const std::int64_t tmpl = lengths.get_int("template_tokens", 0);
  if (tmpl < 0 || tmpl > 100000) lengths.at("template_tokens").fail("expected [0, 100000]");
  c.template_tokens = static_cast<std::int32_t>(tmpl);
  c.max_prompt_tokens = read_tokens(lengths, "max_prompt_tokens");
  if (c.prompt_tokens_mean > c.max_prompt_tokens) {
    lengths.at("prompt_tokens_mean").fail("is above max_prompt_tokens");
  }
  c.unique_requests = lengths.get_int("unique_requests", 0);
  if (c.unique_requests < 0) lengths.at("unique_requests").fail("expected a count ≥ 0");
  c.output = read_histogram(lengths.at("output"));
  return c;
}

LengthSpec parse_trace_lengths(const ConfigNode& lengths) {
  lengths.check_keys({"kind", "file"});
  return load_trace_lengths(read_file_path(lengths));
}

LengthSpec parse_chat(const ConfigNode& lengths) {
  lengths.check_keys({"kind", "num_groups", "users_per_group", "system_prompt_tokens",
                      "question_tokens", "output_tokens"});
  ChatLengths c;
  c.num_groups = lengths.get_positive_int("num_groups");
  c.users_per_group = lengths.get_positive_int("users_per_group");
  const std::int64_t system = lengths.get_int("system_prompt_tokens", 0);
  if (system < 0 || system > std::numeric_limits<std::int32_t>::max()) {
    lengths.at("system_prompt_tokens").fail("expected a token count in [0, 2147483647]");
  }
  c.system_prompt_tokens = static_cast<std::int32_t>(system);
  c.question_tokens = read_tokens(lengths, "question_tokens");
  if (system + c.question_tokens > std::numeric_limits<std::int32_t>::max()) {
    lengths.at("question_tokens")
        .fail(fmt::format("system_prompt_tokens + question_tokens = {} is more than a prompt can "
                          "have (2147483647)",
                          system + c.question_tokens));
  }
  c.output_tokens = read_tokens(lengths, "output_tokens");
  return c;
}

LengthSpec parse_fixed(const ConfigNode& lengths) {
  lengths.check_keys({"kind", "prompt_tokens", "output_tokens"});
  return FixedLengths{read_tokens(lengths, "prompt_tokens"), read_tokens(lengths, "output_tokens")};
}

LengthSpec parse_random(const ConfigNode& lengths) {
  lengths.check_keys({"kind", "input_len", "output_len", "range_ratio"});
  RandomLengths r{read_tokens(lengths, "input_len"), read_tokens(lengths, "output_len"), 1.0};
  if (lengths.has("range_ratio")) {
    r.range_ratio = lengths.get_double("range_ratio");
    if (!(r.range_ratio >= 0 && r.range_ratio <= 1)) {
      lengths.at("range_ratio")
          .fail(fmt::format("expected a number in [0, 1], got {}", r.range_ratio));
    }
  }
  return r;
}

LengthSpec parse_uniform(const ConfigNode& lengths) {
  lengths.check_keys({"kind", "min_tokens", "max_tokens", "prefill_decode_ratio"});
  const auto [lo, hi] = read_token_range(lengths);
  return UniformLengths{lo, hi, lengths.get_positive("prefill_decode_ratio")};
}

LengthSpec parse_zipf(const ConfigNode& lengths) {
  lengths.check_keys({"kind", "min_tokens", "max_tokens", "theta", "prefill_decode_ratio"});
  const auto [lo, hi] = read_token_range(lengths);
  const double theta = lengths.get_double("theta", 0.6);
  if (theta < 0 || theta >= 1) {
    lengths.at("theta").fail(fmt::format("expected a number in [0, 1), got {}", theta));
  }
  return ZipfLengths{lo, hi, theta, lengths.get_positive("prefill_decode_ratio")};
}

}  // namespace

// The explicit tables of arrival and length kinds. Keep sorted by kind.
const std::vector<ArrivalEntry>& arrival_entries() {
  // Capabilities: ends on its own.
  static const std::vector<ArrivalEntry> entries{
      {"diurnal", {false}, parse_diurnal}, {"gamma", {false}, parse_gamma},
      {"poisson", {false}, parse_poisson}, {"stages", {true}, parse_stages},
      {"static", {false}, parse_static},
  };
  return entries;
}

const std::vector<LengthEntry>& length_entries() {
  // Capabilities: brings its own prefixes, reads a file.
  static const std::vector<LengthEntry> entries{
      {"conversation", {true, false}, parse_conversation},
      {"fixed", {false, false}, parse_fixed},
      {"random", {false, false}, parse_random},
      {"shared_prefix_chat", {true, false}, parse_chat},
      {"trace", {false, true}, parse_trace_lengths},
      {"uniform", {false, false}, parse_uniform},
      {"zipf", {false, false}, parse_zipf},
  };
  return entries;
}

std::vector<std::string> arrival_kinds() { return kinds_of(arrival_entries()); }
std::vector<std::string> length_kinds() { return kinds_of(length_entries()); }
std::vector<std::string> trace_formats() { return kinds_of(trace_format_entries()); }

namespace {
std::unique_ptr<Workload> make_unfiltered_workload(const ConfigNode& node, std::uint64_t seed);
}  // namespace

std::unique_ptr<Workload> make_workload(const ConfigNode& node, std::uint64_t seed) {
  node.require_map("a workload section");
  node.check_keys({"trace", "arrival", "lengths", "num_requests", "duration_s", "start_s",
                   "max_tokens", "shared_prefix", "prompt_tokens", "sessions", "agentic",
                   "client"});
  std::unique_ptr<Workload> w = make_unfiltered_workload(node, seed);
  const auto range = node.find("prompt_tokens");
  if (!range) return w;
  range->require_map("a prompt length range {min: TOKENS, max: TOKENS}");
  range->check_keys({"min", "max"});
  if (!range->has("min") && !range->has("max")) range->fail("expected min, max or both");
  const std::int32_t lo = range->has("min") ? read_tokens(*range, "min") : 1;
  const std::int32_t hi =
      range->has("max") ? read_tokens(*range, "max") : std::numeric_limits<std::int32_t>::max();
  if (hi < lo) {
    range->at("max").fail(fmt::format("{} is below min {} (expected max ≥ min)", hi, lo));
  }
  return std::make_unique<PromptFilterWorkload>(std::move(w), lo, hi);
}

namespace {

// workload.client with its lengths: a benchmark client at a fixed concurrency. The keys that
// would change what the client sends (arrivals, a trace, request caps, shared prefixes) are
// refused rather than ignored.
std::unique_ptr<Workload> make_client(const ConfigNode& node, const WorkloadOptions& options,
                                      std::uint64_t seed) {
  for (const char* other :
       {"arrival", "trace", "sessions", "agentic", "num_requests", "duration_s", "shared_prefix"}) {
    if (node.has(other)) {
      node.at(other).fail(
          "cannot be combined with 'client' (the client sends num_prompts requests, the next "
          "whenever one of its max_concurrency finishes)");
    }
  }
  const ConfigNode client = node.at("client");
  client.require_map("a client section {max_concurrency: N, num_prompts: N, num_warmups: N}");
  client.check_keys({"max_concurrency", "num_prompts", "num_warmups"});
  ClientSpec c;
  c.max_concurrency = client.get_positive_int("max_concurrency");
  if (c.max_concurrency > 1'000'000) {
    client.at("max_concurrency").fail("expected at most 1000000 concurrent requests");
  }
  // InferenceX's counts: ten prompts and two warm-ups per concurrent slot.
  c.num_prompts =
      client.has("num_prompts") ? client.get_positive_int("num_prompts") : 10 * c.max_concurrency;
  c.num_warmups = client.get_int("num_warmups", 2 * c.max_concurrency);
  if (c.num_warmups < 0) client.at("num_warmups").fail("expected a count ≥ 0");
  if (!node.has("lengths")) node.fail("a 'client' needs a 'lengths' section");
  const ConfigNode lengths_node = node.at("lengths");
  const LengthEntry& length_kind = read_kind(lengths_node, "lengths", length_entries());
  if (length_kind.capabilities.brings_own_prefixes) {
    lengths_node.at("kind").fail(
        "a benchmark client sends independent prompts (expected a lengths kind without shared "
        "prefixes: fixed, random, trace, uniform or zipf)");
  }
  return std::make_unique<BenchmarkClientWorkload>(c, length_kind.parse(lengths_node), options,
                                                   seed);
}

std::unique_ptr<Workload> make_unfiltered_workload(const ConfigNode& node, std::uint64_t seed) {
  const WorkloadOptions options = read_options(node);
  if (node.has("client")) return make_client(node, options, seed);
  if (node.has("sessions") || node.has("agentic")) {
    return make_closed_loop_workload(node, options, seed);
  }
  if (const auto trace = node.find("trace")) {
    for (const char* other : {"arrival", "lengths"}) {
      if (node.has(other)) {
        node.at(other).fail(
            "cannot be combined with 'trace' (a trace brings its own arrivals "
            "and lengths)");
      }
    }
    return make_trace(*trace, options, seed);
  }
  if (!node.has("arrival") || !node.has("lengths")) {
    node.fail("expected either 'trace', or both 'arrival' and 'lengths'");
  }
  const ConfigNode arrival = node.at("arrival");
  const ArrivalEntry& arrival_kind = read_kind(arrival, "arrival", arrival_entries());
  const ArrivalSpec arrivals = arrival_kind.parse(arrival);
  if (!options.num_requests && !options.duration && !arrival_kind.capabilities.ends_on_its_own) {
    node.fail(
        "a synthetic workload never ends on its own (expected num_requests, duration_s or "
        "both)");
  }
  // The mean arrival span of num_requests at the configured rate must stay inside the horizon
  // (ArrivalProcess stops a random excursion past it too, without the config position).
  if (options.num_requests && arrival.has("qps") && !options.duration) {
    const double span = static_cast<double>(*options.num_requests) / arrival.get_positive("qps");
    if (span > 0.5 * kSimHorizonS) {
      arrival.at("qps").fail(fmt::format(
          "{} requests at this rate span about {:.3g} s; a run must stay well inside the "
          "simulated-time horizon ({:.0e} s)",
          *options.num_requests, span, kSimHorizonS));
    }
  }
  const ConfigNode lengths_node = node.at("lengths");
  const LengthEntry& length_kind = read_kind(lengths_node, "lengths", length_entries());
  LengthSpec lengths = length_kind.parse(lengths_node);
  if (length_kind.capabilities.brings_own_prefixes && node.has("shared_prefix")) {
    node.at("shared_prefix")
        .fail(
            "cannot be combined with shared_prefix_chat or conversation lengths (they bring their "
            "own prefixes)");
  }
  return std::make_unique<SyntheticWorkload>(arrivals, std::move(lengths), options, seed,
                                             arrival.where() + ": workload.arrival");
}

}  // namespace

WorkloadCounts workload_counts(const Workload& workload) {
  if (const auto* f = dynamic_cast<const PromptFilterWorkload*>(&workload)) {
    WorkloadCounts c = workload_counts(f->inner());
    c.yielded -= f->left_out();
    c.left_out_by_prompt_tokens = f->left_out();
    c.prompt_filter = true;
    return c;
  }
  if (const auto* t = dynamic_cast<const TraceWorkload*>(&workload)) return t->counts();
  if (const auto* s = dynamic_cast<const SyntheticWorkload*>(&workload)) return s->counts();
  if (const auto* b = dynamic_cast<const BenchmarkClientWorkload*>(&workload)) return b->counts();
  if (const auto* l = dynamic_cast<const LoraAdapterWorkload*>(&workload)) {
    return workload_counts(l->inner());
  }
  return {};
}

}  // namespace servesim
