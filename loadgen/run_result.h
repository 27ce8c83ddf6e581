// What one loadgen run found, merged over its threads and processes: the input of every
// report (JSON, Markdown, HTML). Plain data, no behaviour beyond small helpers.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "loadgen/histogram.h"

namespace anteroom::loadgen {

// Why a request or a session failed.
enum class ErrorKind : uint8_t {
  kConnect,   // could not connect (refused, no ports, descriptor limit)
  kTimeout,   // no answer within --timeout
  k4xx,       // an HTTP 4xx answer where none was expected
  k5xx,       // an HTTP 5xx answer (a 503 not at a connection limit, below)
  kProtocol,  // an answer that is not what the protocol says (bad HTTP, JSON, frame)
  kClosed,    // the server closed a connection or stream before the visit was over
  // A 503 at one of the server's connection limits (its X-Anteroom-Limit header says which):
  kLimitAddress,      // --max-connections-per-address: too many from one source address
  kLimitConnections,  // --max-connections: too many open in all
};
inline constexpr int kErrorKinds = 8;
const char* error_kind_name(ErrorKind kind);  // "connect", "timeout", "4xx", ...
// What to do about an error of this kind, or nullptr when there is nothing to say.
const char* error_kind_advice(ErrorKind kind);

// What a request was for; each has its own latency histogram.
enum class RequestKind : uint8_t {
  kJoin,    // POST tickets, or WebSocket ENTER to its answer
  kStatus,  // GET status (poll), or CHECK_QUEUE_STATUS to its answer
  kStream,  // opening an SSE stream or a WebSocket: request to the first frame
  kUse,     // the admission used: GET /v1/gate/{room} or POST verify
  kLeave,   // DELETE ticket
  kOrigin,  // a request to the protected origin (protect scenario)
  kFixed,   // closed model: the one request it repeats
};
inline constexpr int kRequestKinds = 7;
const char* request_kind_name(RequestKind kind);  // "join", "status", ...

// One second of the run (second 0 starts when the first visitor is due).
struct SecondBucket {
  uint64_t requests = 0;       // answered requests (any outcome) finishing in this second
  uint64_t errors = 0;         // errors of any kind in this second
  uint64_t admitted = 0;       // visitors that learnt in this second that they were admitted
  uint64_t open_sessions = 0;  // most sessions open at once (sampled every 100 ms)
  uint64_t waiting = 0;        // visitors waiting at the end of the second
  uint64_t active = 0;         // visitors admitted and not yet gone at the end of the second
  Histogram latency;           // all requests finishing in this second
};

// What happened to the visitors.
struct VisitCounts {
  uint64_t planned = 0;     // visitors the scenario meant to send
  uint64_t joined = 0;      // got a ticket
  uint64_t admitted = 0;    // saw ALLOWED
  uint64_t used = 0;        // used the admission at the gate or verify route
  uint64_t left = 0;        // finished the visit and left
  uint64_t abandoned = 0;   // gave up waiting on purpose (the scenario's abandon share)
  uint64_t expired = 0;     // told EXPIRED by the server
  uint64_t unresolved = 0;  // still waiting, or silent, when the run ended
  uint64_t failed = 0;      // ended by an error
  uint64_t moved = 0;       // moved to another target (its node went away) and went on
};

// The truth checks. Every number here should be 0 on a correct server.
struct TruthChecks {
  // A visitor seen WAITING in an answer to a request sent after a visitor that joined
  // later (by `seq`) was seen ALLOWED: admission out of join order, observed directly.
  uint64_t inversions = 0;
  // Pairs where the client knows the join order (one join was answered before the other
  // was sent) but the server's `seq` says the opposite.
  uint64_t join_order_violations = 0;
  // Visitors whose position ever grew from one answer to the next.
  uint64_t positions_grew = 0;
  // Tickets of visitors that did not abandon and were neither admitted nor ended.
  uint64_t unresolved = 0;
};

// One timed part of a run; most scenarios have one ("run"), protect has "direct" and
// "queued".
struct Phase {
  std::string name = "run";
  double duration_s = 0;
  VisitCounts visits;
  uint64_t max_open_sessions = 0;  // most sessions open at once, all processes together
  std::array<uint64_t, kErrorKinds> errors{};
  std::array<Histogram, kRequestKinds> latency;
  Histogram time_to_admission;  // from when the visitor was due to arrive to ALLOWED seen
  std::vector<SecondBucket> seconds;
  TruthChecks truth;

  uint64_t requests() const;     // answered requests over all kinds
  uint64_t error_count() const;  // all kinds together
  double error_rate() const;     // errors / (requests + errors), 0 when none
};

// A pass/fail line: a seed-visit step, or a truth check, or a scenario's own verdict.
struct Check {
  std::string name;
  bool passed = false;
  std::string detail;
};

// A scenario's own figure (e.g. "memory per session", 6240, "bytes").
struct Metric {
  std::string name;
  double value = 0;
  std::string unit;
};

struct RunResult {
  std::string scenario;    // "surge", "seed-visit", ...
  std::string command;     // the command line as run
  std::string machine;     // e.g. "2 cores, Linux 6.1, 24 GiB" (see machine_description())
  std::string started_at;  // UTC, ISO 8601
  std::vector<std::pair<std::string, std::string>> config;  // resolved settings, in order
  int processes = 1;
  int source_addresses = 1;
  std::vector<Phase> phases;
  std::vector<Metric> metrics;
  std::vector<Check> checks;

  bool passed() const;  // every check passed
};

}  // namespace anteroom::loadgen
