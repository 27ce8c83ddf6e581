// Maps a room's users to their live ticket, so the same user always gets the same live
// ticket, also when two joins for that user race.
//
// Thread safety: every method from any thread. Users are spread over 16 stripes, each a
// hash map under its own mutex, held only for a lookup plus, at most, the creation of one
// ticket: joins for different users rarely meet, and joins for one user take turns, which
// is what makes them agree. Anonymous joins never come here.
//
// Memory follows the live tickets: the owner erases a user's entry when the ticket ends
// (erase_if), and the stripes are allocated on the room's first named join. Keys are views
// of the name kept in the ticket's TicketExtra, which outlives the entry (it is freed with
// the ticket's segment, after the ticket ended and its entry was erased).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <unordered_map>

namespace anteroom {

class UserIndex {
 public:
  struct Stripe {
    std::mutex mu;
    std::unordered_map<std::string_view, uint64_t> map;  // guarded by mu
  };
  static constexpr uint64_t kNone = ~uint64_t{0};

  UserIndex() = default;
  ~UserIndex();
  UserIndex(const UserIndex&) = delete;
  UserIndex& operator=(const UserIndex&) = delete;

  // The user's entry, with its stripe locked for as long as this lives.
  class Lock {
   public:
    Lock(Stripe& stripe, std::string_view user);
    // The user's ticket, or kNone.
    uint64_t seq() const { return seq_; }
    // The user's ticket is now `seq`, named by `key` (a view that lives as long as the
    // ticket: its TicketExtra's).
    void set(std::string_view key, uint64_t seq);

   private:
    Stripe& stripe_;
    std::unique_lock<std::mutex> lock_;
    std::string_view user_;
    uint64_t seq_ = kNone;
  };
  Lock lock(std::string_view user) { return Lock(stripe(user), user); }

  // Owner: `user`'s ticket `seq` ended; forget it unless the user has a newer one.
  void erase_if(std::string_view user, uint64_t seq);
  size_t size() const;
  size_t bytes_allocated() const;

 private:
  static constexpr size_t kStripes = 16;
  Stripe& stripe(std::string_view user);

  // Allocated on first use by CAS (acq_rel), loaded with acquire.
  std::atomic<Stripe*> stripes_{nullptr};
};

}  // namespace anteroom
