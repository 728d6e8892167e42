#include "costmodels/rf/rf_cache.hpp"

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <mutex>
#include <system_error>
#include <thread>

#include <H5Cpp.h>
#include <fmt/format.h>

#include "sim/output/hdf5_record_writer.hpp"

namespace servesim {
namespace fs = std::filesystem;
namespace {

constexpr int kFormatVersion = 1;

void write_attr(H5::H5Object& obj, const char* name, double v) {
  obj.createAttribute(name, H5::PredType::NATIVE_DOUBLE, H5::DataSpace())
      .write(H5::PredType::NATIVE_DOUBLE, &v);
}
double read_attr(const H5::H5Object& obj, const char* name) {
  double v = 0;
  obj.openAttribute(name).read(H5::PredType::NATIVE_DOUBLE, &v);
  return v;
}
void write_string(H5::H5Object& obj, const char* name, const std::string& s) {
  const H5::StrType type(H5::PredType::C_S1, std::max<std::size_t>(1, s.size()));
  obj.createAttribute(name, type, H5::DataSpace()).write(type, s.c_str());
}
std::string read_string(const H5::H5Object& obj, const char* name) {
  const H5::Attribute a = obj.openAttribute(name);
  std::string s;
  a.read(a.getStrType(), s);
  return s;
}

void write_vector(H5::Group& g, const char* name, const std::vector<double>& v) {
  const hsize_t dims[1] = {v.size()};
  H5::DataSet d = g.createDataSet(name, H5::PredType::NATIVE_DOUBLE, H5::DataSpace(1, dims));
  if (!v.empty()) d.write(v.data(), H5::PredType::NATIVE_DOUBLE);
}
std::vector<double> read_vector(const H5::Group& g, const char* name) {
  const H5::DataSet d = g.openDataSet(name);
  hsize_t dims[1] = {0};
  d.getSpace().getSimpleExtentDims(dims);
  std::vector<double> v(dims[0]);
  if (!v.empty()) d.read(v.data(), H5::PredType::NATIVE_DOUBLE);
  return v;
}

void write_fn(H5::H5File& f, const std::string& name, const StepFunction& fn) {
  H5::Group g = f.createGroup("/" + name);
  write_vector(g, "starts", fn.starts);
  write_vector(g, "values_ms", fn.values);
  write_attr(g, "domain_max", fn.domain_max);
}
StepFunction read_fn(const H5::H5File& f, const std::string& name) {
  StepFunction fn;
  const H5::Group g = f.openGroup("/" + name);
  fn.starts = read_vector(g, "starts");
  fn.values = read_vector(g, "values_ms");
  fn.domain_max = read_attr(g, "domain_max");
  if (fn.starts.size() != fn.values.size()) throw H5::Exception("rf cache", "ragged table");
  return fn;
}

}  // namespace

std::string RfCache::default_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x != '\0') {
    return (fs::path(x) / "servesim").string();
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return (fs::path(home) / ".cache" / "servesim").string();
  }
  return "";
}

std::string RfCache::path(std::uint64_t key) const {
  return (fs::path(dir_) / fmt::format("rf-{:016x}.h5", key)).string();
}

std::optional<RfTables> RfCache::load(std::uint64_t key) const {
  if (!enabled()) return std::nullopt;
  const std::string p = path(key);
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) return std::nullopt;
  const std::lock_guard lock(hdf5_mutex());  // the objects below close under it too
  try {
    H5::Exception::dontPrint();
    const H5::H5File f(p, H5F_ACC_RDONLY);
    const H5::Group root = f.openGroup("/");
    if (read_string(root, "key") != fmt::format("{:016x}", key)) return std::nullopt;
    if (read_attr(root, "format_version") != kFormatVersion) return std::nullopt;
    RfTables t;
    t.model_id = read_string(root, "model_id");
    t.tp = static_cast<int>(read_attr(root, "tp"));
    t.mlp_rows = static_cast<int>(read_attr(root, "mlp_rows"));
    t.network_rows = static_cast<int>(read_attr(root, "network_rows"));
    t.train_seconds = read_attr(root, "train_seconds");
    t.cv_block_mape = read_attr(root, "cv_block_mape");
    t.cv_decode_mape = read_attr(root, "cv_decode_mape");
    t.cv_prefill_mape = read_attr(root, "cv_prefill_mape");
    t.cv_n = static_cast<int>(read_attr(root, "cv_n"));
    t.cv_decode_n = static_cast<int>(read_attr(root, "cv_decode_n"));
    t.cv_prefill_n = static_cast<int>(read_attr(root, "cv_prefill_n"));
    for (std::size_t op = 0; op < kNumVidurOps; ++op) {
      const std::string name(vidur_op_name(static_cast<VidurOp>(op)));
      if (!f.nameExists("/" + name)) continue;
      t.ops[op] = read_fn(f, name);
      const H5::Group g = f.openGroup("/" + name);
      t.depth[op] = static_cast<int>(read_attr(g, "depth"));
      t.cv_mape[op] = read_attr(g, "cv_mape");
    }
    if (f.nameExists("/all_reduce")) t.all_reduce = read_fn(f, "all_reduce");
    return t;
  } catch (const H5::Exception&) {
    return std::nullopt;
  }
}

bool RfCache::store(std::uint64_t key, const RfTables& t) const {
  if (!enabled()) return false;
  const std::string final_path = path(key);
  const std::string tmp =
      final_path + fmt::format(".tmp{}", std::hash<std::thread::id>{}(std::this_thread::get_id()));
  std::error_code ec;
  fs::create_directories(dir_, ec);
  const std::lock_guard lock(hdf5_mutex());
  try {
    H5::Exception::dontPrint();
    {
      H5::H5File f(tmp, H5F_ACC_TRUNC);
      H5::Group root = f.openGroup("/");
      write_string(root, "key", fmt::format("{:016x}", key));
      write_attr(root, "format_version", kFormatVersion);
      write_string(root, "model_id", t.model_id);
      write_attr(root, "tp", t.tp);
      write_attr(root, "mlp_rows", t.mlp_rows);
      write_attr(root, "network_rows", t.network_rows);
      write_attr(root, "train_seconds", t.train_seconds);
      write_attr(root, "cv_block_mape", t.cv_block_mape);
      write_attr(root, "cv_decode_mape", t.cv_decode_mape);
      write_attr(root, "cv_prefill_mape", t.cv_prefill_mape);
      write_attr(root, "cv_n", t.cv_n);
      write_attr(root, "cv_decode_n", t.cv_decode_n);
      write_attr(root, "cv_prefill_n", t.cv_prefill_n);
      for (std::size_t op = 0; op < kNumVidurOps; ++op) {
        if (t.ops[op].empty()) continue;
        const std::string name(vidur_op_name(static_cast<VidurOp>(op)));
        write_fn(f, name, t.ops[op]);
        H5::Group g = f.openGroup("/" + name);
        write_attr(g, "depth", t.depth[op]);
        write_attr(g, "cv_mape", t.cv_mape[op]);
      }
      if (!t.all_reduce.empty()) write_fn(f, "all_reduce", t.all_reduce);
    }
    fs::rename(tmp, final_path, ec);
    if (ec) fs::remove(tmp, ec);
    return !ec;
  } catch (const H5::Exception&) {
    fs::remove(tmp, ec);
    return false;
  }
}

}  // namespace servesim
