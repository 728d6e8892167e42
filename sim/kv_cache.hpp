#pragma once

#include <cstdint>

namespace servesim {

// Paged KV-cache block accounting for one replica. Blocks are counted, not addressed; each request
// keeps its own count (`held`, passed by reference) so grow and release stay O(1).
// Invariants: 0 ≤ used ≤ total; used == Σ held over the requests of this replica.
class KvCache {
 public:
  KvCache(std::int64_t total_blocks, std::int32_t block_size, double watermark);

  std::int64_t total_blocks() const { return total_; }
  std::int64_t used_blocks() const { return used_; }
  std::int64_t free_blocks() const { return total_ - used_; }
  std::int32_t block_size() const { return block_size_; }
  std::int64_t watermark_blocks() const { return watermark_blocks_; }

  std::int64_t blocks_for_tokens(std::int64_t tokens) const {
    return (tokens + block_size_ - 1) / block_size_;
  }
  // Extra blocks a holder of `held` blocks needs to hold `tokens` tokens.
  std::int64_t extra_for(std::int64_t held, std::int64_t tokens) const;
  // Grows `held` to cover `tokens`; false (and no change) when blocks are short. With
  // `keep_watermark`, refuses when fewer than the watermark would stay free (new admissions).
  bool grow(std::int64_t& held, std::int64_t tokens, bool keep_watermark = false);
  // Frees every block of a holder; `held` becomes 0.
  void release(std::int64_t& held);
  // A request of `tokens` total could ever fit (empty cache, watermark kept).
  bool can_ever_fit(std::int64_t tokens) const;

 private:
  std::int64_t total_;
  std::int32_t block_size_;
  std::int64_t watermark_blocks_;
  std::int64_t used_ = 0;
};

}  // namespace servesim
