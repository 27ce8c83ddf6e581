// Blocking HTTP calls the coordinator makes between phases: create and delete the room,
// admit (hold's change), read memory. Each runs its own short-lived io_context.
#pragma once

#include <string>

#include "loadgen/config.h"

namespace anteroom::loadgen {

struct Reply {
  int status = 0;  // 0: no answer (see error)
  std::string body;
  std::string error;  // why there was no answer
};

// `method path` against the target, with the admin key when `admin` is set.
// `extra_headers` are whole lines, each ending in CRLF.
Reply http_call(const Config& cfg, const std::string& method, const std::string& path,
                const std::string& body, bool admin, const std::string& extra_headers = "");

// PUT /v1/rooms/{room} with the scenario's settings (ip_joins_per_minute and pow_difficulty
// only when set). Returns "" or what went wrong.
std::string create_room(const Config& cfg, const std::string& room, const std::string& admission);

// VmRSS of a process in bytes from /proc/PID/status; 0 if unreadable.
uint64_t rss_bytes(long pid);

// e.g. "Intel Xeon ... (2 cores), 24 GiB, Linux 6.1.0"
std::string machine_description();
std::string utc_now_iso();

}  // namespace anteroom::loadgen
