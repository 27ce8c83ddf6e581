// Maps a room's users to their current ticket, so the same user always gets the same live
// ticket, also when two joins for that user race.
//
// Thread safety: every method may be called from any thread. Lock-free: a fixed array of
// buckets, each a singly linked list that only grows at its head by CAS. A node, once
// linked, stays until the index is destroyed (with its room).
//
// Each node holds `ticket`: 0 = none yet, kPending = a join is creating one, else seq + 1.
// A join for user u: find or link u's node; then whoever moves `ticket` from "none or dead"
// to kPending creates the ticket and stores its seq; everyone else waits for that store
// (a few hundred ns) and returns the same ticket.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>

namespace anteroom {

class UserNode {
 public:
  static constexpr uint64_t kNone = 0;
  static constexpr uint64_t kPending = ~uint64_t{0};

  // The name is stored right after the node, in the same allocation.
  std::string_view name() const { return {reinterpret_cast<const char*>(this + 1), len_}; }
  // seq + 1 of the user's latest ticket, kNone, or kPending. acquire: pairs with the release
  // in set_ticket so the ticket's slot is published before its number is seen here.
  uint64_t ticket() const { return ticket_.load(std::memory_order_acquire); }
  bool try_begin(uint64_t expected) {
    return ticket_.compare_exchange_strong(expected, kPending, std::memory_order_acq_rel);
  }
  void set_ticket(uint64_t seq) { ticket_.store(seq + 1, std::memory_order_release); }
  // Gives up a try_begin (or a fresh node): puts back the value `raw` that ticket() held.
  void restore(uint64_t raw) { ticket_.store(raw, std::memory_order_release); }

 private:
  friend class UserIndex;
  UserNode* next_ = nullptr;  // immutable once the node is linked
  std::atomic<uint64_t> ticket_{kPending};
  uint32_t len_ = 0;
};

class UserIndex {
 public:
  explicit UserIndex(uint32_t bucket_bits = 18);
  ~UserIndex();
  UserIndex(const UserIndex&) = delete;
  UserIndex& operator=(const UserIndex&) = delete;

  // The node for `user`. If it had to be linked, *inserted is true and its ticket is
  // kPending, owned by the caller, who must call set_ticket().
  UserNode* find_or_insert(std::string_view user, bool* inserted);
  size_t bytes_allocated() const { return bytes_.load(std::memory_order_relaxed); }

 private:
  std::atomic<UserNode*>* buckets();
  static UserNode* make_node(std::string_view user);

  const uint32_t bucket_bits_;
  // Allocated on first use, so rooms without named users pay nothing. Installed by CAS
  // (acq_rel) and loaded with acquire so the zeroed array is seen initialised.
  std::atomic<std::atomic<UserNode*>*> buckets_{nullptr};
  std::atomic<size_t> bytes_{0};  // statistics only: relaxed
};

}  // namespace anteroom
