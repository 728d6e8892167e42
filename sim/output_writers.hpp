#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/chrome_trace_writer.hpp"
#include "sim/hdf5_record_writer.hpp"
#include "sim/replica.hpp"
#include "sim/run_config.hpp"
#include "sim/run_observer.hpp"

namespace servesim {

// Streams a run's per-request and per-step records into `dir`: requests.h5, steps.h5 (HDF5
// compound datasets), requests.csv/steps.csv for small runs, and trace.json (Chrome/Perfetto).
// Request rows are written in request-id order: a request done before an earlier one is held
// until that one is done, so memory grows with the requests in flight, not the run length. With csv
// "auto", CSV files are written while the run has at most csv_max_requests requests and removed
// (noted in the summary) when it grows past that.
class OutputWriters : public RunObserver {
 public:
  OutputWriters(const std::string& dir, const OutputConfig& config, const Fleet& fleet);
  ~OutputWriters() override;

  void on_step(const StepRecord& step, const BatchShape& shape, const StepCost& cost) override;
  void on_request_done(const Request& request, bool rejected) override;

  // Flushes and closes every file; returns {"files": [...], notes} for summary.json (the files
  // include config.yaml and summary.json, which the caller writes). Without a completed close()
  // (the run failed) the destructor removes every output file instead.
  nlohmann::json close();

 private:
  // Every file a run may write in its folder.
  static constexpr const char* kOutputFiles[] = {"requests.h5", "steps.h5",   "requests.csv",
                                                 "steps.csv",   "trace.json", "config.yaml",
                                                 "summary.json"};
  std::string dir_;
  OutputConfig config_;
  bool closed_ = false;  // close() completed: the files are this run's results
  bool csv_ = false;
  bool csv_dropped_ = false;
  std::int64_t requests_ = 0;                      // rows written
  std::int64_t next_request_ = 0;                  // the id the next row must have
  std::map<std::int64_t, RequestRecord> pending_;  // done, waiting for an earlier id
  void write_request(const RequestRecord& rec);
  std::unique_ptr<Hdf5RecordWriter<RequestRecord>> requests_h5_;
  std::unique_ptr<Hdf5RecordWriter<StepRecord>> steps_h5_;
  std::unique_ptr<CsvRecordWriter<RequestRecord>> requests_csv_;
  std::unique_ptr<CsvRecordWriter<StepRecord>> steps_csv_;
  std::unique_ptr<ChromeTraceWriter> trace_;
};

// The record of one finished or rejected request.
RequestRecord make_request_record(const Request& r, bool rejected);

}  // namespace servesim
