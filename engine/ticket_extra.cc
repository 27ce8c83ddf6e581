#include "engine/ticket_extra.h"

#include <cstdlib>
#include <cstring>
#include <new>

namespace anteroom {

const TicketExtra* make_extra(std::string_view user, const std::optional<KeyHash>& key) {
  if (user.empty() && !key) return nullptr;
  void* m = std::malloc(extra_bytes(user, key.has_value()));
  if (m == nullptr) throw std::bad_alloc();
  auto* e = new (m) TicketExtra;
  e->user_len = static_cast<uint8_t>(user.size());
  e->has_key = key.has_value() ? 1 : 0;
  auto* out = reinterpret_cast<char*>(e + 1);
  if (key) {
    std::memcpy(out, key->data(), key->size());
    out += key->size();
  }
  if (!user.empty()) std::memcpy(out, user.data(), user.size());
  return e;
}

void free_extra(const TicketExtra* e) {
  if (e == nullptr) return;
  e->~TicketExtra();
  std::free(const_cast<TicketExtra*>(e));
}

size_t extra_bytes(std::string_view user, bool has_key) {
  return sizeof(TicketExtra) + (has_key ? sizeof(KeyHash) : 0) + user.size();
}

}  // namespace anteroom
