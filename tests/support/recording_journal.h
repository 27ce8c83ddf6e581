// A journal that keeps every change it is told, in the order told, for tests to read. An
// optional hook runs inside record() first (to block there, say).
//
// Thread safety: record() from any thread; read changes() once the engine is quiet.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "engine/journal.h"

namespace anteroom::testing {

struct RecordedChange {
  Change::Kind kind;
  std::string room;
  uint64_t seq = 0;
  std::string user;
  EndReason reason = EndReason::kNone;
  std::vector<uint64_t> seqs;
};

class RecordingJournal final : public Journal {
 public:
  uint64_t record(const Change& c) override {
    if (hook) hook(c);
    std::lock_guard lock(mu_);
    changes_.push_back(RecordedChange{c.kind,
                                      std::string(c.room),
                                      c.seq,
                                      std::string(c.user),
                                      c.reason,
                                      {c.seqs.begin(), c.seqs.end()}});
    return 0;
  }
  std::vector<RecordedChange> changes() const {
    std::lock_guard lock(mu_);
    return changes_;
  }
  // The seqs of `kind` changes in `room`, in the order told.
  std::vector<uint64_t> seqs_of(Change::Kind kind, const std::string& room) const {
    std::vector<uint64_t> out;
    for (const RecordedChange& c : changes())
      if (c.kind == kind && c.room == room) out.push_back(c.seq);
    return out;
  }

  std::function<void(const Change&)> hook;  // set before the engine runs

 private:
  mutable std::mutex mu_;
  std::vector<RecordedChange> changes_;
};

}  // namespace anteroom::testing
