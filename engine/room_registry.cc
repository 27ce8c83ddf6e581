#include "engine/room_registry.h"

#include <bit>
#include <functional>

#include "engine/room.h"

namespace anteroom {

RoomRegistry::RoomRegistry(size_t max_rooms)
    : max_rooms_(max_rooms),
      mask_(std::bit_ceil(max_rooms * 2 + 2) - 1),
      slots_(new std::atomic<Room*>[mask_ + 1]) {
  for (size_t i = 0; i <= mask_; ++i) slots_[i].store(nullptr, std::memory_order_relaxed);
}

size_t RoomRegistry::home(std::string_view name) const {
  return std::hash<std::string_view>{}(name)&mask_;
}

Room* RoomRegistry::find(std::string_view name) const {
  // Bounded: after many deletions the table may hold tombstones and no empty slot.
  for (size_t n = 0, i = home(name); n <= mask_; ++n, i = (i + 1) & mask_) {
    Room* r = slots_[i].load(std::memory_order_acquire);
    if (r == nullptr) return nullptr;
    if (r != tombstone() && r->name() == name) return r;
  }
  return nullptr;
}

bool RoomRegistry::insert(Room* room) {
  if (count_ >= max_rooms_) return false;
  for (size_t i = home(room->name());; i = (i + 1) & mask_) {
    Room* r = slots_[i].load(std::memory_order_relaxed);
    if (r == nullptr || r == tombstone()) {
      slots_[i].store(room, std::memory_order_release);
      ++count_;
      return true;
    }
  }
}

void RoomRegistry::erase(const Room* room) {
  for (size_t i = home(room->name());; i = (i + 1) & mask_) {
    Room* r = slots_[i].load(std::memory_order_relaxed);
    if (r == nullptr) return;
    if (r == room) {
      // A tombstone keeps later entries of the same probe chain reachable.
      slots_[i].store(tombstone(), std::memory_order_release);
      --count_;
      return;
    }
  }
}

void RoomRegistry::replace(const Room* old, Room* fresh) {
  for (size_t i = home(old->name());; i = (i + 1) & mask_) {
    Room* r = slots_[i].load(std::memory_order_relaxed);
    if (r == nullptr) return;
    if (r == old) {
      slots_[i].store(fresh, std::memory_order_release);
      return;
    }
  }
}

}  // namespace anteroom
