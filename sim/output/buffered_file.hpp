#pragma once

#include <cstdio>
#include <string>

namespace servesim {

// A file written through a text buffer: callers append to text(), maybe_flush() writes the
// buffer out once it holds 64 KiB (memory stays flat, few writes), close() writes the rest and
// closes. Errors throw InputError "<path>: cannot create|write <what> (<reason>)"; the destructor
// closes and swallows errors (call close() to see them). One thread per file.
class BufferedFile {
 public:
  BufferedFile(std::string path, std::string what);  // what: e.g. "trace file", "CSV file"
  ~BufferedFile();
  BufferedFile(const BufferedFile&) = delete;
  BufferedFile& operator=(const BufferedFile&) = delete;

  std::string& text() { return buffer_; }
  void maybe_flush() {
    if (buffer_.size() >= kFlushBytes) write_out();
  }
  void close();  // idempotent
  bool closed() const { return file_ == nullptr; }
  const std::string& path() const { return path_; }

 private:
  static constexpr std::size_t kFlushBytes = 1u << 16;
  void write_out();
  [[noreturn]] void fail(const char* verb) const;

  std::string path_;
  std::string what_;
  std::string buffer_;
  std::FILE* file_ = nullptr;  // null once closed
};

}  // namespace servesim
