#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/config/run_config.hpp"
#include "sim/engine/replica.hpp"
#include "sim/engine/run_observer.hpp"
#include "sim/output/chrome_trace_writer.hpp"
#include "sim/output/hdf5_record_writer.hpp"

namespace servesim {

// Streams a run's per-request and per-step records into `dir`: requests.h5, steps.h5 (HDF5
// compound datasets), requests.csv/steps.csv for small runs, and trace.json (Chrome/Perfetto).
// Request rows are written in request-id order: a request done before an earlier one is held
// until that one is done, so memory grows with the requests in flight, not the run length. With csv
// "auto", CSV files are written while the run has at most csv_max_requests requests and removed
// (noted in the summary) when it grows past that.
//
// Nothing is half-written under a final name: every file is written as NAME.part in the folder
// and renamed into place by commit() once all are complete — the old summary.json removed first,
// the new one renamed last, so a folder with a summary.json holds one run's complete set. A run
// killed before commit() leaves the .part files (removed by the next run in that folder); one that
// fails (an exception, the destructor without commit()) removes them and the folder's older
// outputs, so no file from before looks like this run's result.
class OutputWriters : public RunObserver {
 public:
  OutputWriters(const std::string& dir, const OutputConfig& config, const Fleet& fleet);
  ~OutputWriters() override;

  void on_step(const StepRecord& step, const BatchShape& shape, const StepCost& cost) override;
  void on_request_done(const Request& request, bool rejected) override;
  void on_transfer(const TransferRecord& transfer) override;

  // Flushes and closes every data file; returns {"files": [...], notes} for summary.json (the
  // files include config.yaml and summary.json, which commit() writes).
  nlohmann::json close();
  // After close(): writes config.yaml and summary.json with these texts and renames every file
  // into place (summary.json last). Throws InputError if a file cannot be written.
  void commit(const std::string& config_yaml, const std::string& summary_json);

 private:
  // Removes every file of ours in the folder, temporary and final; errors are ignored.
  void discard() noexcept;
  void open(const Fleet& fleet);
  std::string part_path(const char* file) const;

  // Every file a run may write in its folder.
  static constexpr const char* kOutputFiles[] = {"requests.h5", "steps.h5",   "requests.csv",
                                                 "steps.csv",   "trace.json", "config.yaml",
                                                 "summary.json"};
  std::string dir_;
  OutputConfig config_;
  bool committed_ = false;            // commit() completed: the files are this run's results
  std::vector<std::string> written_;  // the files renamed into place by commit()
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
