// Every buffer a client feeds is bounded: a chunk line (size and extensions) or a trailer
// that never ends is answered 413 and closed as soon as it passes the read buffer's bound,
// before any authentication and on both listeners, instead of being buffered until the
// request timeout (it grew the server by 1 GB for 1 GB sent).
#include <string>

#include "tests/server/harness.h"

namespace anteroom::testing {
namespace {

// Sends `head` and then `filler` bytes of 'a' that never end a line, and returns what the
// server answered before closing (empty if it said nothing).
std::string answer_to_endless_line(uint16_t port, const std::string& head, size_t filler) {
  RawClient c(port);
  c.send(head);
  c.send(std::string(filler, 'a'));
  // The request timeout (2 s in tests) would close the connection without an answer: what
  // is checked is that an answer came, not how soon.
  return c.until_closed(std::chrono::seconds(10)).value_or("");
}

const std::string kChunked =
    "POST /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";

TEST(ClientBuffers, AChunkExtensionThatNeverEndsIs413) {
  TestServer server;
  const std::string answer = answer_to_endless_line(server.port(), kChunked + "1;", 64 * 1024);
  EXPECT_EQ(answer.substr(0, 12), "HTTP/1.1 413") << answer.substr(0, 200);
  EXPECT_NE(answer.find("body_too_large"), std::string::npos) << answer.substr(0, 400);
  HttpClient after(server.port());  // the server goes on serving
  EXPECT_EQ(after.request("GET", "/healthz").status, 200u);
}

TEST(ClientBuffers, ATrailerThatNeverEndsIs413) {
  TestServer server;
  const std::string answer =
      answer_to_endless_line(server.port(), kChunked + "1\r\nx\r\n0\r\nX-Trailer: ", 64 * 1024);
  EXPECT_EQ(answer.substr(0, 12), "HTTP/1.1 413") << answer.substr(0, 200);
}

TEST(ClientBuffers, TheOperatorListenerIsBoundedToo) {
  Options o = test_options();
  o.admin_listen = "127.0.0.1:0";
  TestServer server(o);
  const uint16_t admin = server.server().admin_port();
  ASSERT_NE(admin, 0);
  const std::string answer = answer_to_endless_line(admin, kChunked + "1;", 64 * 1024);
  EXPECT_EQ(answer.substr(0, 12), "HTTP/1.1 413") << answer.substr(0, 200);
}

// A chunked body within the limits, with short extensions and a trailer, is still read.
TEST(ClientBuffers, OrdinaryChunkedRequestsStillWork) {
  TestServer server;
  HttpClient c(server.port());
  ASSERT_EQ(c.admin("PUT", "/v1/rooms/r", "{}").status, 201u);
  RawClient raw(server.port());
  raw.send(
      "POST /v1/rooms/r/tickets HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
      "Connection: close\r\n\r\n1;name=value\r\n{\r\n1\r\n}\r\n0\r\nX-Trailer: yes\r\n\r\n");
  const std::string answer = raw.until_closed(std::chrono::seconds(10)).value_or("");
  EXPECT_EQ(answer.substr(0, 12), "HTTP/1.1 201") << answer.substr(0, 300);
}

}  // namespace
}  // namespace anteroom::testing
