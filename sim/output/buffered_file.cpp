#include "sim/output/buffered_file.hpp"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "sim/config/input_error.hpp"

namespace servesim {

BufferedFile::BufferedFile(std::string path, std::string what)
    : path_(std::move(path)), what_(std::move(what)) {
  file_ = std::fopen(path_.c_str(), "wb");
  if (file_ == nullptr) fail("create");
}

BufferedFile::~BufferedFile() {
  try {
    close();
  } catch (...) {  // NOLINT(bugprone-empty-catch): destructors must not throw; close() reports
  }
}

void BufferedFile::fail(const char* verb) const {
  throw InputError(fmt::format("{}: cannot {} {} ({})", path_, verb, what_, std::strerror(errno)));
}

void BufferedFile::write_out() {
  if (buffer_.empty()) return;
  if (std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size()) fail("write");
  buffer_.clear();
}

void BufferedFile::close() {
  if (file_ == nullptr) return;
  std::FILE* file = file_;
  bool written = true;
  try {
    write_out();
  } catch (...) {
    written = false;
  }
  file_ = nullptr;
  const bool closed = std::fclose(file) == 0;
  if (!written || !closed) fail("write");
}

}  // namespace servesim
