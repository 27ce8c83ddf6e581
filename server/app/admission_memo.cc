#include "server/app/admission_memo.h"

#include <array>
#include <functional>
#include <string>

namespace anteroom {

namespace {

constexpr size_t kSlots = 4096;  // per thread; a slot holds about 600 bytes when full

struct Slot {
  std::string room;
  std::string value;
  MemoAdmission admission;
};

std::array<Slot, kSlots>& table() {
  thread_local std::array<Slot, kSlots> t;
  return t;
}

size_t slot_of(std::string_view room, std::string_view value) {
  const size_t h = std::hash<std::string_view>{}(value);
  return (h ^ (std::hash<std::string_view>{}(room)*0x9e3779b97f4a7c15ULL)) % kSlots;
}

}  // namespace

const MemoAdmission* memo_find(std::string_view room, std::string_view cookie_value) {
  const Slot& s = table()[slot_of(room, cookie_value)];
  if (s.value.empty() || s.value != cookie_value || s.room != room) return nullptr;
  return &s.admission;
}

void memo_store(std::string_view room, std::string_view cookie_value, const MemoAdmission& a) {
  Slot& s = table()[slot_of(room, cookie_value)];
  s.room.assign(room);
  s.value.assign(cookie_value);
  s.admission = a;
}

}  // namespace anteroom
