// Maps a room's users to their live ticket, so the same user always gets the same live
// ticket, also when two joins for that user race.
//
// Thread safety: every method from any thread. Users are spread over 16 stripes, each an
// open-addressing table under its own mutex, held only for a lookup plus, at most, the
// creation of one ticket: joins for different users rarely meet, and joins for one user
// take turns, which is what makes them agree. Anonymous joins never come here.
//
// Memory follows the live tickets: an entry is 16 bytes (the ticket's seq and the name's
// hash; the name itself is read through the ticket, see NameOf), the owner erases it when
// the ticket ends, and the stripes are allocated on the room's first named join.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string_view>
#include <vector>

namespace anteroom {

class UserIndex {
 public:
  static constexpr uint64_t kNone = ~uint64_t{0};
  // The user name of live ticket `seq` (its TicketExtra's). Must not take the stripe lock.
  using NameOf = std::string_view (*)(const void* context, uint64_t seq);

  UserIndex(NameOf name_of, const void* context) : name_of_(name_of), context_(context) {}
  ~UserIndex();
  UserIndex(const UserIndex&) = delete;
  UserIndex& operator=(const UserIndex&) = delete;

  struct Entry {
    uint64_t seq_plus_one = 0;  // 0: empty; kTombstone: erased
    uint32_t hash = 0;
  };
  struct Stripe {
    std::mutex mu;
    std::vector<Entry> table;  // guarded by mu; size a power of two, or empty
    size_t used = 0;           // live entries plus tombstones; guarded by mu
  };

  // The user's entry, with its stripe locked for as long as this lives.
  class Lock {
   public:
    Lock(const UserIndex& index, Stripe& stripe, std::string_view user);
    // The user's ticket, or kNone.
    uint64_t seq() const { return seq_; }
    // The user's ticket is now `seq` (whose TicketExtra names the user).
    void set(uint64_t seq);

   private:
    const UserIndex& index_;
    Stripe& stripe_;
    std::unique_lock<std::mutex> lock_;
    std::string_view user_;
    uint32_t hash_;
    size_t at_ = SIZE_MAX;  // the user's entry in the table, if found
    uint64_t seq_ = kNone;
  };
  Lock lock(std::string_view user) { return Lock(*this, stripe(user), user); }

  // Owner: `user`'s ticket `seq` ended; forget it unless the user has a newer one.
  void erase_if(std::string_view user, uint64_t seq);
  size_t size() const;
  size_t bytes_allocated() const;

 private:
  static constexpr size_t kStripes = 16;
  static constexpr uint64_t kTombstone = ~uint64_t{0};
  static uint32_t hash_of(std::string_view user);
  Stripe& stripe(std::string_view user);
  // The slot of `user` in the table (found), or where it would go; SIZE_MAX if the table is
  // empty. Caller holds the stripe.
  size_t probe(const Stripe& s, std::string_view user, uint32_t hash, bool* found) const;
  void grow(Stripe& s) const;

  const NameOf name_of_;
  const void* const context_;
  // Allocated on first use by CAS (acq_rel), loaded with acquire.
  std::atomic<Stripe*> stripes_{nullptr};
};

}  // namespace anteroom
