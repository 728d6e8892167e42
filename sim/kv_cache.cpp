#include "sim/kv_cache.hpp"

#include <cmath>
#include <stdexcept>

namespace servesim {

KvCache::KvCache(std::int64_t total_blocks, std::int32_t block_size, double watermark)
    : total_(total_blocks),
      block_size_(block_size),
      watermark_blocks_(
          static_cast<std::int64_t>(std::floor(watermark * static_cast<double>(total_blocks)))) {
  if (total_blocks <= 0 || block_size <= 0) {
    throw std::invalid_argument("KvCache needs positive block count and size");
  }
}

std::int64_t KvCache::extra_for(std::int64_t held, std::int64_t tokens) const {
  const std::int64_t need = blocks_for_tokens(tokens);
  return need > held ? need - held : 0;
}

bool KvCache::grow(std::int64_t& held, std::int64_t tokens, bool keep_watermark) {
  const std::int64_t extra = extra_for(held, tokens);
  if (extra == 0) return true;
  const std::int64_t reserve = keep_watermark ? watermark_blocks_ : 0;
  if (free_blocks() - extra < reserve) return false;
  used_ += extra;
  held += extra;
  return true;
}

void KvCache::release(std::int64_t& held) {
  used_ -= held;
  held = 0;
}

bool KvCache::can_ever_fit(std::int64_t tokens) const {
  return blocks_for_tokens(tokens) <= total_ - watermark_blocks_;
}

}  // namespace servesim
