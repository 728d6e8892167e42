#include "workloads/trace_workload.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/config/input_error.hpp"

namespace servesim {
namespace {

__extension__ using Int128 = __int128;

}  // namespace

TraceWorkload::TraceWorkload(const std::string& path, TraceFormat format, TraceRescale rescale,
                             const WorkloadOptions& options, std::uint64_t seed)
    : reader_(path, format), shaper_(options, seed) {
  // Validating pass: every row that can be replayed, and the span of their arrivals.
  TraceReader check(path, format);
  const TraceSpan span = scan_trace<TraceReader, TraceRow>(check, options.num_requests);
  rows_ = span.rows;
  if (rows_ == 0) {
    throw_input_error(path, 1, 0,
                      "no usable rows (expected at least one request row after the header)");
  }
  const TraceTimeScale scale = trace_time_scale(path, rescale, rows_, span.first, span.last);
  scale_num_ = scale.num;
  scale_den_ = scale.den;
  file_qps_ = scale.file_qps;
}

TraceTimeScale trace_time_scale(const std::string& path, const TraceRescale& rescale,
                                std::int64_t rows, SimTime first, SimTime last) {
  TraceTimeScale out;
  const SimTime span = last - first;
  // An error about the rescale value starts where the value was given.
  auto fail_rescale = [&](const std::string& message) {
    if (rescale.where.empty()) throw InputError(fmt::format("{}: {}", path, message));
    throw InputError(fmt::format("{}: {} (trace {})", rescale.where, message, path));
  };
  // A rescaled last arrival past the horizon is an error (before any int64 arithmetic wraps).
  auto check_horizon = [&](double rescaled_last, std::string_view key, double value) {
    if (rescaled_last > static_cast<double>(kSimHorizon)) {
      fail_rescale(
          fmt::format("{} {} puts the trace's last arrival {:.3g} s into the run, past "
                      "the simulated-time horizon ({:.0e} s)",
                      key, value, rescaled_last * 1e-9, kSimHorizonS));
    }
  };
  if (rows >= 2 && span > 0) {
    out.file_qps = static_cast<double>(rows - 1) / sim_to_s(span);
  }
  switch (rescale.kind) {
    case TraceRescale::Kind::kNone:
      break;
    case TraceRescale::Kind::kTimeScale:
      if (rescale.value < 1e-9) {
        fail_rescale(fmt::format("time_scale {} is too small (expected ≥ 1e-9)", rescale.value));
      }
      check_horizon(static_cast<double>(last) * rescale.value, "time_scale", rescale.value);
      out.num = std::llround(rescale.value * 1e9);
      out.den = 1'000'000'000;
      break;
    case TraceRescale::Kind::kQps:
      if (out.file_qps <= 0) {
        fail_rescale(
            fmt::format("cannot rescale to qps {}: the {} replayed rows span {} s (expected at "
                        "least 2 rows with different arrival times)",
                        rescale.value, rows, sim_to_s(span)));
      }
      check_horizon(static_cast<double>(last) * (static_cast<double>(rows - 1) / rescale.value *
                                                 1e9 / static_cast<double>(span)),
                    "qps", rescale.value);
      out.num = std::llround(static_cast<double>(rows - 1) / rescale.value * 1e9);
      out.den = span;
      if (out.num <= 0) {
        // Rows would arrive less than half a nanosecond apart.
        fail_rescale(
            fmt::format("qps {} is too high for this trace (its {} rows would arrive "
                        "less than 1 ns apart; expected at most {:.3g})",
                        rescale.value, rows, 2e9 * static_cast<double>(rows - 1)));
      }
      break;
  }
  return out;
}

SimTime TraceTimeScale::apply(SimTime t) const {
  if (num == den) return t;
  const Int128 scaled = (Int128{t} * num + den / 2) / den;
  return static_cast<SimTime>(scaled);
}

SimTime TraceWorkload::rescaled(SimTime t) const {
  if (scale_num_ == scale_den_) return t;
  const Int128 scaled = (Int128{t} * scale_num_ + scale_den_ / 2) / scale_den_;
  return static_cast<SimTime>(scaled);
}

std::optional<RequestSpec> TraceWorkload::next() {
  if (done_) return std::nullopt;
  TraceRow row;
  if (!shaper_.has_room() || !reader_.next(row) || !shaper_.before_end(rescaled(row.arrival))) {
    done_ = true;
    return std::nullopt;
  }
  WorkloadCounts& c = shaper_.counts();
  if (row.zero_prompt) ++c.zero_prompt_rows;
  if (row.zero_output) ++c.zero_output_rows;
  if (row.error) ++c.error_rows;
  const std::int32_t override_tokens = shaper_.options().output_tokens_override;
  const std::int32_t output =
      override_tokens > 0 && !row.error ? override_tokens : row.output_tokens;
  RequestSpec spec = shaper_.shape(rescaled(row.arrival), row.prompt_tokens, output);
  if (!row.slo_class.empty()) {
    const auto it = std::find(slo_classes_.begin(), slo_classes_.end(), row.slo_class);
    if (it == slo_classes_.end()) {
      reader_.fail_slo_class(
          slo_classes_.empty()
              ? std::string("no class: the config's slo section names no classes (expected "
                            "slo: {classes: [{name: …}, …]}, or an empty field)")
              : fmt::format("one of the config's SLO classes ({}), or an empty field",
                            fmt::join(slo_classes_, ", ")));
    }
    spec.slo_class = static_cast<std::int32_t>(it - slo_classes_.begin());
  }
  if (lora_adapters_ > 0) {
    if (row.adapter >= lora_adapters_) {
      reader_.fail_adapter(
          fmt::format("an adapter id below lora.num_adapters ({}), or -1 or "
                      "nothing for the base model",
                      lora_adapters_));
    }
    spec.adapter = row.adapter;
  }
  return spec;
}

void TraceWorkload::set_slo_classes(const std::vector<std::string>& names) { slo_classes_ = names; }

}  // namespace servesim
