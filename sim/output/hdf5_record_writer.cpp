#include "sim/output/hdf5_record_writer.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <iterator>
#include <stdexcept>

#include <fmt/format.h>
#include <hdf5.h>

#include "sim/config/input_error.hpp"

namespace servesim {

namespace {

template <class T>
constexpr FieldType field_type_of() {
  if constexpr (std::is_same_v<T, std::int32_t>) {
    return FieldType::kInt32;
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    return FieldType::kInt64;
  } else {
    static_assert(std::is_same_v<T, double>, "record fields are int32, int64 or double");
    return FieldType::kDouble;
  }
}

#define SERVESIM_FIELD(Record, member, unit, description)                                 \
  RecordField {                                                                           \
#member, offsetof(Record, member), field_type_of < decltype(Record::member)>(), unit, \
        description                                                                       \
  }

constexpr RecordField kRequestFields[] = {
    SERVESIM_FIELD(RequestRecord, id, "", "request id (workload order)"),
    SERVESIM_FIELD(RequestRecord, arrival_ns, "ns", "arrival time"),
    SERVESIM_FIELD(RequestRecord, first_scheduled_ns, "ns",
                   "first time the request was part of a batch; -1 = never"),
    SERVESIM_FIELD(RequestRecord, first_token_ns, "ns", "first output token time; -1 = never"),
    SERVESIM_FIELD(RequestRecord, finished_ns, "ns", "last output token time; -1 = never"),
    SERVESIM_FIELD(RequestRecord, ttft_ns, "ns",
                   "time to first token, first_token - arrival (engine side: without the "
                   "request overhead summary.json adds); -1 = never"),
    SERVESIM_FIELD(RequestRecord, tpot_ns, "ns",
                   "time per output token after the first, (finished - first_token) / (output "
                   "tokens - 1); -1 for fewer than 2 tokens"),
    SERVESIM_FIELD(RequestRecord, e2e_ns, "ns",
                   "end to end latency, finished - arrival (engine side); -1 = never"),
    SERVESIM_FIELD(RequestRecord, scheduling_delay_ns, "ns",
                   "first_scheduled - arrival; -1 = never"),
    SERVESIM_FIELD(RequestRecord, tbt_max_ns, "ns",
                   "largest gap between two consecutive output tokens; -1 for fewer than 2"),
    SERVESIM_FIELD(RequestRecord, prompt_tokens, "tokens", "prompt length"),
    SERVESIM_FIELD(RequestRecord, output_tokens, "tokens", "output length"),
    SERVESIM_FIELD(RequestRecord, cached_prefix_tokens, "tokens",
                   "prompt tokens served from the prefix cache"),
    SERVESIM_FIELD(RequestRecord, preemptions, "", "times the request was preempted"),
    SERVESIM_FIELD(RequestRecord, replica, "", "replica id; -1 when rejected"),
    SERVESIM_FIELD(RequestRecord, rejected, "",
                   "1 when no replica could ever fit it, 2 when admission control refused it "
                   "(an estimated deadline miss), else 0"),
    SERVESIM_FIELD(RequestRecord, deadline_ns, "ns",
                   "deadline: arrival + its SLO class's TTFT bound, else its E2E bound, less the "
                   "request overhead; -1 = none"),
    SERVESIM_FIELD(RequestRecord, est_wait_ns, "ns",
                   "the router's estimate of scheduling_delay_ns at arrival; -1 = none made"),
    SERVESIM_FIELD(RequestRecord, slo_class, "",
                   "SLO class (index into summary.json slo.classes); -1 = none"),
    SERVESIM_FIELD(RequestRecord, demoted, "",
                   "1 when admission control served it best effort behind the others, else 0"),
    // The speculative columns last: request_record_fields() without them is a prefix.
    SERVESIM_FIELD(RequestRecord, spec_steps, "",
                   "speculative decoding: decode steps that verified draft tokens"),
    SERVESIM_FIELD(RequestRecord, spec_accepted_tokens, "tokens",
                   "speculative decoding: draft tokens accepted"),
};
constexpr std::size_t kSpeculativeRequestFields = 2;

constexpr RecordField kStepFields[] = {
    SERVESIM_FIELD(StepRecord, start_ns, "ns", "step start time"),
    SERVESIM_FIELD(StepRecord, duration_ns, "ns", "priced step duration"),
    SERVESIM_FIELD(StepRecord, kv_blocks_used, "blocks", "KV blocks in use after batch forming"),
    SERVESIM_FIELD(StepRecord, replica, "", "replica id"),
    SERVESIM_FIELD(StepRecord, prefill_tokens, "tokens", "prefill tokens in the batch"),
    SERVESIM_FIELD(StepRecord, num_prefills, "", "requests prefilling in the batch"),
    SERVESIM_FIELD(StepRecord, num_decodes, "", "requests decoding in the batch"),
    SERVESIM_FIELD(StepRecord, preempted, "", "preemptions while forming this batch"),
    SERVESIM_FIELD(StepRecord, running, "", "requests holding KV on the replica after forming"),
    SERVESIM_FIELD(StepRecord, waiting, "", "requests queued on the replica, not admitted"),
    SERVESIM_FIELD(StepRecord, energy_j, "J", "board energy of the replica's GPUs (0: unpriced)"),
};

#undef SERVESIM_FIELD

std::size_t field_size(FieldType type) {
  switch (type) {
    case FieldType::kInt32:
      return 4;
    case FieldType::kInt64:
    case FieldType::kDouble:
      return 8;
  }
  return 8;
}

void check_fields(std::size_t record_size, std::span<const RecordField> fields) {
  if (fields.empty()) throw std::invalid_argument("record writer: no fields");
  for (const RecordField& f : fields) {
    if (f.offset + field_size(f.type) > record_size) {
      throw std::invalid_argument(
          fmt::format("record writer: field '{}' lies outside the record", f.name));
    }
  }
}

// `fields`, checked.
std::vector<RecordField> checked_fields(std::size_t record_size,
                                        std::span<const RecordField> fields) {
  check_fields(record_size, fields);
  return {fields.begin(), fields.end()};
}

// "name: value; name: value" over the fields, skipping empty values.
template <class Get>
std::string join_fields(std::span<const RecordField> fields, Get get) {
  std::string out;
  for (const RecordField& f : fields) {
    const std::string_view value = get(f);
    if (value.empty()) continue;
    if (!out.empty()) out += "; ";
    fmt::format_to(std::back_inserter(out), "{}: {}", f.name, value);
  }
  return out;
}

// Owns one HDF5 identifier; closes it with the matching H5?close.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& o) noexcept : id_(o.id_), closer_(o.closer_) { o.id_ = H5I_INVALID_HID; }
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = o.id_;
      closer_ = o.closer_;
      o.id_ = H5I_INVALID_HID;
    }
    return *this;
  }
  ~Handle() { reset(); }

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  // Closes now; false when HDF5 reports an error.
  bool reset() {
    bool ok = true;
    if (id_ >= 0 && closer_ != nullptr) ok = closer_(id_) >= 0;
    id_ = H5I_INVALID_HID;
    return ok;
  }

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw InputError(fmt::format("{}: {}", path, what));
}

Handle check(hid_t id, Handle::Closer closer, const std::string& path, const char* what) {
  if (id < 0) fail(path, what);
  return Handle(id, closer);
}

void check(herr_t status, const std::string& path, const char* what) {
  if (status < 0) fail(path, what);
}

hid_t native_type(FieldType type) {
  switch (type) {
    case FieldType::kInt32:
      return H5T_NATIVE_INT32;
    case FieldType::kInt64:
      return H5T_NATIVE_INT64;
    case FieldType::kDouble:
      return H5T_NATIVE_DOUBLE;
  }
  return H5T_NATIVE_DOUBLE;
}

// Fixed little-endian file types so files do not depend on the writing machine.
hid_t file_type(FieldType type) {
  switch (type) {
    case FieldType::kInt32:
      return H5T_STD_I32LE;
    case FieldType::kInt64:
      return H5T_STD_I64LE;
    case FieldType::kDouble:
      return H5T_IEEE_F64LE;
  }
  return H5T_IEEE_F64LE;
}

void write_string_attribute(hid_t location, const char* name, const std::string& value,
                            const std::string& path) {
  Handle type = check(H5Tcopy(H5T_C_S1), H5Tclose, path, "cannot create HDF5 string type");
  check(H5Tset_size(type.get(), value.size() + 1), path, "cannot size HDF5 string type");
  check(H5Tset_strpad(type.get(), H5T_STR_NULLTERM), path, "cannot pad HDF5 string type");
  Handle space = check(H5Screate(H5S_SCALAR), H5Sclose, path, "cannot create HDF5 dataspace");
  Handle attribute =
      check(H5Acreate2(location, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
            path, "cannot create HDF5 attribute");
  check(H5Awrite(attribute.get(), type.get(), value.c_str()), path, "cannot write HDF5 attribute");
}

}  // namespace

std::recursive_mutex& hdf5_mutex() {
  static std::recursive_mutex m;
  return m;
}

std::span<const RecordField> request_record_fields(bool speculative) {
  const std::span<const RecordField> all = kRequestFields;
  return speculative ? all : all.first(all.size() - kSpeculativeRequestFields);
}
std::span<const RecordField> step_record_fields() { return kStepFields; }

namespace detail {

struct Hdf5TableWriter::State {
  // Members are destroyed bottom-up, so the file closes last.
  Handle file;
  Handle memory_type;
  Handle dataset;
  std::string dataset_name;
  hsize_t written = 0;
};

Hdf5TableWriter::Hdf5TableWriter(const std::string& path, std::string_view dataset,
                                 std::size_t record_size, std::span<const RecordField> fields,
                                 const Hdf5WriterOptions& options)
    : path_(path),
      record_size_(record_size),
      buffer_rows_(std::max<std::size_t>(options.buffer_rows, 1)) {
  check_fields(record_size, fields);
  const std::lock_guard lock(hdf5_mutex());
  // Library code never prints: HDF5's error stack goes nowhere, failures come back as codes.
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);

  auto state = std::make_unique<State>();
  state->dataset_name = std::string(dataset);

  // No timestamps anywhere (root group included, via the file creation list): identical rows
  // must give identical bytes.
  Handle fcpl = check(H5Pcreate(H5P_FILE_CREATE), H5Pclose, path, "cannot create HDF5 plist");
  check(H5Pset_obj_track_times(fcpl.get(), false), path, "cannot set HDF5 time tracking");
  state->file = check(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, fcpl.get(), H5P_DEFAULT), H5Fclose,
                      path, "cannot create HDF5 file");

  state->memory_type = check(H5Tcreate(H5T_COMPOUND, record_size), H5Tclose, path,
                             "cannot create HDF5 compound type");
  std::size_t packed_size = 0;
  for (const RecordField& f : fields) packed_size += field_size(f.type);
  Handle packed = check(H5Tcreate(H5T_COMPOUND, packed_size), H5Tclose, path,
                        "cannot create HDF5 compound type");
  std::size_t packed_offset = 0;
  for (const RecordField& f : fields) {
    const std::string name(f.name);
    check(H5Tinsert(state->memory_type.get(), name.c_str(), f.offset, native_type(f.type)), path,
          "cannot build HDF5 compound type");
    check(H5Tinsert(packed.get(), name.c_str(), packed_offset, file_type(f.type)), path,
          "cannot build HDF5 compound type");
    packed_offset += field_size(f.type);
  }

  const hsize_t zero = 0;
  const hsize_t unlimited = H5S_UNLIMITED;
  Handle space =
      check(H5Screate_simple(1, &zero, &unlimited), H5Sclose, path, "cannot create dataspace");
  Handle dcpl = check(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, path, "cannot create HDF5 plist");
  const hsize_t chunk = buffer_rows_;
  check(H5Pset_chunk(dcpl.get(), 1, &chunk), path, "cannot set HDF5 chunking");
  check(H5Pset_obj_track_times(dcpl.get(), false), path, "cannot set HDF5 time tracking");
  if (options.deflate_level > 0) {
    check(H5Pset_shuffle(dcpl.get()), path, "cannot set HDF5 shuffle filter");
    check(H5Pset_deflate(dcpl.get(), static_cast<unsigned>(std::min(options.deflate_level, 9))),
          path, "cannot set HDF5 deflate filter");
  }
  state->dataset = check(H5Dcreate2(state->file.get(), state->dataset_name.c_str(), packed.get(),
                                    space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
                         H5Dclose, path, "cannot create HDF5 dataset");

  write_string_attribute(state->file.get(), "servesim_version", options.servesim_version, path);
  write_string_attribute(state->dataset.get(), "servesim_version", options.servesim_version, path);
  write_string_attribute(state->dataset.get(), "units",
                         join_fields(fields, [](const RecordField& f) { return f.unit; }), path);
  write_string_attribute(state->dataset.get(), "descriptions",
                         join_fields(fields, [](const RecordField& f) { return f.description; }),
                         path);

  buffer_.resize(buffer_rows_ * record_size_);
  state_ = std::move(state);
}

Hdf5TableWriter::~Hdf5TableWriter() {
  try {
    close();
  } catch (...) {  // NOLINT(bugprone-empty-catch): destructors must not throw; close() reports
  }
}

void Hdf5TableWriter::append(const void* row) {
  if (!state_) fail(path_, "append to a closed HDF5 record writer");
  std::memcpy(buffer_.data() + buffered_ * record_size_, row, record_size_);
  ++buffered_;
  ++rows_;
  if (buffered_ == buffer_rows_) flush();
}

void Hdf5TableWriter::flush() {
  if (buffered_ == 0) return;
  const std::lock_guard lock(hdf5_mutex());
  const hsize_t start = state_->written;
  const hsize_t count = buffered_;
  const hsize_t new_size = start + count;
  const char* what = "cannot write HDF5 dataset";
  check(H5Dset_extent(state_->dataset.get(), &new_size), path_, what);
  Handle file_space = check(H5Dget_space(state_->dataset.get()), H5Sclose, path_, what);
  check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, &start, nullptr, &count, nullptr),
        path_, what);
  Handle memory_space = check(H5Screate_simple(1, &count, nullptr), H5Sclose, path_, what);
  check(H5Dwrite(state_->dataset.get(), state_->memory_type.get(), memory_space.get(),
                 file_space.get(), H5P_DEFAULT, buffer_.data()),
        path_, what);
  state_->written = new_size;
  buffered_ = 0;
}

void Hdf5TableWriter::close() {
  if (!state_) return;
  const std::lock_guard lock(hdf5_mutex());  // the handles close under it too
  try {
    flush();
  } catch (...) {
    state_.reset();  // close what is open, then report the write error
    throw;
  }
  std::unique_ptr<State> state = std::move(state_);
  bool ok = state->dataset.reset();
  ok = state->memory_type.reset() && ok;
  ok = state->file.reset() && ok;
  if (!ok) fail(path_, "cannot close HDF5 file");
}

CsvTableWriter::CsvTableWriter(const std::string& path, std::size_t record_size,
                               std::span<const RecordField> fields)
    : fields_(checked_fields(record_size, fields)), out_(path, "CSV file") {
  std::string& b = out_.text();
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    if (i > 0) b += ',';
    b += fields_[i].name;
  }
  b += '\n';
}

void CsvTableWriter::append(const void* row) {
  if (out_.closed()) fail(out_.path(), "append to a closed CSV record writer");
  std::string& b = out_.text();
  const auto* bytes = static_cast<const std::byte*>(row);
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    if (i > 0) b += ',';
    const std::byte* p = bytes + fields_[i].offset;
    switch (fields_[i].type) {
      case FieldType::kInt32: {
        std::int32_t v;
        std::memcpy(&v, p, sizeof v);
        const fmt::format_int text(v);
        b.append(text.data(), text.size());
        break;
      }
      case FieldType::kInt64: {
        std::int64_t v;
        std::memcpy(&v, p, sizeof v);
        const fmt::format_int text(v);
        b.append(text.data(), text.size());
        break;
      }
      case FieldType::kDouble: {
        double v;
        std::memcpy(&v, p, sizeof v);
        fmt::format_to(std::back_inserter(b), "{}", v);
        break;
      }
    }
  }
  b += '\n';
  ++rows_;
  out_.maybe_flush();
}

void CsvTableWriter::close() { out_.close(); }

}  // namespace detail

}  // namespace servesim
