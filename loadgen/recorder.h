// What one thread of one loadgen process saw: latencies, errors, per-second figures and one
// record per visitor. Threads never share a Recorder; processes send theirs to the
// coordinator as bytes (encode/decode) and it merges them into a Phase.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "loadgen/run_result.h"

namespace anteroom::loadgen {

enum class Outcome : uint8_t {
  kPending,    // not finished when the run ended
  kLeft,       // admitted, used the admission, left
  kAbandoned,  // gave up waiting on purpose
  kExpired,    // the server ended the ticket (EXPIRED or LEFT without us leaving)
  kFailed,     // an error ended the visit
  kHeld,       // hold: kept its stream open to the end, as asked
  kServed,     // protect, direct: the origin answered
};

inline constexpr uint64_t kNoSeq = UINT64_MAX;

// One visitor, as the truth checks need it. Times are now_us() (shared by all processes).
struct VisitorRecord {
  uint64_t seq = kNoSeq;             // the server's join order number
  int64_t due_us = 0;                // when it was meant to arrive
  int64_t join_sent_us = 0;          // join request written
  int64_t join_acked_us = 0;         // join answer read
  int64_t allowed_seen_us = 0;       // ALLOWED first read; 0: never
  int64_t last_waiting_sent_us = 0;  // the latest request sent that was answered WAITING
  int64_t change_seen_us = 0;        // hold: the pushed change arrived
  int64_t pow_solved_us = 0;         // bots: the proof of work solved (0: none asked)
  uint64_t first_position = 0;
  uint64_t ref = 0;  // the ticket's public reference (16 hex digits), as a number; 0: none seen
  Outcome outcome = Outcome::kPending;
  bool position_grew = false;
  // The join was answered as a scheduled event's pre-queue answers: WAITING, "position": null
  // and "opens_at" (drop).
  bool joined_prequeue = false;
  uint16_t join_refused = 0;  // the HTTP status of a join refused (429 rate_limited, ...)
  bool saw_page = false;      // site: the waiting page was shown (in place or by a redirect)
};

class Recorder {
 public:
  explicit Recorder(int64_t t0_us = 0) : t0_(t0_us) {}

  void request(RequestKind kind, int64_t due_us, int64_t done_us);
  void error(ErrorKind kind, int64_t at_us);
  void admitted(int64_t due_us, int64_t seen_us);

  VisitCounts visits;
  std::vector<VisitorRecord> records;

  // Adds this recorder's figures (not its records) into `phase`.
  void merge_into(Phase* phase) const;
  void merge(const Recorder& other);

  std::string encode() const;
  // False if `bytes` is not what encode() wrote.
  bool decode(std::string_view bytes);

 private:
  struct Second {
    uint64_t requests = 0;
    uint64_t errors = 0;
    uint64_t admitted = 0;
    Histogram latency;
  };
  Second& second_at(int64_t at_us);

  int64_t t0_;
  std::array<uint64_t, kErrorKinds> errors_{};
  std::array<Histogram, kRequestKinds> latency_;
  Histogram tta_;
  std::vector<Second> seconds_;
};

// The truth checks over every visitor of one room (see TruthChecks).
TruthChecks check_truth(std::vector<VisitorRecord> records, bool hold);

}  // namespace anteroom::loadgen
