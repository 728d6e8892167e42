#include "tools/sweep/grid.hpp"

#include <charconv>
#include <cmath>
#include <fstream>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/config/input_error.hpp"
#include "tools/sweep/value_text.hpp"

namespace servesim::sweep {
namespace {

constexpr std::size_t kMaxValues = 100000;  // per axis: a range that runs away is a typo

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

// A whole decimal number (optional sign, digits only).
bool is_integer_text(const std::string& s) {
  std::int64_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && ec == std::errc() && p == s.data() + s.size();
}

// Splits a list at commas outside brackets, braces and quotes.
std::vector<std::string> split_list(const std::string& spec) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  char quote = 0;
  for (const char c : spec) {
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    } else if (c == ',' && depth == 0) {
      out.push_back(trim(cur));
      cur.clear();
      continue;
    }
    cur += c;
  }
  out.push_back(trim(cur));
  return out;
}

std::vector<std::string> expand_range(const std::string& spec, const std::string& flag) {
  const auto dots = spec.find("..");
  const auto colon = spec.find(':', dots);
  const std::string expected =
      "expected A..B:xF (geometric) or A..B:+S (arithmetic), e.g. 256..8192:x2 or 1..8:+1";
  if (colon == std::string::npos || colon + 2 > spec.size()) {
    throw InputError(fmt::format("{}: '{}': {}", flag, spec, expected));
  }
  const std::string a_text = trim(spec.substr(0, dots));
  const std::string b_text = trim(spec.substr(dots + 2, colon - dots - 2));
  const char op = spec[colon + 1];
  const std::string s_text = trim(spec.substr(colon + 2));
  const auto a = parse_number(a_text), b = parse_number(b_text), step = parse_number(s_text);
  if (!a || !b || !step || (op != 'x' && op != '+')) {
    throw InputError(fmt::format("{}: '{}': {}", flag, spec, expected));
  }
  const bool up = *b >= *a;
  if (op == 'x' && (*step <= 0 || *step == 1 || *a <= 0 || *b <= 0 || up != (*step > 1))) {
    throw InputError(fmt::format(
        "{}: '{}': a geometric range needs positive ends and a factor that moves from {} "
        "toward {} (expected a factor {} 1)",
        flag, spec, a_text, b_text, up ? ">" : "<"));
  }
  if (op == '+' && (*step == 0 || up != (*step > 0))) {
    throw InputError(fmt::format(
        "{}: '{}': an arithmetic range needs a step that moves from {} toward {} (expected a "
        "step {} 0)",
        flag, spec, a_text, b_text, up ? ">" : "<"));
  }
  const bool integers = is_integer_text(a_text) && is_integer_text(b_text);
  // B counts as reached within a relative 1e-9 (float steps rarely land on it exactly).
  const double slack = 1e-9 * std::max(std::abs(*a), std::abs(*b));
  std::vector<std::string> values;
  std::set<std::int64_t> seen;
  for (std::size_t i = 0;; ++i) {
    const double k = static_cast<double>(i);
    const double v = op == 'x' ? *a * std::pow(*step, k) : *a + k * *step;
    if (up ? v > *b + slack : v < *b - slack) break;
    if (values.size() == kMaxValues) {
      throw InputError(fmt::format("{}: '{}' gives more than {} values (expected a coarser step)",
                                   flag, spec, kMaxValues));
    }
    if (integers) {
      const auto r = static_cast<std::int64_t>(std::llround(v));
      if (!seen.insert(r).second) {
        throw InputError(
            fmt::format("{}: '{}' gives {} twice once rounded to integers (expected a larger step)",
                        flag, spec, r));
      }
      values.push_back(std::to_string(r));
    } else {
      values.push_back(fmt::format("{:.12g}", v));
    }
  }
  return values;
}

std::vector<std::string> read_value_file(const std::string& path, const std::string& flag) {
  std::ifstream in = open_input_file(path, "a file of values, one per line");
  std::vector<std::string> values;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    const std::string v = trim(line);
    if (v.empty() || v.front() == '#') continue;
    if (values.size() == kMaxValues) {
      throw_input_error(path, n, 0, fmt::format("more than {} values", kMaxValues));
    }
    values.push_back(v);
  }
  if (values.empty()) {
    throw InputError(fmt::format("{}: {} holds no values (expected one per line)", flag, path));
  }
  return values;
}

bool same_value(const std::string& a, const std::string& b) {
  if (a == b) return true;
  const auto x = parse_number(a), y = parse_number(b);
  return x && y && *x == *y;
}

}  // namespace

std::vector<std::string> expand_values(const std::string& spec, const std::string& flag) {
  const std::string s = trim(spec);
  if (s.empty()) throw InputError(fmt::format("{}: no values (expected V1,V2,… or A..B:xF)", flag));
  if (s.front() == '@') return read_value_file(s.substr(1), flag);
  if (s.find("..") != std::string::npos && s.front() != '{' && s.front() != '[' &&
      s.find(',') == std::string::npos) {
    return expand_range(s, flag);
  }
  std::vector<std::string> values = split_list(s);
  for (const auto& v : values) {
    if (v.empty()) {
      throw InputError(fmt::format("{}: an empty value in '{}' (expected V1,V2,…)", flag, spec));
    }
  }
  return values;
}

Axis parse_axis(const std::string& arg) {
  const std::string flag = "--vary " + arg;
  const auto eq = arg.find('=');
  if (eq == std::string::npos || trim(arg.substr(0, eq)).empty()) {
    throw InputError(fmt::format("{}: expected KEY=VALUES (KEY as --set takes it)", flag));
  }
  Axis axis;
  axis.key = trim(arg.substr(0, eq));
  axis.values = expand_values(arg.substr(eq + 1), flag);
  return axis;
}

Grid::Grid(const std::vector<std::string>& varies, bool zip, int replicates,
           std::uint64_t base_seed)
    : zip_(zip) {
  std::optional<Axis> seed_axis;
  for (const auto& v : varies) {
    Axis axis = parse_axis(v);
    if (axis.key == "seed") {
      if (seed_axis) throw InputError("--vary seed=…: given twice (expected one seed list)");
      seed_axis = std::move(axis);
      continue;
    }
    for (const auto& a : axes_) {
      if (a.key == axis.key) {
        throw InputError(
            fmt::format("--vary {}: '{}' is varied twice (expected each key once)", v, axis.key));
      }
    }
    axes_.push_back(std::move(axis));
  }
  if (seed_axis && replicates > 1) {
    throw InputError("--seeds and --vary seed=… both give the seeds (expected one of them)");
  }
  if (seed_axis) {
    std::set<std::uint64_t> seen;
    for (const auto& text : seed_axis->values) {
      std::uint64_t s = 0;
      const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), s);
      if (ec != std::errc() || p != text.data() + text.size()) {
        throw InputError(fmt::format("--vary seed=…: '{}' is not a whole number ≥ 0", text));
      }
      if (!seen.insert(s).second) {
        throw InputError(fmt::format("--vary seed=…: seed {} is given twice", s));
      }
      seeds_.push_back(s);
    }
  } else {
    for (int i = 0; i < std::max(replicates, 1); ++i) {
      seeds_.push_back(base_seed + static_cast<std::uint64_t>(i));
    }
  }
  if (zip_) {
    if (axes_.empty()) throw InputError("--zip: no --vary to pair (expected two or more)");
    for (const auto& a : axes_) {
      if (a.values.size() != axes_.front().values.size()) {
        throw InputError(fmt::format(
            "--zip: --vary {} has {} values but --vary {} has {} (expected equal lengths)",
            axes_.front().key, axes_.front().values.size(), a.key, a.values.size()));
      }
    }
    size_ = axes_.front().values.size();
  } else {
    for (const auto& a : axes_) {
      if (size_ > kMaxValues * 10 / a.values.size()) {
        throw InputError(fmt::format("--vary: the grid has more than {} points", kMaxValues * 10));
      }
      size_ *= a.values.size();
    }
  }
}

std::vector<std::string> Grid::values(std::size_t point) const {
  std::vector<std::string> out(axes_.size());
  std::size_t rest = point;
  for (std::size_t i = axes_.size(); i-- > 0;) {
    const auto& vals = axes_[i].values;
    if (zip_) {
      out[i] = vals[point];
    } else {
      out[i] = vals[rest % vals.size()];
      rest /= vals.size();
    }
  }
  return out;
}

std::vector<std::string> Grid::assignments(std::size_t point) const {
  const auto vals = values(point);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < axes_.size(); ++i) out.push_back(axes_[i].key + "=" + vals[i]);
  return out;
}

std::string Grid::describe(std::size_t point) const {
  return fmt::format("{}", fmt::join(assignments(point), ", "));
}

std::optional<std::size_t> Grid::find(const std::vector<std::string>& assignments) const {
  std::vector<std::optional<std::string>> wanted(axes_.size());
  for (const auto& a : assignments) {
    const auto eq = a.find('=');
    const std::string key = trim(a.substr(0, eq));
    std::size_t i = 0;
    while (i < axes_.size() && axes_[i].key != key) ++i;
    if (eq == std::string::npos || i == axes_.size() || wanted[i]) return {};
    wanted[i] = trim(a.substr(eq + 1));
  }
  for (const auto& w : wanted) {
    if (!w) return {};
  }
  for (std::size_t p = 0; p < size_; ++p) {
    const auto vals = values(p);
    bool all = true;
    for (std::size_t i = 0; i < axes_.size() && all; ++i) all = same_value(vals[i], *wanted[i]);
    if (all) return p;
  }
  return {};
}

}  // namespace servesim::sweep
