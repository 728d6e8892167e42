#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

namespace servesim {

// A YAML node that remembers where it came from, so every error names file:line:col and the
// dotted key path. Conversions are strict: a string where a number is expected is an error, not
// a zero. Plug-ins call check_keys() with the keys they know so unknown keys are errors too.
//
// Values set on the command line (--set a.b=c) are applied to the document before it is wrapped;
// errors on such a value name the --set flag instead of a file position.
// The largest YAML file load_file reads (16 MiB; the largest shipped config is a few KiB).
inline constexpr std::uintmax_t kMaxConfigBytes = std::uintmax_t{16} << 20;

class ConfigNode {
 public:
  ConfigNode() = default;
  ConfigNode(const ConfigNode&) = default;
  ConfigNode(ConfigNode&&) = default;
  // Assignment rebinds this handle to the other's node. (YAML::Node's own assignment would write
  // the other's value into the node this handle shares with its document or another handle.)
  ConfigNode& operator=(const ConfigNode& o);
  ConfigNode& operator=(ConfigNode&& o);
  ~ConfigNode() = default;
  // Loads a YAML file; throws InputError for a missing file, a file that is not a regular file or
  // is larger than kMaxConfigBytes, or a syntax error.
  static ConfigNode load_file(const std::string& path);
  // Parses YAML text; `source` names it in errors.
  static ConfigNode parse(const std::string& text, const std::string& source);
  // A node standing for a command-line flag: errors through it read "--flag: …" (no position).
  static ConfigNode flag(const std::string& name);

  // Applies "a.b.c=value" (value parsed as YAML). Creates missing maps. Call before reading.
  // Errors on the value name `flag` and the assignment ("--set a.b=c", or "--vary a.b=c" for a
  // sweep point), so a message says which flag gave the value.
  void apply_override(const std::string& assignment, std::string_view flag = "--set");

  const std::string& file() const { return ctx_->file; }
  // Folder of the file this node came from ("" for parsed text); relative paths resolve here,
  // unless set_base_dir() named another for the whole document.
  std::string base_dir() const;
  // Relative input paths of this document resolve against `dir` from now on (a run config's
  // `config_dir:`, which an output folder's config.yaml carries).
  void set_base_dir(const std::string& dir);
  const std::string& path() const { return path_; }
  const YAML::Node& yaml() const { return node_; }

  bool is_map() const { return node_.IsMap(); }
  bool is_sequence() const { return node_.IsSequence(); }
  bool is_scalar() const { return node_.IsScalar(); }
  bool is_null() const { return !node_ || node_.IsNull(); }
  bool has(std::string_view key) const;
  std::size_t size() const { return node_.size(); }

  // Required child; error "missing key 'x' (expected …)" when absent.
  ConfigNode at(std::string_view key) const;
  std::optional<ConfigNode> find(std::string_view key) const;
  ConfigNode at(std::size_t index) const;
  std::vector<ConfigNode> items() const;  // sequence elements
  std::vector<std::string> keys() const;  // map keys in document order

  // Scalar conversions of this node.
  double as_double() const;
  std::int64_t as_int() const;
  bool as_bool() const;
  std::string as_string() const;

  // Keyed helpers.
  double get_double(std::string_view key) const { return at(key).as_double(); }
  double get_double(std::string_view key, double fallback) const;
  std::int64_t get_int(std::string_view key) const { return at(key).as_int(); }
  std::int64_t get_int(std::string_view key, std::int64_t fallback) const;
  bool get_bool(std::string_view key, bool fallback) const;
  std::string get_string(std::string_view key) const { return at(key).as_string(); }
  std::string get_string(std::string_view key, const std::string& fallback) const;

  // Range-checked numbers: error names the range that was expected.
  double get_positive(std::string_view key) const;
  double get_positive(std::string_view key, double fallback) const;
  double get_nonnegative(std::string_view key, double fallback) const;
  // A positive integer that fits a 32-bit int (every count, size and token number downstream).
  std::int64_t get_positive_int(std::string_view key) const;
  std::int64_t get_positive_int(std::string_view key, std::int64_t fallback) const;
  double get_fraction(std::string_view key, double fallback) const;  // in [0, 1]
  // A share that must not be zero (an efficiency, an achieved fraction of a peak): in (0, 1].
  double get_positive_fraction(std::string_view key, double fallback) const;

  // Error if this map holds a key not in `known` (message lists the known keys).
  void check_keys(std::initializer_list<std::string_view> known) const;
  void check_keys(const std::vector<std::string>& known) const;
  // The node must be a map (error otherwise, naming what was expected).
  void require_map(std::string_view what) const;

  // Throws InputError at this node's position.
  [[noreturn]] void fail(const std::string& message) const;
  // "file:line:col" of this node, or "--set a.b=c" (the flag that gave it) for overridden values.
  std::string where() const;

  // This map with the keys of map `over` laid over its own (a replica group's scheduler keys over
  // the fleet's): every value keeps its own position; the map itself is placed at `over`.
  ConfigNode overlaid(const ConfigNode& over) const;

  // Deep copy of the YAML (for writing a resolved config next to outputs).
  std::string dump() const;
  // The YAML as JSON: plain scalars that read as null, true/false, an integer or a number become
  // those, quoted scalars and all others stay strings.
  nlohmann::json to_json() const;

 private:
  struct Context {
    std::string file;
    std::string base_dir;                                        // "" = the file's folder
    std::vector<std::pair<std::string, std::string>> overrides;  // path, "--flag a.b=c"
  };
  ConfigNode(std::shared_ptr<Context> ctx, const YAML::Node& node, std::string path);
  std::string child_path(std::string_view key) const;

  std::shared_ptr<Context> ctx_;
  YAML::Node node_;
  std::string path_;
  YAML::Mark key_mark_;  // where the key of an empty value stands (its value has no position)
  // An overlaid map (overlaid()): where its keys were laid over, and that map, whose keys are
  // named by their own path and flags.
  YAML::Mark overlay_mark_ = YAML::Mark::null_mark();
  std::shared_ptr<const ConfigNode> over_;
};

}  // namespace servesim
