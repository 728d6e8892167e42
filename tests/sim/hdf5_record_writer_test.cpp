#include "sim/output/hdf5_record_writer.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <H5Cpp.h>
#include <catch2/catch.hpp>

#include "sim/config/input_error.hpp"
#include "tests/sim/test_output.hpp"

namespace servesim {
namespace {

namespace fs = std::filesystem;

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Row i of a deterministic step table. `padding` fills the struct's padding bytes first, so two
// calls with different padding give equal fields but different raw bytes.
StepRecord step_row(std::int64_t i, unsigned char padding = 0) {
  StepRecord r;
  std::memset(&r, padding, sizeof r);
  r.start_ns = i * 1'000'003 + (i % 7);
  r.duration_ns = 20'000'000 + (i * 37) % 1'000'000;
  r.kv_blocks_used = (i * 13) % 100'000 + (std::int64_t{1} << 33);  // needs 64 bits
  r.replica = static_cast<std::int32_t>(i % 16);
  r.prefill_tokens = static_cast<std::int32_t>((i * 97) % 8192);
  r.num_prefills = static_cast<std::int32_t>(i % 5);
  r.running = static_cast<std::int32_t>(i % 129);
  r.waiting = static_cast<std::int32_t>(i % 3);
  r.num_decodes = static_cast<std::int32_t>((i * 31) % 256);
  r.preempted = static_cast<std::int32_t>(i % 3 == 0 ? -1 : i % 3);
  r.energy_j = 0.25 * static_cast<double>(i % 1000) + 1e-3;
  return r;
}

void write_steps(const fs::path& path, std::int64_t n, unsigned char padding,
                 Hdf5WriterOptions options = {}) {
  Hdf5RecordWriter<StepRecord> writer(path.string(), "steps", step_record_fields(), options);
  for (std::int64_t i = 0; i < n; ++i) writer.append(step_row(i, padding));
  CHECK(writer.rows() == n);
  writer.close();
}

std::string read_string_attribute(const H5::H5Object& object, const char* name) {
  H5::Attribute attribute = object.openAttribute(name);
  std::string value;
  attribute.read(attribute.getStrType(), value);
  return value;
}

std::vector<StepRecord> read_steps(const fs::path& path) {
  H5::H5File file(path.string(), H5F_ACC_RDONLY);
  H5::DataSet dataset = file.openDataSet("steps");
  hsize_t n = 0;
  dataset.getSpace().getSimpleExtentDims(&n);
  H5::CompType type(sizeof(StepRecord));
  type.insertMember("start_ns", HOFFSET(StepRecord, start_ns), H5::PredType::NATIVE_INT64);
  type.insertMember("duration_ns", HOFFSET(StepRecord, duration_ns), H5::PredType::NATIVE_INT64);
  type.insertMember("kv_blocks_used", HOFFSET(StepRecord, kv_blocks_used),
                    H5::PredType::NATIVE_INT64);
  type.insertMember("replica", HOFFSET(StepRecord, replica), H5::PredType::NATIVE_INT32);
  type.insertMember("prefill_tokens", HOFFSET(StepRecord, prefill_tokens),
                    H5::PredType::NATIVE_INT32);
  type.insertMember("num_prefills", HOFFSET(StepRecord, num_prefills), H5::PredType::NATIVE_INT32);
  type.insertMember("num_decodes", HOFFSET(StepRecord, num_decodes), H5::PredType::NATIVE_INT32);
  type.insertMember("preempted", HOFFSET(StepRecord, preempted), H5::PredType::NATIVE_INT32);
  type.insertMember("running", HOFFSET(StepRecord, running), H5::PredType::NATIVE_INT32);
  type.insertMember("waiting", HOFFSET(StepRecord, waiting), H5::PredType::NATIVE_INT32);
  type.insertMember("energy_j", HOFFSET(StepRecord, energy_j), H5::PredType::NATIVE_DOUBLE);
  std::vector<StepRecord> rows(n);
  if (n > 0) dataset.read(rows.data(), type);
  return rows;
}

bool same_fields(const StepRecord& a, const StepRecord& b) {
  return a.start_ns == b.start_ns && a.duration_ns == b.duration_ns &&
         a.kv_blocks_used == b.kv_blocks_used && a.replica == b.replica &&
         a.prefill_tokens == b.prefill_tokens && a.num_prefills == b.num_prefills &&
         a.num_decodes == b.num_decodes && a.preempted == b.preempted && a.running == b.running &&
         a.waiting == b.waiting && a.energy_j == b.energy_j;
}

std::size_t field_bytes(std::span<const RecordField> fields) {
  std::size_t total = 0;
  for (const RecordField& f : fields) total += f.type == FieldType::kInt32 ? 4 : 8;
  return total;
}

TEST_CASE("the field tables cover every member of the records once", "[hdf5_record_writer]") {
  // Sums of the member sizes as declared in sim/engine/records.hpp: a forgotten member shows here.
  CHECK(request_record_fields().size() == 20);
  CHECK(field_bytes(request_record_fields()) == 12 * 8 + 8 * 4);
  CHECK(step_record_fields().size() == 11);
  CHECK(field_bytes(step_record_fields()) == 3 * 8 + 7 * 4 + 8);
  for (auto fields : {request_record_fields(), step_record_fields()}) {
    std::set<std::size_t> offsets;
    std::set<std::string_view> names;
    for (const RecordField& f : fields) {
      offsets.insert(f.offset);
      names.insert(f.name);
      CHECK_FALSE(f.description.empty());
    }
    CHECK(offsets.size() == fields.size());
    CHECK(names.size() == fields.size());
  }
  CHECK(step_record_fields()[0].name == "start_ns");
  CHECK(step_record_fields()[0].unit == "ns");
  CHECK(request_record_fields()[1].offset == offsetof(RequestRecord, arrival_ns));
}

TEST_CASE("200k step records read back from HDF5 with the same values and count",
          "[hdf5_record_writer]") {
  const fs::path path = test::test_output_dir("hdf5_record_writer") / "steps.h5";
  constexpr std::int64_t kRows = 200'000;  // three full buffers of 65536 and a partial one
  Hdf5WriterOptions options;
  options.servesim_version = "9.8.7-test";
  write_steps(path, kRows, 0xAB, options);

  const std::vector<StepRecord> rows = read_steps(path);
  REQUIRE(rows.size() == static_cast<std::size_t>(kRows));
  std::int64_t mismatches = 0;
  for (std::int64_t i = 0; i < kRows; ++i) {
    if (!same_fields(rows[static_cast<std::size_t>(i)], step_row(i))) ++mismatches;
  }
  CHECK(mismatches == 0);
  CHECK(rows.back().kv_blocks_used == step_row(kRows - 1).kv_blocks_used);

  H5::H5File file(path.string(), H5F_ACC_RDONLY);
  H5::DataSet dataset = file.openDataSet("steps");
  CHECK(read_string_attribute(dataset, "servesim_version") == "9.8.7-test");
  CHECK(read_string_attribute(file, "servesim_version") == "9.8.7-test");
  const std::string units = read_string_attribute(dataset, "units");
  CHECK(units.find("start_ns: ns; duration_ns: ns; kv_blocks_used: blocks") == 0);
  CHECK(read_string_attribute(dataset, "descriptions").find("replica: replica id") !=
        std::string::npos);
  // Packed in the file: 60 bytes a row, not the 64 of the padded struct.
  CHECK(dataset.getCompType().getSize() == 60);
  CHECK(dataset.getCreatePlist().getLayout() == H5D_CHUNKED);
}

TEST_CASE("request records round-trip through HDF5, including -1 times", "[hdf5_record_writer]") {
  const fs::path path = test::test_output_dir("hdf5_record_writer") / "requests.h5";
  RequestRecord served{7,  1'000, 2'000, 3'000, 9'000, 2'000, 95.238, 8'000, 1'000, 700, 512,
                       64, 128,   2,     3,     0,     8'001, 900,    1,     0,     0,   0};
  RequestRecord rejected{8,  1'500, -1, -1, -1, -1,    -1.0, -1, -1, -1, 900'000,
                         10, 0,     0,  -1, 2,  5'000, 40,   0,  0,  0,  0};
  {
    Hdf5RecordWriter<RequestRecord> writer(path.string(), "requests", request_record_fields());
    writer.append(served);
    writer.append(rejected);
  }  // the destructor closes
  H5::H5File file(path.string(), H5F_ACC_RDONLY);
  H5::DataSet dataset = file.openDataSet("requests");
  hsize_t n = 0;
  dataset.getSpace().getSimpleExtentDims(&n);
  REQUIRE(n == 2);
  H5::CompType type(sizeof(std::int64_t));
  type.insertMember("first_token_ns", 0, H5::PredType::NATIVE_INT64);
  std::int64_t first_token[2] = {0, 0};
  dataset.read(first_token, type);
  CHECK(first_token[0] == 3'000);
  CHECK(first_token[1] == -1);
  H5::CompType replica_type(sizeof(std::int32_t));
  replica_type.insertMember("replica", 0, H5::PredType::NATIVE_INT32);
  std::int32_t replica[2] = {0, 0};
  dataset.read(replica, replica_type);
  CHECK(replica[0] == 3);
  CHECK(replica[1] == -1);
  H5::CompType tpot_type(sizeof(double));
  tpot_type.insertMember("tpot_ns", 0, H5::PredType::NATIVE_DOUBLE);
  double tpot[2] = {0, 0};
  dataset.read(tpot, tpot_type);
  CHECK(tpot[0] == 95.238);
  CHECK(tpot[1] == -1);
  H5::CompType est_type(sizeof(std::int64_t));
  est_type.insertMember("est_wait_ns", 0, H5::PredType::NATIVE_INT64);
  std::int64_t est[2] = {0, 0};
  dataset.read(est, est_type);
  CHECK(est[0] == 900);
  CHECK(est[1] == 40);
  H5::CompType rejected_type(sizeof(std::int32_t));
  rejected_type.insertMember("rejected", 0, H5::PredType::NATIVE_INT32);
  std::int32_t why[2] = {-1, -1};
  dataset.read(why, rejected_type);
  CHECK(why[0] == 0);
  CHECK(why[1] == 2);
  CHECK(read_string_attribute(dataset, "units").find("arrival_ns: ns") != std::string::npos);
}

TEST_CASE("an HDF5 file without rows holds an empty dataset", "[hdf5_record_writer]") {
  const fs::path path = test::test_output_dir("hdf5_record_writer") / "empty.h5";
  write_steps(path, 0, 0);
  CHECK(read_steps(path).empty());
}

TEST_CASE("writing the same rows twice gives byte-identical HDF5 files", "[hdf5_record_writer]") {
  const fs::path a = test::test_output_dir("hdf5_record_writer") / "same_a.h5";
  const fs::path b = test::test_output_dir("hdf5_record_writer") / "same_b.h5";
  Hdf5WriterOptions options;
  options.buffer_rows = 4096;
  // Different garbage in the struct padding must not reach the file.
  write_steps(a, 20'000, 0x11, options);
  write_steps(b, 20'000, 0xEE, options);
  const std::string bytes_a = read_bytes(a);
  CHECK(bytes_a.size() > 1000);
  CHECK(bytes_a == read_bytes(b));
  // Byte equality within one second would not notice timestamps: ask HDF5 directly.
  H5::H5File file(a.string(), H5F_ACC_RDONLY);
  for (const char* object : {"/", "/steps"}) {
    H5O_info_t info;
    REQUIRE(H5Oget_info_by_name2(file.getId(), object, &info, H5O_INFO_TIME, H5P_DEFAULT) >= 0);
    INFO(object);
    CHECK(info.ctime == 0);
    CHECK(info.mtime == 0);
    CHECK(info.btime == 0);
  }
  file.close();

  // And the comparison can see a difference: one changed row changes the bytes.
  Hdf5RecordWriter<StepRecord> writer(b.string(), "steps", step_record_fields(), options);
  for (std::int64_t i = 0; i < 20'000; ++i) {
    StepRecord r = step_row(i, 0x11);
    if (i == 12'345) r.num_decodes += 1;
    writer.append(r);
  }
  writer.close();
  CHECK(bytes_a != read_bytes(b));
}

TEST_CASE("h5dump can read the header of a written file", "[hdf5_record_writer]") {
  if (std::system("command -v h5dump > /dev/null 2>&1") != 0) {
    WARN("h5dump not installed (Debian package hdf5-tools): skipping");
    return;
  }
  const fs::path path = test::test_output_dir("hdf5_record_writer") / "dump.h5";
  const fs::path listing = test::test_output_dir("hdf5_record_writer") / "dump.txt";
  write_steps(path, 1000, 0);
  const std::string command = "h5dump -H '" + path.string() + "' > '" + listing.string() + "'";
  REQUIRE(std::system(command.c_str()) == 0);
  const std::string text = read_bytes(listing);
  CHECK(text.find("DATASET \"steps\"") != std::string::npos);
  CHECK(text.find("H5T_STD_I64LE \"kv_blocks_used\"") != std::string::npos);
  CHECK(text.find("( 1000 ) / ( H5S_UNLIMITED )") != std::string::npos);
  CHECK(text.find("ATTRIBUTE \"servesim_version\"") != std::string::npos);
}

TEST_CASE("the CSV writer writes a header and one line per row", "[hdf5_record_writer]") {
  const fs::path path = test::test_output_dir("hdf5_record_writer") / "steps.csv";
  CsvRecordWriter<StepRecord> writer(path.string(), step_record_fields());
  writer.append(StepRecord{0, 25'000'000, 12, 0, 512, 1, 37, 0, 38, 5, 9.5});
  writer.append(StepRecord{25'000'000, 8'000'000, 14, 1, 0, 0, 38, -1, 38, 0, 0});
  CHECK(writer.rows() == 2);
  writer.close();
  writer.close();  // idempotent
  CHECK(read_bytes(path) ==
        "start_ns,duration_ns,kv_blocks_used,replica,prefill_tokens,num_prefills,num_decodes,"
        "preempted,running,waiting,energy_j\n"
        "0,25000000,12,0,512,1,37,0,38,5,9.5\n"
        "25000000,8000000,14,1,0,0,38,-1,38,0,0\n");
  CHECK_THROWS_AS(writer.append(StepRecord{}), InputError);
}

struct Mixed {
  std::int32_t a;
  double b;
  std::int64_t c;
};

TEST_CASE("a custom field table with doubles writes to CSV and HDF5", "[hdf5_record_writer]") {
  static constexpr RecordField kFields[] = {
      {"a", offsetof(Mixed, a), FieldType::kInt32, "", "an int"},
      {"b", offsetof(Mixed, b), FieldType::kDouble, "s", "a double"},
      {"c", offsetof(Mixed, c), FieldType::kInt64, "ns", "a long"},
  };
  const fs::path csv = test::test_output_dir("hdf5_record_writer") / "mixed.csv";
  const fs::path h5 = test::test_output_dir("hdf5_record_writer") / "mixed.h5";
  {
    CsvRecordWriter<Mixed> writer(csv.string(), kFields);
    writer.append(Mixed{1, 0.1, -3});
    writer.append(Mixed{2, 2.5e-9, 1LL << 40});
  }
  CHECK(read_bytes(csv) == "a,b,c\n1,0.1,-3\n2,2.5e-09,1099511627776\n");
  {
    Hdf5RecordWriter<Mixed> writer(h5.string(), "mixed", kFields);
    writer.append(Mixed{1, 0.1, -3});
  }
  H5::H5File file(h5.string(), H5F_ACC_RDONLY);
  H5::DataSet dataset = file.openDataSet("mixed");
  H5::CompType type(sizeof(double));
  type.insertMember("b", 0, H5::PredType::NATIVE_DOUBLE);
  double b = 0;
  dataset.read(&b, type);
  CHECK(b == 0.1);
  CHECK(read_string_attribute(dataset, "units") == "b: s; c: ns");
}

TEST_CASE("a file that cannot be created throws InputError naming the path",
          "[hdf5_record_writer]") {
  const std::string h5 =
      (test::test_output_dir("hdf5_record_writer") / "no_such_dir" / "steps.h5").string();
  const std::string csv =
      (test::test_output_dir("hdf5_record_writer") / "no_such_dir" / "steps.csv").string();
  try {
    Hdf5RecordWriter<StepRecord> writer(h5, "steps", step_record_fields());
    FAIL("no exception");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find(h5) == 0);
  }
  try {
    CsvRecordWriter<StepRecord> writer(csv, step_record_fields());
    FAIL("no exception");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find(csv) == 0);
  }
}

}  // namespace
TEST_CASE("HDF5 writers on several threads at once each write a complete file",
          "[hdf5_record_writer]") {
  // The runs of a sweep with --keep-runs write their files concurrently.
  constexpr int kWriters = 4;
  constexpr std::int64_t kRows = 70'000;  // more than one buffer each
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([w] {
      Hdf5WriterOptions options;
      options.buffer_rows = 4096;
      write_steps(
          test::test_output_dir("hdf5_record_writer") / ("concurrent_" + std::to_string(w) + ".h5"),
          kRows, static_cast<unsigned char>(w), options);
    });
  }
  for (auto& t : threads) t.join();
  for (int w = 0; w < kWriters; ++w) {
    const auto rows = read_steps(test::test_output_dir("hdf5_record_writer") /
                                 ("concurrent_" + std::to_string(w) + ".h5"));
    REQUIRE(rows.size() == static_cast<std::size_t>(kRows));
    CHECK(same_fields(rows.back(), step_row(kRows - 1)));
  }
}

}  // namespace servesim
