#include "loadgen/run_result.h"

namespace anteroom::loadgen {

const char* error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kConnect:
      return "connect";
    case ErrorKind::kTimeout:
      return "timeout";
    case ErrorKind::k4xx:
      return "4xx";
    case ErrorKind::k5xx:
      return "5xx";
    case ErrorKind::kProtocol:
      return "protocol";
    case ErrorKind::kClosed:
      return "closed";
    case ErrorKind::kLimitAddress:
      return "limit_per_address";
    case ErrorKind::kLimitConnections:
      return "limit_connections";
  }
  return "unknown";
}

const char* error_kind_advice(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kLimitAddress:
      return "the server refused connections at its per-address limit: raise its "
             "--max-connections-per-address, or spread the load over more source addresses "
             "(--sources N, 127.0.0.x)";
    case ErrorKind::kLimitConnections:
      return "the server refused connections at its connection limit: raise its "
             "--max-connections (the open-file limit bounds it), or spread the load over more "
             "server processes or nodes (--target A,B,...)";
    default:
      return nullptr;
  }
}

const char* request_kind_name(RequestKind kind) {
  switch (kind) {
    case RequestKind::kJoin:
      return "join";
    case RequestKind::kStatus:
      return "status";
    case RequestKind::kStream:
      return "stream";
    case RequestKind::kUse:
      return "use";
    case RequestKind::kLeave:
      return "leave";
    case RequestKind::kOrigin:
      return "origin";
    case RequestKind::kFixed:
      return "fixed";
  }
  return "unknown";
}

uint64_t Phase::requests() const {
  uint64_t n = 0;
  for (const Histogram& h : latency) n += h.count();
  return n;
}

uint64_t Phase::error_count() const {
  uint64_t n = 0;
  for (uint64_t e : errors) n += e;
  return n;
}

double Phase::error_rate() const {
  uint64_t bad = error_count();
  uint64_t all = requests() + bad;
  return all == 0 ? 0.0 : static_cast<double>(bad) / static_cast<double>(all);
}

bool RunResult::passed() const {
  for (const Check& c : checks) {
    if (!c.passed) return false;
  }
  return true;
}

}  // namespace anteroom::loadgen
