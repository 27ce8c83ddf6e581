// Placeholder until the server issue lands: the HTTP/SSE/WebSocket layer does not exist
// yet, and this program says so instead of pretending to serve.
#include <cstdio>

#include "engine/engine.h"

int main() {
  auto engine = anteroom::make_sharded_engine();
  anteroom::RoomConfig demo;
  if (!engine->put_room("demo", demo).is_ok()) return 1;
  std::printf(
      "anteroom: the engine is built and a demo room was created in memory, but the HTTP\n"
      "server is not implemented yet (see the server issue). Nothing is listening.\n");
  return 2;
}
