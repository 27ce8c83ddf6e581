#include "engine/ticket_extra.h"

#include <cstdlib>
#include <cstring>
#include <new>

namespace anteroom {

const TicketExtra* make_extra(std::string_view user, const std::optional<KeyHash>& key) {
  if (user.empty() && !key) return nullptr;
  void* m = std::malloc(extra_bytes(user));
  if (m == nullptr) throw std::bad_alloc();
  auto* e = new (m) TicketExtra;
  e->user_len = static_cast<uint16_t>(user.size());
  e->has_key = key.has_value();
  if (key) e->key = *key;
  std::memcpy(reinterpret_cast<char*>(e + 1), user.data(), user.size());
  return e;
}

void free_extra(const TicketExtra* e) {
  if (e == nullptr) return;
  e->~TicketExtra();
  std::free(const_cast<TicketExtra*>(e));
}

size_t extra_bytes(std::string_view user) { return sizeof(TicketExtra) + user.size(); }

}  // namespace anteroom
