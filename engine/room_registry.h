// Finds a room by name without a lock.
//
// Thread safety: find() and for_each() from any thread at any time; insert() and erase()
// only by one writer at a time (the engine's admin mutex). An open-addressing table of
// atomic pointers that never resizes: its size is fixed by max_rooms.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <string_view>

namespace anteroom {

class Room;

class RoomRegistry {
 public:
  explicit RoomRegistry(size_t max_rooms);

  Room* find(std::string_view name) const;
  // False when max_rooms rooms are registered already.
  bool insert(Room* room);
  void erase(const Room* room);
  // Puts `fresh` (same name) where `old` was: a reader finds one or the other, never none.
  void replace(const Room* old, Room* fresh);
  size_t size() const { return count_; }

  template <typename F>
  void for_each(F&& f) const {
    for (size_t i = 0; i <= mask_; ++i) {
      Room* r = slots_[i].load(std::memory_order_acquire);
      if (r != nullptr && r != tombstone()) f(r);
    }
  }

 private:
  // Marks a deleted entry; never dereferenced.
  static Room* tombstone() { return reinterpret_cast<Room*>(&tombstone_marker_); }
  static inline char tombstone_marker_ = 0;
  size_t home(std::string_view name) const;

  size_t max_rooms_;
  size_t mask_;
  size_t count_ = 0;  // writer only
  // Stores are release so a reader that finds a Room* sees the constructed room.
  std::unique_ptr<std::atomic<Room*>[]> slots_;
};

}  // namespace anteroom
