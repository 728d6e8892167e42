#include "sim/config/input_error.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

namespace servesim {

void throw_input_error(const std::string& file, int line, int col, const std::string& message) {
  if (col > 0) throw InputError(fmt::format("{}:{}:{}: {}", file, line, col, message));
  if (line > 0) throw InputError(fmt::format("{}:{}: {}", file, line, message));
  throw InputError(fmt::format("{}: {}", file, message));
}

std::string unreadable_reason(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) return ec.message();
  if (!fs::exists(st)) return "no such file";
  if (fs::is_directory(st)) return "is a folder";
  if (!fs::is_regular_file(st)) return "is not a regular file (a device, pipe or socket)";
  if (!std::ifstream(path)) return "cannot be opened for reading";
  return "";
}

std::ifstream open_input_file(const std::string& path, std::string_view expected,
                              std::uintmax_t max_bytes) {
  if (const std::string why = unreadable_reason(path); !why.empty()) {
    throw InputError(fmt::format("{}: {} (expected {})", path, why, expected));
  }
  if (max_bytes > 0) {
    std::error_code ec;
    const std::uintmax_t size = std::filesystem::file_size(path, ec);
    if (!ec && size > max_bytes) {
      throw InputError(fmt::format("{}: is {} bytes, more than the {} bytes {} may have", path,
                                   size, max_bytes, expected));
    }
  }
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("{}: cannot be opened (expected {})", path, expected));
  return in;
}

bool is_folder(const std::filesystem::path& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec) && !ec;
}

bool is_regular(const std::filesystem::path& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec) && !ec;
}

std::vector<std::filesystem::path> files_in(const std::filesystem::path& dir, std::string_view ext,
                                            bool recursive, std::string_view who) {
  namespace fs = std::filesystem;
  std::vector<fs::path> out;
  std::error_code ec;
  const auto fail = [&] {
    throw InputError(
        fmt::format("{}: cannot read folder '{}': {}", who, dir.string(), ec.message()));
  };
  const auto take = [&](const fs::directory_entry& e) {
    std::error_code fec;
    const std::string name = e.path().filename().string();
    if (e.is_regular_file(fec) && !fec && name.size() >= ext.size() &&
        name.compare(name.size() - ext.size(), ext.size(), ext) == 0) {
      out.push_back(e.path());
    }
  };
  // An iterator whose increment fails becomes the end one, with ec set.
  const auto walk = [&](auto it) {
    if (ec) fail();
    for (; it != decltype(it){}; it.increment(ec)) take(*it);
    if (ec) fail();
  };
  if (recursive) {
    walk(fs::recursive_directory_iterator(dir, ec));
  } else {
    walk(fs::directory_iterator(dir, ec));
  }
  std::sort(out.begin(), out.end());
  return out;
}

void make_output_folder(const std::string& dir, std::string_view who) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !is_folder(dir)) {
    throw InputError(fmt::format("{}: cannot create the folder '{}' ({})", who, dir,
                                 ec ? ec.message() : "a file of that name exists"));
  }
}

std::string display_path(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path cwd = std::filesystem::current_path(ec);
  if (ec || !std::filesystem::path(path).is_absolute()) return path;
  const std::filesystem::path rel = std::filesystem::path(path).lexically_relative(cwd);
  return !rel.empty() && *rel.begin() != ".." ? rel.string() : path;
}

std::string absolute_path(const std::filesystem::path& path) {
  std::error_code ec;
  const std::filesystem::path a = std::filesystem::absolute(path, ec);
  return (ec ? path : a).lexically_normal().string();
}

}  // namespace servesim
