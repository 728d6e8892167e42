#pragma once

#include <vector>

#include <pybind11/pybind11.h>

#include "sim/engine/run_observer.hpp"

namespace servesim::python {

// Keeps a run's request and step rows in memory: the rows requests.h5 and steps.h5 would hold.
// Threading: one run's thread fills it; Python reads it after the run.
class RecordCollector final : public RunObserver {
 public:
  void on_step(const StepRecord& step, const BatchShape& shape, const StepCost& cost) override;
  void on_request_done(const Request& request, bool rejected) override;

  // The run speculates: the request rows carry the speculative columns, as requests.h5 does.
  void set_speculative(bool on) { speculative_ = on; }

  // Requests in id order, as requests.h5 holds them (call once the run is over).
  void sort_requests();

  // NumPy structured arrays with the files' packed layout: one field per RecordField, in the
  // table's order, little-endian (request_record_fields(speculative), step_record_fields()).
  pybind11::object requests_array() const;
  pybind11::object steps_array() const;

  std::size_t num_requests() const { return requests_.size(); }
  std::size_t num_steps() const { return steps_.size(); }

 private:
  std::vector<RequestRecord> requests_;
  std::vector<StepRecord> steps_;
  bool speculative_ = false;
};

// The two tables' fields: {"requests": [(name, numpy type, unit, description), …], "steps": …},
// from the RecordField tables the HDF5 writer uses; `speculative`: with the request columns of a
// run that speculates.
pybind11::dict record_schema(bool speculative);

}  // namespace servesim::python
