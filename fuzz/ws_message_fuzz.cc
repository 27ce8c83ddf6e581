// WebSocket text messages through seed 000's protocol handler (server/app/ws_protocol.h), as
// server/transport/ws_session.cc drives it: a greeting, then each message, each later answer
// run on the socket's turn, a change check between messages. Input: one message a line; a
// line starting with '#' goes to a second socket of the same room (so one user's place is
// claimed from another connection). The engine admits between messages.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "fuzz/api_fixture.h"
#include "server/app/ws_protocol.h"

namespace anteroom::fuzz {
namespace {

void deliver(WsProtocol& ws, std::string_view text) {
  WsProtocol::Reply r = ws.on_message(text);
  if (!r.later) return;
  WsProtocol::Step step;
  r.later([&step](WsProtocol::Step s) { step = std::move(s); });
  if (!step) __builtin_trap();  // the in-memory engine answers at once
  (void)step(ws);
}

}  // namespace
}  // namespace anteroom::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace anteroom;
  using namespace anteroom::fuzz;
  static ApiFixture* fixture = new ApiFixture();  // lives for the process
  const Api& api = fixture->reset();
  WsProtocol a(api, kRoom), b(api, kRoom);
  a.set_client(std::string("\x7f\x00\x00\x01", 4));
  b.set_client(std::string("\x7f\x00\x00\x02", 4));
  (void)a.greeting();
  std::string_view in(reinterpret_cast<const char*>(data), size);
  while (!in.empty()) {
    const size_t end = in.find('\n');
    std::string_view line = in.substr(0, end);
    in = end == std::string_view::npos ? std::string_view{} : in.substr(end + 1);
    const bool second = !line.empty() && line.front() == '#';
    deliver(second ? b : a, second ? line.substr(1) : line);
    fixture->engine().run_all();
    (void)a.on_change();
    (void)b.on_change();
  }
  return 0;
}
