#include "engine/user_index.h"

#include <functional>

namespace anteroom {

UserIndex::~UserIndex() { delete[] stripes_.load(std::memory_order_acquire); }

uint32_t UserIndex::hash_of(std::string_view user) {
  return static_cast<uint32_t>(std::hash<std::string_view>{}(user) >> 7);  // not the stripe bits
}

UserIndex::Stripe& UserIndex::stripe(std::string_view user) {
  Stripe* s = stripes_.load(std::memory_order_acquire);
  if (s == nullptr) {
    auto* fresh = new Stripe[kStripes];
    if (stripes_.compare_exchange_strong(s, fresh, std::memory_order_acq_rel)) {
      s = fresh;
    } else {
      delete[] fresh;  // another join installed them first; `s` holds theirs
    }
  }
  return s[std::hash<std::string_view>{}(user) % kStripes];
}

size_t UserIndex::probe(const Stripe& s, std::string_view user, uint32_t hash, bool* found) const {
  *found = false;
  if (s.table.empty()) return SIZE_MAX;
  const size_t mask = s.table.size() - 1;
  size_t first_free = SIZE_MAX;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    const Entry& e = s.table[i];
    if (e.seq_plus_one == 0) return first_free != SIZE_MAX ? first_free : i;
    if (e.seq_plus_one == kTombstone) {
      if (first_free == SIZE_MAX) first_free = i;
    } else if (e.hash == hash && name_of_(context_, e.seq_plus_one - 1) == user) {
      *found = true;
      return i;
    }
  }
}

void UserIndex::grow(Stripe& s) const {
  std::vector<Entry> old = std::move(s.table);
  size_t live = 0;
  for (const Entry& e : old) live += e.seq_plus_one != 0 && e.seq_plus_one != kTombstone;
  // Sized for what is live (tombstones are dropped here): a quarter full after a rehash, so
  // churn shrinks the table as well as growing it.
  size_t size = 8;
  while (size < (live + 1) * 4) size *= 2;
  s.table.assign(size, Entry{});
  s.used = 0;
  const size_t mask = s.table.size() - 1;
  for (const Entry& e : old) {
    if (e.seq_plus_one == 0 || e.seq_plus_one == kTombstone) continue;
    size_t i = e.hash & mask;
    while (s.table[i].seq_plus_one != 0) i = (i + 1) & mask;
    s.table[i] = e;
    ++s.used;
  }
}

UserIndex::Lock::Lock(const UserIndex& index, Stripe& stripe, std::string_view user)
    : index_(index), stripe_(stripe), lock_(stripe.mu), user_(user), hash_(hash_of(user)) {
  bool found = false;
  const size_t i = index_.probe(stripe_, user, hash_, &found);
  if (found) {
    at_ = i;
    seq_ = stripe_.table[i].seq_plus_one - 1;
  }
}

void UserIndex::Lock::set(uint64_t seq) {
  if (at_ != SIZE_MAX) {  // the user's entry: point it at the new ticket
    stripe_.table[at_].seq_plus_one = seq + 1;
    seq_ = seq;
    return;
  }
  // Keep the table at most half full (tombstones included), so probes stay short.
  if ((stripe_.used + 1) * 2 > stripe_.table.size()) index_.grow(stripe_);
  bool found = false;
  const size_t i = index_.probe(stripe_, user_, hash_, &found);
  if (stripe_.table[i].seq_plus_one == 0) ++stripe_.used;  // a tombstone reused is counted
  stripe_.table[i] = Entry{seq + 1, hash_};
  at_ = i;
  seq_ = seq;
}

void UserIndex::erase_if(std::string_view user, uint64_t seq) {
  Stripe& s = stripe(user);
  std::lock_guard lock(s.mu);
  bool found = false;
  const size_t i = probe(s, user, hash_of(user), &found);
  if (found && s.table[i].seq_plus_one == seq + 1) s.table[i].seq_plus_one = kTombstone;
}

size_t UserIndex::size() const {
  Stripe* s = stripes_.load(std::memory_order_acquire);
  if (s == nullptr) return 0;
  size_t n = 0;
  for (size_t i = 0; i < kStripes; ++i) {
    std::lock_guard lock(s[i].mu);
    for (const Entry& e : s[i].table) n += e.seq_plus_one != 0 && e.seq_plus_one != kTombstone;
  }
  return n;
}

size_t UserIndex::bytes_allocated() const {
  Stripe* s = stripes_.load(std::memory_order_acquire);
  if (s == nullptr) return 0;
  size_t bytes = kStripes * sizeof(Stripe);
  for (size_t i = 0; i < kStripes; ++i) {
    std::lock_guard lock(s[i].mu);
    bytes += s[i].table.capacity() * sizeof(Entry);
  }
  return bytes;
}

}  // namespace anteroom
