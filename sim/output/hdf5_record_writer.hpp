#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "sim/engine/records.hpp"
#include "sim/output/buffered_file.hpp"

namespace servesim {

// The scalar kinds a record field may have.
enum class FieldType { kInt32, kInt64, kDouble };

// One column of a fixed-layout record: where it lives in the struct and what it means.
struct RecordField {
  std::string_view name;  // column / HDF5 member name
  std::size_t offset;     // offsetof(Record, member)
  FieldType type;
  std::string_view unit;  // "ns", "tokens", "blocks", "" for plain counts and ids
  std::string_view description;
};

// Every member of RequestRecord / StepRecord, in declaration order (RequestRecord's speculative
// decoding columns only for a run that speculates).
std::span<const RecordField> request_record_fields(bool speculative = false);
std::span<const RecordField> step_record_fields();

// The process-wide lock around HDF5 calls (the record writers, the RF cache): HDF5 built without
// its thread-safe option must not be entered by two threads at once.
std::recursive_mutex& hdf5_mutex();

struct Hdf5WriterOptions {
  std::string servesim_version = "unknown";  // written as the `servesim_version` attribute
  std::size_t buffer_rows = 65536;  // rows buffered between writes; also the HDF5 chunk length
  int deflate_level = 1;            // 0 = uncompressed, 1..9 = shuffle + deflate
};

namespace detail {

// Untyped core of Hdf5RecordWriter: rows are `record_size` bytes laid out as `fields` say.
class Hdf5TableWriter {
 public:
  Hdf5TableWriter(const std::string& path, std::string_view dataset, std::size_t record_size,
                  std::span<const RecordField> fields, const Hdf5WriterOptions& options);
  ~Hdf5TableWriter();
  Hdf5TableWriter(const Hdf5TableWriter&) = delete;
  Hdf5TableWriter& operator=(const Hdf5TableWriter&) = delete;

  void append(const void* row);
  void close();
  std::int64_t rows() const { return rows_; }

 private:
  struct State;
  void flush();

  std::string path_;
  std::size_t record_size_;
  std::size_t buffer_rows_;
  std::vector<std::byte> buffer_;
  std::size_t buffered_ = 0;
  std::int64_t rows_ = 0;
  std::unique_ptr<State> state_;  // null once closed
};

// Untyped core of CsvRecordWriter.
class CsvTableWriter {
 public:
  CsvTableWriter(const std::string& path, std::size_t record_size,
                 std::span<const RecordField> fields);

  void append(const void* row);
  void close();
  std::int64_t rows() const { return rows_; }

 private:
  std::vector<RecordField> fields_;
  BufferedFile out_;
  std::int64_t rows_ = 0;
};

}  // namespace detail

// Streams fixed-layout records into one HDF5 file holding one chunked, extendible compound
// dataset `dataset` (members named and typed by `fields`, packed in the file), with string
// attributes `servesim_version`, `units` and `descriptions` ("name: value; name: value; …") on
// the dataset and `servesim_version` on the file. append() copies into a buffer of
// options.buffer_rows rows and writes it out when full; close() writes the rest. Memory stays
// flat in the number of rows.
// Invariants: the file holds rows() rows after close(); identical rows give byte-identical
// files (no timestamps are stored). Errors opening or writing throw InputError naming the path;
// the destructor closes and swallows errors (call close() to see them).
// Threading: one thread per writer. Writers on different threads may run at once (the runs of a
// sweep with --keep-runs): every HDF5 call they make holds hdf5_mutex(), so this is safe whether
// or not the HDF5 library was built thread-safe (Debian's is).
template <class Record>
class Hdf5RecordWriter {
  static_assert(std::is_trivially_copyable_v<Record>);

 public:
  Hdf5RecordWriter(const std::string& path, std::string_view dataset,
                   std::span<const RecordField> fields, const Hdf5WriterOptions& options = {})
      : table_(path, dataset, sizeof(Record), fields, options) {}

  void append(const Record& record) { table_.append(&record); }
  void close() { table_.close(); }  // idempotent; append() after close() throws
  std::int64_t rows() const { return table_.rows(); }

 private:
  detail::Hdf5TableWriter table_;
};

// Streams the same records as CSV: a header line of field names, then one line per row
// (integers in decimal, doubles in shortest round-trip form). Same error, close and threading
// rules as Hdf5RecordWriter; output is deterministic.
template <class Record>
class CsvRecordWriter {
  static_assert(std::is_trivially_copyable_v<Record>);

 public:
  CsvRecordWriter(const std::string& path, std::span<const RecordField> fields)
      : table_(path, sizeof(Record), fields) {}

  void append(const Record& record) { table_.append(&record); }
  void close() { table_.close(); }
  std::int64_t rows() const { return table_.rows(); }

 private:
  detail::CsvTableWriter table_;
};

}  // namespace servesim
