#include "sim/config/config_node.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/eventhandler.h>

#include "sim/config/input_error.hpp"
#include "sim/config/suggest.hpp"

namespace servesim {
namespace {

std::string scalar_text(const YAML::Node& n) {
  if (!n) return "nothing";
  if (n.IsScalar()) return "'" + n.Scalar() + "'";
  if (n.IsMap()) return "a map";
  if (n.IsSequence()) return "a list";
  return "no value";
}

// Whether a plain scalar reads as a number that is not finite: YAML's .nan/.inf forms, or text
// from_chars takes whole as NaN, infinity or out of double's range ("nan", "inf", "1e400").
bool non_finite_number(const std::string& s) {
  static constexpr std::string_view kYaml[] = {".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF"};
  std::string_view t(s);
  if (!t.empty() && (t.front() == '+' || t.front() == '-')) t.remove_prefix(1);
  if (std::find(std::begin(kYaml), std::end(kYaml), t) != std::end(kYaml)) return true;
  double v = 0;
  const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (p != t.data() + t.size() || t.empty()) return false;
  return ec == std::errc::result_out_of_range || (ec == std::errc() && !std::isfinite(v));
}

// Checks what holds for every document, wherever a value is read or not:
// - a key given twice in one map is an error at its second occurrence (yaml-cpp keeps both pairs
//   and lookups find the first, so the second would be silently ignored);
// - a key that is a list or a map (`[a, b]: 1`, `{scheduler: 1}: …`) is an error where it
//   stands: every key here is a name;
// - a number that is not finite (.nan, .inf, 1e400) is an error where it stands, in sections
//   nothing reads too (a fit record), so no NaN or infinity is anywhere in a config.
void check_document(const YAML::Node& node, const std::string& file) {
  const auto fail = [&file](const YAML::Node& at, const std::string& message) {
    const YAML::Mark m = at.Mark();
    throw_input_error(file, m.line >= 0 ? m.line + 1 : 0, m.line >= 0 ? m.column + 1 : 0, message);
  };
  if (node.IsMap()) {
    std::set<std::string> seen;
    for (const auto& kv : node) {
      if (!kv.first.IsScalar()) {
        fail(kv.first, fmt::format("a key that is {} (expected a plain name before ':')",
                                   scalar_text(kv.first)));
      }
      if (!seen.insert(kv.first.Scalar()).second) {
        fail(kv.first, fmt::format("key '{}' is given twice in this map", kv.first.Scalar()));
      }
      check_document(kv.second, file);
    }
  } else if (node.IsSequence()) {
    for (const auto& item : node) check_document(item, file);
  } else if (node.IsScalar() && node.Tag() == "?" && non_finite_number(node.Scalar())) {
    fail(node, fmt::format("'{}' is not a finite number (expected a finite number: NaN and "
                           "infinity are refused everywhere)",
                           node.Scalar()));
  }
}

// Walks the documents of a YAML text with yaml-cpp's parser, building nothing: a second document
// with content is an error at its start (yaml-cpp's Load would read the first and drop the rest
// without a word; an empty one — a trailing `---`, only comments — carries nothing to drop). Not
// YAML::LoadAll: in yaml-cpp 0.7 it loops for ever on a ',' outside [...] or {...} (",", "- a\n,
// b"; jbeder/yaml-cpp#1040, fixed upstream by jbeder/yaml-cpp#1319): the parser then reports
// document after empty document at one place, which here is an error at that place.
class DocumentScan : public YAML::EventHandler {
 public:
  YAML::Mark start;
  bool content = false;
  YAML::Mark first;  // where the document's content begins
  void OnDocumentStart(const YAML::Mark& mark) override {
    start = mark;
    content = false;
  }
  void saw(const YAML::Mark& mark) {
    if (!content) first = mark;
    content = true;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { saw(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string&) override {
    saw(mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    saw(mark);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    saw(mark);
  }
  void OnMapEnd() override {}
};

void check_one_document(const std::string& text, const std::string& source) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentScan scan;
  int documents = 0;
  int last_pos = -1;
  while (parser.HandleNextDocument(scan)) {
    const YAML::Mark m = scan.start;
    if (documents > 0 && m.pos == last_pos) {
      throw_input_error(source, m.line + 1, m.column + 1,
                        "cannot be read here (expected 'key: value' lines or '- ' items; ',' "
                        "separates items only inside [...] or {...})");
    }
    if (documents > 0 && scan.content) {
      throw_input_error(source, scan.first.line + 1, scan.first.column + 1,
                        "a second YAML document (expected one document per file)");
    }
    last_pos = m.pos;
    ++documents;
  }
}

// yaml-cpp's parse message with what the file most likely needs ("expected …").
std::string with_hint(const std::string& msg) {
  static const std::pair<std::string_view, std::string_view> kHints[] = {
      {"end of map not found",
       "expected the keys of one map to line up at one indentation, each 'key: value'"},
      {"end of map flow not found", "expected '}' to close the {…} map, or ',' between entries"},
      {"end of sequence not found", "expected the '- ' items of one list at one indentation"},
      {"end of sequence flow not found", "expected ']' to close a […] list"},
      {"illegal map value",
       "expected 'key: value', the keys of one map at one indentation; quote a value that holds "
       "': '"},
      {"illegal block entry", "expected '- ' list items on lines of their own below their key"},
      {"illegal map key", "expected a plain key before ':'"},
      {"unknown escape character",
       "expected a valid escape in a double-quoted string; single quotes keep backslashes"},
      {"illegal EOF in scalar", "expected the closing quote of a quoted value"},
      {"illegal flow end", "expected the '[' or '{' this ']' or '}' closes"},
      {"illegal character in scalar", "expected a value without tabs or control characters"},
  };
  for (const auto& [prefix, hint] : kHints) {
    if (msg.rfind(prefix, 0) == 0) return fmt::format("{} ({})", msg, hint);
  }
  if (msg.find("tab") != std::string::npos) {
    return fmt::format("{} (expected spaces, not tabs, for indentation)", msg);
  }
  return msg;
}

}  // namespace

ConfigNode::ConfigNode(std::shared_ptr<Context> ctx, const YAML::Node& node, std::string path)
    : ctx_(std::move(ctx)), node_(node), path_(std::move(path)) {}

ConfigNode ConfigNode::load_file(const std::string& path) {
  std::ifstream in = open_input_file(path, "a YAML file", kMaxConfigBytes);
  std::stringstream text;
  text << in.rdbuf();
  return parse(text.str(), path);
}

ConfigNode ConfigNode::parse(const std::string& text, const std::string& source) {
  auto ctx = std::make_shared<Context>();
  ctx->file = source;
  YAML::Node root;
  try {
    check_one_document(text, source);
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw_input_error(source, e.mark.line + 1, e.mark.column + 1, with_hint(e.msg));
  }
  if (!root || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  check_document(root, source);
  return ConfigNode(ctx, root, "");
}

ConfigNode ConfigNode::flag(const std::string& name) { return parse("", name); }

ConfigNode& ConfigNode::operator=(const ConfigNode& o) {
  if (this == &o) return *this;
  ctx_ = o.ctx_;
  node_.reset(o.node_);
  path_ = o.path_;
  key_mark_ = o.key_mark_;
  overlay_mark_ = o.overlay_mark_;
  over_ = o.over_;
  return *this;
}

ConfigNode& ConfigNode::operator=(ConfigNode&& o) {
  if (this == &o) return *this;
  ctx_ = std::move(o.ctx_);
  node_.reset(o.node_);
  path_ = std::move(o.path_);
  key_mark_ = o.key_mark_;
  overlay_mark_ = o.overlay_mark_;
  over_ = o.over_;
  return *this;
}

ConfigNode ConfigNode::overlaid(const ConfigNode& over) const {
  require_map("a map");
  over.require_map("a map");
  // The key and value nodes themselves go in, so each keeps its place in the file.
  YAML::Node merged(YAML::NodeType::Map);
  for (const auto& kv : node_) {
    if (!over.has(kv.first.Scalar())) merged.force_insert(kv.first, kv.second);
  }
  for (const auto& kv : over.node_) merged.force_insert(kv.first, kv.second);
  ConfigNode out(ctx_, merged, path_);
  out.overlay_mark_ = over.node_.Mark();
  out.over_ = std::make_shared<const ConfigNode>(over);
  return out;
}

void ConfigNode::apply_override(const std::string& assignment, std::string_view flag) {
  const std::string given = fmt::format("{} {}", flag, assignment);
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw InputError(fmt::format("{}: expected key.path=value", given));
  }
  const std::string key_path = assignment.substr(0, eq);
  const std::string value_text = assignment.substr(eq + 1);
  YAML::Node value;
  try {
    value = YAML::Load(value_text);
    check_document(value, given);
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("{}: {}", given, with_hint(e.msg)));
  }
  std::vector<std::string> parts;
  std::string part;
  std::istringstream split(key_path);
  while (std::getline(split, part, '.')) {
    if (part.empty()) throw InputError(fmt::format("{}: empty key in path", given));
    parts.push_back(part);
  }
  // Walk with explicit node copies: yaml-cpp nodes are handles, so assigning through them edits
  // the document in place.
  YAML::Node cur = node_;
  if (!cur.IsMap()) {
    throw InputError(
        fmt::format("{}: the config is {}, not a map of sections", given, scalar_text(cur)));
  }
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    if (cur.IsScalar()) {
      throw InputError(fmt::format("{}: '{}' is a value, not a section", given, parts[i - 1]));
    }
    if (cur.IsSequence()) {
      std::size_t idx = 0;
      auto [p, ec] = std::from_chars(parts[i].data(), parts[i].data() + parts[i].size(), idx);
      if (ec != std::errc() || idx >= cur.size()) {
        throw InputError(fmt::format("{}: '{}' is not an index of the list", given, parts[i]));
      }
      cur.reset(cur[idx]);
      continue;
    }
    if (!cur[parts[i]] || !cur[parts[i]].IsMap()) {
      if (cur[parts[i]] && !cur[parts[i]].IsNull() && !cur[parts[i]].IsSequence()) {
        throw InputError(fmt::format("{}: '{}' is a value, not a section", given, parts[i]));
      }
      if (!cur[parts[i]] || cur[parts[i]].IsNull()) cur[parts[i]] = YAML::Node(YAML::NodeType::Map);
    }
    YAML::Node next = cur[parts[i]];
    cur.reset(next);
  }
  if (cur.IsScalar()) {
    throw InputError(
        fmt::format("{}: '{}' is a value, not a section", given, parts[parts.size() - 2]));
  }
  if (cur.IsSequence()) {
    std::size_t idx = 0;
    auto [p, ec] =
        std::from_chars(parts.back().data(), parts.back().data() + parts.back().size(), idx);
    if (ec != std::errc() || idx >= cur.size()) {
      throw InputError(fmt::format("{}: '{}' is not an index of the list", given, parts.back()));
    }
    cur[idx] = value;
  } else {
    cur[parts.back()] = value;
  }
  ctx_->overrides.emplace_back(key_path, given);
}

std::string ConfigNode::base_dir() const {
  if (!ctx_) return ".";
  if (!ctx_->base_dir.empty()) return ctx_->base_dir;
  const std::filesystem::path p(ctx_->file);
  if (!p.has_parent_path()) return ".";
  return p.parent_path().string();
}

void ConfigNode::set_base_dir(const std::string& dir) {
  if (ctx_) ctx_->base_dir = dir;
}

namespace {
nlohmann::json yaml_to_json(const YAML::Node& n) {
  if (!n || n.IsNull()) return nullptr;
  if (n.IsSequence()) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& item : n) a.push_back(yaml_to_json(item));
    return a;
  }
  if (n.IsMap()) {
    nlohmann::json o = nlohmann::json::object();
    for (const auto& kv : n) o[kv.first.Scalar()] = yaml_to_json(kv.second);
    return o;
  }
  const std::string& s = n.Scalar();
  if (n.Tag() != "?") return s;  // quoted: a string whatever it reads as
  if (s == "null" || s == "~" || s.empty()) return nullptr;
  if (s == "true") return true;
  if (s == "false") return false;
  std::int64_t i = 0;
  if (auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), i);
      ec == std::errc() && p == s.data() + s.size()) {
    return i;
  }
  double d = 0;
  if (auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
      ec == std::errc() && p == s.data() + s.size() && std::isfinite(d)) {
    return d;
  }
  return s;
}
}  // namespace

nlohmann::json ConfigNode::to_json() const { return yaml_to_json(node_); }

std::string ConfigNode::child_path(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

std::string ConfigNode::where() const {
  if (!ctx_) return "<config>";
  // A node inside or equal to an overridden path came from the command line (the last --set of
  // a path wins).
  // Override paths are dotted (replicas.0.tp); list items here are named replicas[0].
  std::string dotted;
  for (const char c : path_) {
    if (c == '[') {
      dotted += '.';
    } else if (c != ']') {
      dotted += c;
    }
  }
  for (auto it = ctx_->overrides.rbegin(); it != ctx_->overrides.rend(); ++it) {
    const auto& [p, assignment] = *it;
    if (dotted == p || (dotted.size() > p.size() && dotted.compare(0, p.size(), p) == 0 &&
                        dotted[p.size()] == '.')) {
      return assignment;
    }
  }
  YAML::Mark m = node_.IsNull() && !key_mark_.is_null() ? key_mark_ : node_.Mark();
  if (m.is_null() && !overlay_mark_.is_null()) m = overlay_mark_;
  if (m.is_null()) {
    // A section with no place in the file was made by a --set of a deeper path
    // (scheduler.foo.bar=5 makes scheduler.foo).
    for (auto it = ctx_->overrides.rbegin(); it != ctx_->overrides.rend(); ++it) {
      const auto& [p, assignment] = *it;
      if (!dotted.empty() && p.size() > dotted.size() && p.compare(0, dotted.size(), dotted) == 0 &&
          p[dotted.size()] == '.') {
        return assignment;
      }
    }
    // A value given by a flag (a document named "--model") is placed by the flag; a file's
    // node with no place of its own (an empty document) by the file's first line.
    if (ctx_->file.rfind("--", 0) == 0) return ctx_->file;
    return fmt::format("{}:1:1", ctx_->file);
  }
  return fmt::format("{}:{}:{}", ctx_->file, m.line + 1, m.column + 1);
}

void ConfigNode::fail(const std::string& message) const {
  const std::string prefix = path_.empty() ? "" : path_ + ": ";
  throw InputError(fmt::format("{}: {}{}", where(), prefix, message));
}

bool ConfigNode::has(std::string_view key) const {
  // A key written with no value (`chunk_size:`) is present: its getter then fails naming it,
  // rather than the default silently standing in for what the user meant to write.
  return node_.IsMap() && node_[std::string(key)].IsDefined();
}

std::optional<ConfigNode> ConfigNode::find(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  return at(key);
}

ConfigNode ConfigNode::at(std::string_view key) const {
  // A key laid over an overlaid map is named by the path and flags of where it was written.
  if (over_ && over_->has(key)) return over_->at(key);
  if (!node_.IsMap()) fail(fmt::format("expected a map with key '{}'", key));
  if (!has(key)) fail(fmt::format("missing key '{}'", key));
  ConfigNode child(ctx_, node_[std::string(key)], child_path(key));
  if (child.node_.IsNull()) {
    for (const auto& kv : node_) {
      if (kv.first.Scalar() == key) child.key_mark_ = kv.first.Mark();
    }
  }
  return child;
}

ConfigNode ConfigNode::at(std::size_t index) const {
  if (!node_.IsSequence() || index >= node_.size()) fail("expected a list");
  return ConfigNode(ctx_, node_[index], path_ + "[" + std::to_string(index) + "]");
}

std::vector<ConfigNode> ConfigNode::items() const {
  if (!node_.IsSequence()) fail(fmt::format("expected a list, got {}", scalar_text(node_)));
  std::vector<ConfigNode> out;
  out.reserve(node_.size());
  for (std::size_t i = 0; i < node_.size(); ++i) out.push_back(at(i));
  return out;
}

std::vector<std::string> ConfigNode::keys() const {
  std::vector<std::string> out;
  if (!node_.IsMap()) return out;
  for (const auto& kv : node_) out.push_back(kv.first.as<std::string>());
  return out;
}

double ConfigNode::as_double() const {
  if (!node_.IsScalar()) fail(fmt::format("expected a number, got {}", scalar_text(node_)));
  const std::string& s = node_.Scalar();
  double v = 0;
  const char* begin = s.data();
  const char* end = s.data() + s.size();
  if (!s.empty() && *begin == '+') ++begin;
  auto [p, ec] = std::from_chars(begin, end, v);
  if (ec != std::errc() || p != end || !std::isfinite(v)) {
    fail(fmt::format("expected a number, got '{}'", s));
  }
  return v;
}

std::int64_t ConfigNode::as_int() const {
  if (!node_.IsScalar()) fail(fmt::format("expected an integer, got {}", scalar_text(node_)));
  const std::string& s = node_.Scalar();
  std::int64_t v = 0;
  const char* begin = s.data();
  const char* end = s.data() + s.size();
  if (!s.empty() && *begin == '+') ++begin;
  auto [p, ec] = std::from_chars(begin, end, v);
  if (ec != std::errc() || p != end) {
    // Accept integral floats such as 1e6 or 4096.0.
    double d = 0;
    auto [pd, ecd] = std::from_chars(begin, end, d);
    if (ecd == std::errc() && pd == end && std::isfinite(d) && std::floor(d) == d &&
        std::fabs(d) < 9e15) {
      return static_cast<std::int64_t>(d);
    }
    fail(fmt::format("expected an integer, got '{}'", s));
  }
  return v;
}

bool ConfigNode::as_bool() const {
  if (node_.IsScalar()) {
    const std::string& s = node_.Scalar();
    if (s == "true" || s == "True" || s == "yes" || s == "on") return true;
    if (s == "false" || s == "False" || s == "no" || s == "off") return false;
  }
  fail(fmt::format("expected true or false, got {}", scalar_text(node_)));
}

std::string ConfigNode::as_string() const {
  if (!node_.IsScalar()) fail(fmt::format("expected a string, got {}", scalar_text(node_)));
  return node_.Scalar();
}

double ConfigNode::get_double(std::string_view key, double fallback) const {
  return has(key) ? at(key).as_double() : fallback;
}
std::int64_t ConfigNode::get_int(std::string_view key, std::int64_t fallback) const {
  return has(key) ? at(key).as_int() : fallback;
}
bool ConfigNode::get_bool(std::string_view key, bool fallback) const {
  return has(key) ? at(key).as_bool() : fallback;
}
std::string ConfigNode::get_string(std::string_view key, const std::string& fallback) const {
  return has(key) ? at(key).as_string() : fallback;
}

double ConfigNode::get_positive(std::string_view key) const {
  const ConfigNode n = at(key);
  const double v = n.as_double();
  if (!(v > 0)) n.fail(fmt::format("expected a positive number, got {}", v));
  return v;
}
double ConfigNode::get_positive(std::string_view key, double fallback) const {
  return has(key) ? get_positive(key) : fallback;
}
double ConfigNode::get_nonnegative(std::string_view key, double fallback) const {
  if (!has(key)) return fallback;
  const ConfigNode n = at(key);
  const double v = n.as_double();
  if (v < 0) n.fail(fmt::format("expected a number ≥ 0, got {}", v));
  return v;
}
std::int64_t ConfigNode::get_positive_int(std::string_view key) const {
  const ConfigNode n = at(key);
  const std::int64_t v = n.as_int();
  // Every count, size and token number here is stored as a 32-bit int downstream.
  if (v <= 0 || v > std::numeric_limits<std::int32_t>::max()) {
    n.fail(fmt::format("expected a positive integer ≤ 2147483647, got {}", v));
  }
  return v;
}
std::int64_t ConfigNode::get_positive_int(std::string_view key, std::int64_t fallback) const {
  return has(key) ? get_positive_int(key) : fallback;
}
double ConfigNode::get_fraction(std::string_view key, double fallback) const {
  if (!has(key)) return fallback;
  const ConfigNode n = at(key);
  const double v = n.as_double();
  if (v < 0 || v > 1) n.fail(fmt::format("expected a number in [0, 1], got {}", v));
  return v;
}

double ConfigNode::get_positive_fraction(std::string_view key, double fallback) const {
  if (!has(key)) return fallback;
  const ConfigNode n = at(key);
  const double v = n.as_double();
  if (!(v > 0 && v <= 1)) n.fail(fmt::format("expected a number in (0, 1], got {}", v));
  return v;
}

void ConfigNode::require_map(std::string_view what) const {
  if (!node_.IsMap()) fail(fmt::format("expected {} (a map), got {}", what, scalar_text(node_)));
}

void ConfigNode::check_keys(std::initializer_list<std::string_view> known) const {
  std::vector<std::string> k;
  for (auto s : known) k.emplace_back(s);
  check_keys(k);
}

void ConfigNode::check_keys(const std::vector<std::string>& known) const {
  if (!node_.IsMap()) return;
  for (const auto& kv : node_) {
    const std::string key = kv.first.as<std::string>();
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      std::vector<std::string> sorted = known;
      std::sort(sorted.begin(), sorted.end());
      const bool laid_over = over_ && over_->has(key);
      const ConfigNode child(laid_over ? over_->ctx_ : ctx_, kv.first,
                             laid_over ? over_->child_path(key) : child_path(key));
      const std::string& in = laid_over ? over_->path_ : path_;
      throw InputError(fmt::format("{}: unknown key '{}'{} ({}known: {})", child.where(), key,
                                   in.empty() ? "" : " in " + in, did_you_mean(key, known),
                                   fmt::join(sorted, ", ")));
    }
  }
}

std::string ConfigNode::dump() const {
  YAML::Emitter out;
  out << node_;
  return out.c_str();
}

}  // namespace servesim
