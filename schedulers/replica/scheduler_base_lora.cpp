#include <algorithm>

#include "schedulers/replica/scheduler_base.hpp"

namespace servesim {

bool SchedulerBase::lora_ready_front() {
  // Every adapter can be admitted while a slot is free or evictable; else only those on the GPU.
  const bool slot = lora_->has_slot();
  std::size_t i = 0;
  for (; i < waiting_.size(); ++i) {
    const std::int32_t a = waiting_[i]->spec.adapter;
    if (a < 0 || slot || lora_->on_gpu(a)) break;
  }
  if (i == waiting_.size()) return false;
  const auto first = waiting_.begin();
  const auto at = first + static_cast<std::ptrdiff_t>(i);
  std::rotate(first, at, at + 1);
  lora_moved_from_ = i;
  return true;
}

void SchedulerBase::lora_restore_front() {
  const auto first = waiting_.begin();
  std::rotate(first, first + 1, first + static_cast<std::ptrdiff_t>(lora_moved_from_) + 1);
  lora_moved_from_ = 0;
}

bool SchedulerBase::admit_lora_into(Batch& batch, KvCache& kv, std::int32_t budget, bool whole) {
  if (!lora_ready_front()) return false;
  Request* r = waiting_.front();
  if (!admit_front_into(batch, kv, budget, whole)) {
    lora_restore_front();
    return false;
  }
  lora_admitted(r, batch);
  return true;
}

}  // namespace servesim
