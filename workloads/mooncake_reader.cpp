#include "workloads/mooncake_reader.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/config/input_error.hpp"
#include "sim/util/csv_reader.hpp"
#include "sim/util/splitmix.hpp"

namespace servesim {
namespace {

constexpr std::string_view kKeys = "timestamp, input_length, output_length, hash_ids";

}  // namespace

std::int64_t chain_hash(std::int64_t previous, std::int64_t id) {
  const std::uint64_t z = mix64(static_cast<std::uint64_t>(previous),
                                static_cast<std::uint64_t>(id) + 0x632be59bd9b4e019ULL);
  return static_cast<std::int64_t>((z >> 2) | (std::uint64_t{1} << 62));
}

MooncakeReader::MooncakeReader(std::string path)
    : path_(std::move(path)),
      in_(open_input_file(path_, "a Mooncake trace (one JSON object per line)")) {}

void MooncakeReader::fail(const std::string& message) const {
  throw_input_error(path_, static_cast<int>(std::min<std::int64_t>(line_, INT32_MAX)), 0, message);
}

std::int64_t MooncakeReader::whole(const nlohmann::json& j, const char* key, std::int64_t lo,
                                   std::int64_t hi) const {
  const auto it = j.find(key);
  if (it == j.end()) fail(fmt::format("no key '{}' (expected keys {})", key, kKeys));
  if (it->is_number_unsigned() && it->get<std::uint64_t>() <= static_cast<std::uint64_t>(hi)) {
    const auto x = static_cast<std::int64_t>(it->get<std::uint64_t>());
    if (x >= lo) return x;
  }
  fail(fmt::format("key '{}': expected a whole number in [{}, {}], got {}", key, lo, hi,
                   it->dump()));
}

bool MooncakeReader::next(MooncakeRow& row) {
  if (!read_csv_line(in_, text_, path_, line_ + 1)) return false;
  ++line_;
  const nlohmann::json j = nlohmann::json::parse(text_, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    fail(fmt::format("not a JSON object (expected one object per line with keys {})", kKeys));
  }
  const auto ts = j.find("timestamp");
  if (ts == j.end()) fail(fmt::format("no key 'timestamp' (expected keys {})", kKeys));
  if (!ts->is_number() || !std::isfinite(ts->get<double>()) || ts->get<double>() < 0 ||
      ts->get<double>() * 1e-3 > kSimHorizonS) {
    fail(fmt::format("key 'timestamp': expected a time in ms in [0, {:.0e}], got {}",
                     kSimHorizonS * 1e3, ts->dump()));
  }
  const SimTime t = ts->is_number_unsigned()
                        ? static_cast<SimTime>(ts->get<std::uint64_t>()) * 1'000'000
                        : std::llround(ts->get<double>() * 1e6);
  if (t < previous_) {
    fail(
        fmt::format("key 'timestamp': {} ms is earlier than the previous line's (expected "
                    "non-decreasing arrivals)",
                    ts->dump()));
  }
  constexpr std::int64_t kMaxTokens = std::numeric_limits<std::int32_t>::max();
  const std::int64_t prompt = whole(j, "input_length", 1, kMaxTokens);
  const std::int64_t output = whole(j, "output_length", 0, kMaxTokens);
  const auto ids = j.find("hash_ids");
  if (ids == j.end()) fail(fmt::format("no key 'hash_ids' (expected keys {})", kKeys));
  const std::int64_t blocks = (prompt + kMooncakeHashBlockTokens - 1) / kMooncakeHashBlockTokens;
  if (!ids->is_array() || static_cast<std::int64_t>(ids->size()) != blocks) {
    fail(
        fmt::format("key 'hash_ids': expected an array of {} ids (one per {}-token block of "
                    "input_length {}), got {}",
                    blocks, kMooncakeHashBlockTokens, prompt,
                    ids->is_array() ? fmt::format("{} ids", ids->size()) : ids->dump()));
  }
  auto hashes = std::make_shared<PrefixHashes>();
  hashes->block_tokens = kMooncakeHashBlockTokens;
  hashes->chain.reserve(ids->size());
  std::int64_t chain = 0;
  for (std::size_t i = 0; i < ids->size(); ++i) {
    const nlohmann::json& id = (*ids)[i];
    if (!id.is_number_unsigned() ||
        id.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
      fail(fmt::format("key 'hash_ids': id {} is {} (expected a whole number ≥ 0)", i, id.dump()));
    }
    chain = chain_hash(chain, static_cast<std::int64_t>(id.get<std::uint64_t>()));
    hashes->chain.push_back(chain);
  }
  previous_ = t;
  row.arrival = t;
  row.prompt_tokens = static_cast<std::int32_t>(prompt);
  row.zero_output = output == 0;
  row.output_tokens = output == 0 ? 1 : static_cast<std::int32_t>(output);
  row.hashes = std::move(hashes);
  return true;
}

}  // namespace servesim
