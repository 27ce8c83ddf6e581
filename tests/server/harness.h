// A real anteroom server on 127.0.0.1:0 inside the test process, and small blocking Beast
// clients (HTTP, SSE, WebSocket, raw bytes) to talk to it. Beast stays in harness.cc (and
// harness_sockets.h, for the few tests that hold a socket themselves): this header is
// included by every server test, which compile several times faster without it. Waits are bounded:
// a helper that waits for something fails the test when its deadline passes, it never sleeps a
// fixed time and hopes.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "server/app/options.h"
#include "server/transport/server.h"

namespace anteroom::testing {

constexpr const char* kAdminKey = "test-admin-key-0123456789";
constexpr const char* kSecret = "test-token-secret-0123456789abcdef";

// Fast timers for tests; each test may change what it needs before start().
Options test_options();

struct Reply {
  unsigned status = 0;
  std::map<std::string, std::string> headers;  // lower-case names; repeated: lines
  std::string body;
  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  }
};

class TestServer {
 public:
  explicit TestServer(const Options& o = test_options());
  // Serving the given engine (one on a ManualClock, say).
  TestServer(const Options& o, std::unique_ptr<Engine> engine);
  ~TestServer();
  uint16_t port() const { return port_; }
  Engine& engine() { return server_->engine(); }
  Server& server() { return *server_; }

 private:
  std::unique_ptr<Server> server_;
  uint16_t port_ = 0;
};

// With ANTEROOM_ANSWER_LOG=FILE in the environment, every answer the clients below receive
// (HttpClient, the head of SseClient's stream, WsClient's handshake) is appended to FILE as
// one JSON line: {"method","target","status","content_type","headers","body"}, headers by
// lower-case name (repeated: lines), body null where the answer is a stream or an upgrade.
// tests/openapi/check.mjs checks them against docs/openapi.yaml. Without the variable
// nothing is recorded.
void record_answer(const std::string& method, const std::string& target, unsigned status,
                   const std::map<std::string, std::string>& headers,
                   const std::optional<std::string>& body);

// One keep-alive HTTP/1.1 connection.
class HttpClient {
 public:
  explicit HttpClient(uint16_t port);
  ~HttpClient();
  Reply request(const std::string& method, const std::string& target, const std::string& body = "",
                const std::map<std::string, std::string>& headers = {});
  Reply admin(const std::string& method, const std::string& target, const std::string& body = "") {
    return request(method, target, body, {{"Authorization", std::string("Bearer ") + kAdminKey}});
  }

 private:
  struct Impl;  // the connection (harness.cc)
  std::unique_ptr<Impl> impl_;
};

// Reads an SSE stream: the `data:` of each `event: status`.
class SseClient {
 public:
  SseClient(uint16_t port, const std::string& target);
  ~SseClient();
  unsigned status() const { return status_; }
  // The next status event's data, or nullopt when the stream ended or `timeout` passed.
  std::optional<std::string> next(std::chrono::milliseconds timeout = std::chrono::seconds(5));

 private:
  void record_head(const std::string& target, const std::string& head);

  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string pending_;
  unsigned status_ = 0;
};

// A raw TCP connection for sending bytes that no well-behaved client would.
class RawClient {
 public:
  explicit RawClient(uint16_t port);
  ~RawClient();
  void send(const std::string& s);
  // For another thread: writes through the descriptor, leaving the socket object (which is
  // not thread-safe) to the thread that reads.
  void send_raw(char c);
  // Everything the server sends until it closes (or `timeout` passes: then nullopt). The
  // answers in it go to record_answer, each with the request line sent in its place (or,
  // where none was, method and target "-").
  std::optional<std::string> until_closed(std::chrono::milliseconds timeout);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string sent_;  // what send() sent, for record_answer
};

// A top-level field of a JSON object as text: a string's value, anything else as JSON;
// empty when absent.
std::string json_field(const std::string& body, const char* name);

// A sharded engine whose clock only moves when the test moves it.
std::unique_ptr<Engine> engine_on(const std::shared_ptr<ManualClock>& clock);

// A WebSocket speaking seed 000's protocol.
class WsClient {
 public:
  WsClient(uint16_t port, const std::string& target);
  ~WsClient();
  void send(const std::string& text);
  // The next message, or nullopt after `timeout`.
  std::optional<std::string> next(std::chrono::milliseconds timeout = std::chrono::seconds(5));
  // The next message whose "type" is `type` (others are skipped), or nullopt after `timeout`.
  std::optional<std::string> next_of(const std::string& type,
                                     std::chrono::milliseconds timeout = std::chrono::seconds(5));

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Extracts a JSON field as text (strings without quotes); empty if absent. For tests only.
std::string field(const std::string& json, const std::string& name);

// Polls `done` until it is true or `timeout` passes; returns whether it became true.
bool eventually(const std::function<bool()>& done,
                std::chrono::milliseconds timeout = std::chrono::seconds(5));

}  // namespace anteroom::testing
