#pragma once

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace servesim {

// Bad user input (YAML, traces, profiles, CLI values). The message always starts with
// "file:line:col: " (or "file:line: " for CSV rows) so the user can find the spot. Library code
// throws it; only main() catches it and exits with code 1.
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& what) : std::runtime_error(what) {}
};

// "file:line:col: message". line and col are 1-based; col 0 omits the column.
[[noreturn]] void throw_input_error(const std::string& file, int line, int col,
                                    const std::string& message);

// Opens a user's input file for reading. Only a regular file (or a link to one) is read: a folder,
// device, pipe or socket is refused ("path: is a folder (expected …)", "path: is not a regular
// file …"), as is a path the system cannot examine (too long, a symlink loop: its reason), or a
// file larger than `max_bytes` (0: any size). Every refusal is an InputError naming the path.
std::ifstream open_input_file(const std::string& path, std::string_view expected,
                              std::uintmax_t max_bytes = 0);

// Why `path` cannot be read as a file ("no such file", "is a folder", "is not a regular file (a
// device, pipe or socket)", or the system's reason), or "" when it is a readable regular file.
std::string unreadable_reason(const std::string& path);

// Whether `path` is a folder / a regular file (following links). Never throws: a path that does
// not exist or cannot be examined (too long, a symlink loop, no permission) is neither.
bool is_folder(const std::filesystem::path& path);
bool is_regular(const std::filesystem::path& path);

// The regular files under `dir` (and its subfolders with `recursive`) whose names end in `ext`,
// sorted. A folder that cannot be read is an InputError naming it, after `who`.
std::vector<std::filesystem::path> files_in(const std::filesystem::path& dir, std::string_view ext,
                                            bool recursive, std::string_view who);

// Creates the output folder `dir` (and its parents) unless it exists; an InputError "who: cannot
// create the folder 'dir' (reason)" otherwise, e.g. a file of that name or a path too long.
void make_output_folder(const std::string& dir, std::string_view who);

// `path` made absolute and normal, or as given when the working folder cannot be read.
std::string absolute_path(const std::filesystem::path& path);

// An absolute `path` inside the working folder as relative to it (what a person reads in a
// report: data/measured/error_model.yaml); any other path as given.
std::string display_path(const std::string& path);

}  // namespace servesim
