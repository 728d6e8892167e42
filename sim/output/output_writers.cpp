#include "sim/output/output_writers.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "sim/config/input_error.hpp"
#include "sim/output/buffered_file.hpp"
#include "sim/util/version.hpp"

namespace servesim {
namespace fs = std::filesystem;

RequestRecord make_request_record(const Request& r, bool rejected) {
  const auto since = [](SimTime t, SimTime from) -> std::int64_t { return t >= 0 ? t - from : -1; };
  const bool served = !rejected && r.finished >= 0;
  return RequestRecord{r.id,
                       r.spec.arrival,
                       r.first_scheduled,
                       r.first_token,
                       r.finished,
                       since(r.first_token, r.spec.arrival),
                       served && r.generated > 1 ? static_cast<double>(r.finished - r.first_token) /
                                                       static_cast<double>(r.generated - 1)
                                                 : -1.0,
                       since(r.finished, r.spec.arrival),
                       since(r.first_scheduled, r.spec.arrival),
                       served && r.generated > 1 ? r.tbt_max_ns : -1,
                       r.spec.prompt_tokens,
                       r.spec.output_tokens,
                       r.cached_prefix,
                       r.preemptions,
                       rejected ? -1 : r.replica,
                       rejected ? static_cast<std::int32_t>(r.reject_reason == RejectReason::kNone
                                                                ? RejectReason::kFitsNoReplica
                                                                : r.reject_reason)
                                : 0,
                       r.deadline == kNoDeadline ? -1 : r.deadline,
                       r.est_wait,
                       r.spec.slo_class,
                       r.demoted ? 1 : 0,
                       r.spec_steps,
                       r.spec_accepted};
}

OutputWriters::OutputWriters(const std::string& dir, const OutputConfig& config, const Fleet& fleet)
    : dir_(dir), config_(config) {
  make_output_folder(dir_, "output folder");
  // Left by a run that was killed.
  std::error_code ec;
  for (const char* f : kOutputFiles) fs::remove(part_path(f), ec);
  try {
    open(fleet);
  } catch (...) {
    // A writer that failed to open: the ones opened before it must not stay as header-only files.
    discard();
    throw;
  }
}

std::string OutputWriters::part_path(const char* file) const {
  return (fs::path(dir_) / file).string() + ".part";
}

void OutputWriters::open(const Fleet& fleet) {
  csv_ = config_.csv != "false";
  const auto path = [&](const char* file) { return part_path(file); };
  Hdf5WriterOptions h5;
  h5.servesim_version = std::string(servesim_version());
  if (config_.requests) {
    requests_h5_ = std::make_unique<Hdf5RecordWriter<RequestRecord>>(
        path("requests.h5"), "requests", request_record_fields(config_.speculative), h5);
    if (csv_) {
      requests_csv_ = std::make_unique<CsvRecordWriter<RequestRecord>>(
          path("requests.csv"), request_record_fields(config_.speculative));
    }
  }
  if (config_.steps) {
    steps_h5_ = std::make_unique<Hdf5RecordWriter<StepRecord>>(path("steps.h5"), "steps",
                                                               step_record_fields(), h5);
    if (csv_) {
      steps_csv_ =
          std::make_unique<CsvRecordWriter<StepRecord>>(path("steps.csv"), step_record_fields());
    }
  }
  if (config_.trace) {
    trace_ = std::make_unique<ChromeTraceWriter>(path("trace.json"), config_.trace_max_steps,
                                                 config_.trace_max_requests);
    for (const auto& r : fleet) {
      trace_->add_replica(
          r->id, fmt::format("{}, {}, tp{}", r->spec.gpu->name, r->spec.model->name, r->spec.tp));
    }
  }
}

OutputWriters::~OutputWriters() {
  if (!committed_) discard();
}

void OutputWriters::discard() noexcept {
  // Close what is open (errors ignored) and remove every output file, temporary and final, so no
  // partial file looks like a result.
  const auto drop = [](auto& writer) {
    try {
      if (writer) writer->close();
    } catch (...) {
    }
    writer.reset();
  };
  drop(requests_h5_);
  drop(steps_h5_);
  drop(requests_csv_);
  drop(steps_csv_);
  drop(trace_);
  std::error_code ec;
  for (const char* f : kOutputFiles) {
    fs::remove(part_path(f), ec);
    fs::remove(fs::path(dir_) / f, ec);
  }
}

void OutputWriters::on_step(const StepRecord& step, const BatchShape& /*shape*/,
                            const StepCost& /*cost*/) {
  if (steps_h5_) steps_h5_->append(step);
  if (steps_csv_) steps_csv_->append(step);
  if (trace_) trace_->add_step(step);
}

void OutputWriters::on_request_done(const Request& request, bool rejected) {
  pending_.emplace(request.id, make_request_record(request, rejected));
  // Rows go out in id order: a request done before an earlier one waits for it.
  while (!pending_.empty() && pending_.begin()->first == next_request_) {
    write_request(pending_.begin()->second);
    pending_.erase(pending_.begin());
    ++next_request_;
  }
}

void OutputWriters::on_transfer(const TransferRecord& transfer) {
  if (trace_) trace_->add_transfer(transfer);
}

void OutputWriters::write_request(const RequestRecord& rec) {
  ++requests_;
  if (requests_h5_) requests_h5_->append(rec);
  if (requests_csv_) requests_csv_->append(rec);
  if (trace_) trace_->add_request(rec);
  if (csv_ && config_.csv == "auto" && requests_ > config_.csv_max_requests) {
    // Too large for CSV: stop writing it; the files are removed at close.
    requests_csv_.reset();
    steps_csv_.reset();
    csv_ = false;
    csv_dropped_ = true;
  }
}

nlohmann::json OutputWriters::close() {
  // Every request is done by the end of a run; rows still held (none, unless ids were skipped)
  // go out in order.
  for (const auto& [id, rec] : pending_) write_request(rec);
  pending_.clear();
  nlohmann::json files = nlohmann::json::array();
  nlohmann::json notes = nlohmann::json::array();
  if (requests_h5_) {
    requests_h5_->close();
    files.push_back("requests.h5");
  }
  if (steps_h5_) {
    steps_h5_->close();
    files.push_back("steps.h5");
  }
  if (requests_csv_) {
    requests_csv_->close();
    files.push_back("requests.csv");
  }
  if (steps_csv_) {
    steps_csv_->close();
    files.push_back("steps.csv");
  }
  if (csv_dropped_) {
    std::error_code ec;
    fs::remove(part_path("requests.csv"), ec);
    fs::remove(part_path("steps.csv"), ec);
    notes.push_back(fmt::format("CSV not written: more than {} requests (output.csv_max_requests)",
                                config_.csv_max_requests));
  }
  if (trace_) {
    trace_->close();
    files.push_back("trace.json");
    if (trace_->steps_omitted() > 0) {
      notes.push_back(
          fmt::format("trace.json holds the first {} of {} steps (output.trace_max_steps)",
                      trace_->steps_written(), trace_->steps()));
    }
    if (trace_->requests_written() < trace_->requests()) {
      notes.push_back(fmt::format(
          "trace.json draws the first {} of {} requests as tracks (output.trace_max_requests)",
          trace_->requests_written(), trace_->requests()));
    }
    if (trace_->transfers_written() < trace_->transfers()) {
      notes.push_back(fmt::format(
          "trace.json draws the first {} of {} KV transfers (output.trace_max_requests)",
          trace_->transfers_written(), trace_->transfers()));
    }
  }
  files.push_back("config.yaml");
  files.push_back("summary.json");
  for (const auto& f : files) written_.push_back(f.get<std::string>());
  return nlohmann::json{{"files", files}, {"notes", notes}};
}

void OutputWriters::commit(const std::string& config_yaml, const std::string& summary_json) {
  const auto write = [&](const char* file, const std::string& text) {
    BufferedFile out(part_path(file), file);
    out.text() = text;
    out.close();
  };
  write("config.yaml", config_yaml);
  write("summary.json", summary_json);
  // From here the old set stops being a set: its summary goes first, this run's comes last.
  std::error_code ec;
  fs::remove(fs::path(dir_) / "summary.json", ec);
  const auto rename = [&](const std::string& file) {
    fs::rename(part_path(file.c_str()), fs::path(dir_) / file, ec);
    if (ec) {
      throw InputError(
          fmt::format("{}: cannot rename {}.part into place ({})", dir_, file, ec.message()));
    }
  };
  for (const char* f : kOutputFiles) {
    const bool ours = std::find(written_.begin(), written_.end(), f) != written_.end();
    if (!ours) fs::remove(fs::path(dir_) / f, ec);  // an older run's file this run does not write
  }
  for (const auto& f : written_) {
    if (f != "summary.json") rename(f);
  }
  rename("summary.json");
  committed_ = true;
}

}  // namespace servesim
