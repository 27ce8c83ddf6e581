// The demo origin of the protect scenario: a service that can work on `capacity` requests at
// once, each taking `service_ms`, and answers 503 (Retry-After: 1) to any request beyond
// that, as an overloaded real service would.
#pragma once

#include <cstdint>

namespace anteroom::loadgen {

// Serves on 127.0.0.1:port (0: any free port) until SIGTERM/SIGINT; writes the bound port
// as text to `ready_fd` (if >= 0) once it accepts. Returns the process exit status.
int run_origin(uint16_t port, uint32_t capacity, double service_ms, int ready_fd);

}  // namespace anteroom::loadgen
