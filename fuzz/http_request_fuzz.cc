// Raw bytes as a client would send them on one keep-alive connection: Beast's request parser
// (the session's header and body limits), then every whole request through Api::handle the
// way server/transport/http_session.cc fills ApiRequest, over a real in-memory engine. So
// the routing, the query strings, the cookies and the JSON bodies all see fuzzed input.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "fuzz/api_fixture.h"
#include "server/transport/beast.h"

namespace anteroom::fuzz {
namespace {

using Parser = http::request_parser<http::string_body>;

std::string_view field(const Parser& p, std::string_view name) {
  auto it = p.get().find(name);
  return it == p.get().end() ? std::string_view{} : std::string_view(it->value());
}

// The session's answer to one parsed request (what it would write), or a reason to close.
bool answer(const Api& api, const Parser& p) {
  const auto& req = p.get();
  if (req.find(http::field::transfer_encoding) != req.end() && !req.chunked()) return false;
  std::string cookies;
  for (auto [it, end] = req.equal_range(http::field::cookie); it != end; ++it) {
    if (!cookies.empty()) cookies += "; ";
    cookies += it->value();
  }
  ApiRequest a;
  a.method = req.method_string();
  a.target = req.target();
  a.authorization = field(p, "Authorization");
  a.cookie = cookies;
  a.accept_language = field(p, "Accept-Language");
  a.return_header = field(p, "X-Anteroom-Return");
  a.body = req.body();
  a.client = std::string_view("\x7f\x00\x00\x01", 4);
  a.reserve_only = field(p, "X-Fuzz-Reserve") == "1";
  ApiResponse r = api.handle(a);
  if (r.later) {
    std::optional<ApiResponse> later;
    r.later([&later](ApiResponse done) { later = std::move(done); });
    // The in-memory engine answers at once; a later answer that never comes is a bug.
    if (!later) __builtin_trap();
  }
  return req.keep_alive();
}

}  // namespace
}  // namespace anteroom::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace anteroom;
  using namespace anteroom::fuzz;
  static ApiFixture* fixture = new ApiFixture();  // lives for the process
  const Api& api = fixture->reset();
  const Options defaults;
  net::const_buffer rest(data, size);
  while (rest.size() != 0) {  // pipelined requests, as HttpSession::on_bytes reads them
    Parser parser;
    parser.header_limit(defaults.header_limit);
    parser.body_limit(defaults.body_limit);
    parser.eager(true);
    beast::error_code ec;
    while (rest.size() != 0 && !parser.is_done()) {
      const size_t used = parser.put(rest, ec);
      rest += used;
      if (ec == http::error::need_more && used != 0) {
        ec = {};
        continue;
      }
      if (ec) break;  // need_more: the connection would wait; any other: 4xx and close
    }
    if (!parser.is_done() || !answer(api, parser)) break;
  }
  return 0;
}
