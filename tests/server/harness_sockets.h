// For the server tests that hold a socket themselves (to send what no client would, or read
// a stream byte by byte): Beast, and harness.h's bounded read. Heavy to compile: the other
// tests include only harness.h.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "server/transport/beast.h"
#include "tests/server/harness.h"

namespace anteroom::testing {

// Appends to *out what `socket` has, waiting until something arrives, the peer closes (then
// false) or `deadline` passes (then nullopt). Leaves the socket non-blocking.
std::optional<bool> read_available(tcp::socket& socket, std::string* out,
                                   std::chrono::steady_clock::time_point deadline);

}  // namespace anteroom::testing
