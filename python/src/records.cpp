#include "python/src/records.hpp"

#include <algorithm>
#include <cstring>
#include <span>

#include <pybind11/numpy.h>

#include "sim/output/hdf5_record_writer.hpp"
#include "sim/output/output_writers.hpp"

namespace py = pybind11;

namespace servesim::python {

namespace {

// NumPy's name of a field type: the file's fixed little-endian types.
const char* numpy_type(FieldType type) {
  switch (type) {
    case FieldType::kInt32:
      return "<i4";
    case FieldType::kInt64:
      return "<i8";
    case FieldType::kDouble:
      return "<f8";
  }
  return "<f8";
}

std::size_t field_bytes(FieldType type) { return type == FieldType::kInt32 ? 4 : 8; }

// The packed structured dtype of `fields`.
py::dtype packed_dtype(std::span<const RecordField> fields) {
  py::list spec;
  for (const RecordField& f : fields)
    spec.append(py::make_tuple(std::string(f.name), numpy_type(f.type)));
  return py::dtype::from_args(spec);
}

// `rows` copied field by field into a packed array (the structs have padding; the array has
// none, as the HDF5 file's compound type). Host byte order is little-endian on every target.
template <class Record>
py::object packed_array(const std::vector<Record>& rows, std::span<const RecordField> fields) {
  const std::vector<py::ssize_t> shape{static_cast<py::ssize_t>(rows.size())};
  py::array out(packed_dtype(fields), shape);
  auto* dst = static_cast<std::byte*>(out.mutable_data());
  for (const Record& row : rows) {
    const auto* src = reinterpret_cast<const std::byte*>(&row);
    for (const RecordField& f : fields) {
      const std::size_t n = field_bytes(f.type);
      std::memcpy(dst, src + f.offset, n);
      dst += n;
    }
  }
  return out;
}

py::list schema_of(std::span<const RecordField> fields) {
  py::list out;
  for (const RecordField& f : fields) {
    out.append(py::make_tuple(std::string(f.name), numpy_type(f.type), std::string(f.unit),
                              std::string(f.description)));
  }
  return out;
}

}  // namespace

void RecordCollector::on_step(const StepRecord& step, const BatchShape& /*shape*/,
                              const StepCost& /*cost*/) {
  steps_.push_back(step);
}

void RecordCollector::on_request_done(const Request& request, bool rejected) {
  requests_.push_back(make_request_record(request, rejected));
}

void RecordCollector::sort_requests() {
  std::sort(requests_.begin(), requests_.end(),
            [](const RequestRecord& a, const RequestRecord& b) { return a.id < b.id; });
}

py::object RecordCollector::requests_array() const {
  return packed_array(requests_, request_record_fields(speculative_));
}

py::object RecordCollector::steps_array() const {
  return packed_array(steps_, step_record_fields());
}

py::dict record_schema(bool speculative) {
  py::dict out;
  out["requests"] = schema_of(request_record_fields(speculative));
  out["steps"] = schema_of(step_record_fields());
  return out;
}

}  // namespace servesim::python
