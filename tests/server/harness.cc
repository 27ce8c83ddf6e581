#include "tests/server/harness.h"

#include "tests/server/harness_sockets.h"

#include <sys/socket.h>

#include <algorithm>
#include <boost/json.hpp>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <thread>

namespace anteroom::testing {

Options test_options() {
  Options o;
  o.listen = "127.0.0.1:0";
  o.threads = 2;
  o.persistence = false;
  o.push_interval_ms = 50;
  o.owner_tick_ms = 2;
  o.idle_timeout_s = 5;
  o.request_timeout_s = 2;
  return o;
}

TestServer::TestServer(const Options& o)
    : server_(std::make_unique<Server>(o, kAdminKey, kSecret)) {
  auto p = server_->start();
  if (!p.is_ok()) throw std::runtime_error(p.status().message());
  port_ = p.value();
}

TestServer::TestServer(const Options& o, std::unique_ptr<Engine> engine)
    : server_(std::make_unique<Server>(o, kAdminKey, kSecret, std::move(engine))) {
  auto p = server_->start();
  if (!p.is_ok()) throw std::runtime_error(p.status().message());
  port_ = p.value();
}

TestServer::~TestServer() { server_->stop(500); }

std::string json_field(const std::string& body, const char* name) {
  boost::json::value v = boost::json::parse(body);
  const boost::json::value* f = v.as_object().if_contains(name);
  if (f == nullptr) return {};
  return f->is_string() ? std::string(f->as_string()) : boost::json::serialize(*f);
}

std::unique_ptr<Engine> engine_on(const std::shared_ptr<ManualClock>& clock) {
  EngineOptions e;
  e.clock = clock;
  return make_sharded_engine(e);
}

namespace {

// A message's headers by lower-case name; a repeated one (Set-Cookie) as one line each.
std::map<std::string, std::string> header_map(const http::fields& fields) {
  std::map<std::string, std::string> out;
  for (const auto& h : fields) {
    std::string name(h.name_string());
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string& v = out[name];
    if (!v.empty()) v += '\n';
    v += std::string(h.value());
  }
  return out;
}

// Records each whole answer in `received` (bytes a raw connection got) with the request line
// in its place among those in `sent`: the first answer with the first line that reads as
// "METHOD /target HTTP/1.x", and so on; "-" where there is none (bytes that are not HTTP).
void record_raw_answers(const std::string& sent, const std::string& received) {
  std::vector<std::pair<std::string, std::string>> requests;
  for (size_t at = 0; at < sent.size();) {
    size_t end = sent.find("\r\n", at);
    if (end == std::string::npos) end = sent.size();
    const std::string line = sent.substr(at, end - at);
    at = end + 2;
    const size_t sp1 = line.find(' ');
    const size_t sp2 = sp1 == std::string::npos ? sp1 : line.find(' ', sp1 + 1);
    if (sp2 == std::string::npos || !line.substr(sp2 + 1).starts_with("HTTP/1.") ||
        line[sp1 + 1] != '/' ||
        !std::all_of(line.begin(), line.begin() + static_cast<std::ptrdiff_t>(sp1),
                     [](char c) { return c >= 'A' && c <= 'Z'; })) {
      continue;
    }
    requests.emplace_back(line.substr(0, sp1), line.substr(sp1 + 1, sp2 - sp1 - 1));
  }
  size_t n = 0;
  for (size_t at = 0; at < received.size(); ++n) {
    http::response_parser<http::string_body> parser;
    parser.eager(true);
    beast::error_code ec;
    const size_t used = parser.put(net::buffer(received.data() + at, received.size() - at), ec);
    if (ec || !parser.is_done()) return;  // not a whole answer: nothing more to record
    at += used;
    const auto& [method, target] =
        n < requests.size() ? requests[n] : std::pair<std::string, std::string>("-", "-");
    record_answer(method, target, parser.get().result_int(), header_map(parser.get()),
                  parser.get().body());
  }
}

}  // namespace

void record_answer(const std::string& method, const std::string& target, unsigned status,
                   const std::map<std::string, std::string>& headers,
                   const std::optional<std::string>& body) {
  // Read once; nothing in the tests sets the environment.
  static const char* const path =
      std::getenv("ANTEROOM_ANSWER_LOG");  // NOLINT(concurrency-mt-unsafe)
  if (path == nullptr || *path == '\0') return;
  boost::json::object line;
  line["method"] = method;
  line["target"] = target;
  line["status"] = status;
  auto type = headers.find("content-type");
  line["content_type"] = type == headers.end() ? std::string() : type->second;
  boost::json::object fields;
  for (const auto& [name, value] : headers) fields[name] = value;
  line["headers"] = std::move(fields);
  line["body"] = body ? boost::json::value(*body) : boost::json::value(nullptr);
  static std::mutex mu;  // clients on several threads append whole lines
  static std::ofstream out(path, std::ios::app | std::ios::binary);
  std::lock_guard lock(mu);
  out << boost::json::serialize(line) << '\n';
  out.flush();
  if (!out) throw std::runtime_error(std::string("cannot write ") + path);
}

struct HttpClient::Impl {
  net::io_context ioc;
  beast::tcp_stream stream{ioc};
  beast::flat_buffer buffer;
};

HttpClient::~HttpClient() = default;

HttpClient::HttpClient(uint16_t port) : impl_(std::make_unique<Impl>()) {
  impl_->stream.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
}

Reply HttpClient::request(const std::string& method, const std::string& target,
                          const std::string& body,
                          const std::map<std::string, std::string>& headers) {
  http::request<http::string_body> req(http::string_to_verb(method), target, 11);
  // As a browser names it: host and port (the cross-site check compares it with Origin).
  req.set(http::field::host,
          "127.0.0.1:" + std::to_string(impl_->stream.socket().remote_endpoint().port()));
  for (auto& [k, v] : headers) req.set(k, v);
  req.body() = body;
  req.prepare_payload();
  impl_->stream.expires_after(std::chrono::seconds(10));
  http::write(impl_->stream, req);
  http::response_parser<http::string_body> parser;
  parser.body_limit(64 << 20);
  if (method == "HEAD") parser.skip(true);
  http::read(impl_->stream, impl_->buffer, parser);
  Reply r;
  r.status = parser.get().result_int();
  r.headers = header_map(parser.get());
  r.body = parser.get().body();
  record_answer(method, target, r.status, r.headers,
                method == "HEAD" ? std::optional<std::string>("") : r.body);
  return r;
}

struct SseClient::Impl {
  net::io_context ioc;
  tcp::socket socket{ioc};
};

SseClient::~SseClient() = default;

SseClient::SseClient(uint16_t port, const std::string& target) : impl_(std::make_unique<Impl>()) {
  impl_->socket.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
  std::string req =
      "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n";
  net::write(impl_->socket, net::buffer(req));
  // The head: read until the blank line.
  while (pending_.find("\r\n\r\n") == std::string::npos) {
    char buf[1024];
    beast::error_code ec;
    size_t n = impl_->socket.read_some(net::buffer(buf), ec);
    if (ec) return;
    pending_.append(buf, n);
  }
  status_ = static_cast<unsigned>(std::stoul(pending_.substr(9, 3)));
  const size_t head_end = pending_.find("\r\n\r\n") + 4;
  record_head(target, pending_.substr(0, head_end));
  pending_.erase(0, head_end);
}

// The answer's head (and, for an answer that is not the stream, its body) to record_answer.
void SseClient::record_head(const std::string& target, const std::string& head) {
  http::response_parser<http::string_body> parser;
  beast::error_code ec;
  parser.put(net::buffer(head), ec);
  if (ec) return;
  const std::map<std::string, std::string> headers = header_map(parser.get());
  if (status_ == 200) return record_answer("GET", target, status_, headers, std::nullopt);
  // Not the stream: the body follows, Content-Length long; read it all (bounded by a deadline).
  const size_t length = parser.content_length().value_or(0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (pending_.size() - head.size() < length) {
    std::optional<bool> open = read_available(impl_->socket, &pending_, deadline);
    if (!open || !*open) break;
  }
  record_answer("GET", target, status_, headers, pending_.substr(head.size(), length));
}

std::optional<std::string> SseClient::next(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    // A complete event ends with a blank line.
    for (size_t end; (end = pending_.find("\n\n")) != std::string::npos;) {
      std::string event = pending_.substr(0, end);
      pending_.erase(0, end + 2);
      if (event.find("event: status\n") == 0) {
        size_t d = event.find("data: ");
        if (d != std::string::npos) return event.substr(d + 6);
      }
    }
    std::optional<bool> open = read_available(impl_->socket, &pending_, deadline);
    if (!open || !*open) return std::nullopt;  // timed out, or the server closed the stream
  }
}

std::optional<bool> read_available(tcp::socket& socket, std::string* out,
                                   std::chrono::steady_clock::time_point deadline) {
  socket.non_blocking(true);
  while (std::chrono::steady_clock::now() < deadline) {
    char buf[4096];
    beast::error_code ec;
    size_t n = socket.read_some(net::buffer(buf), ec);
    if (ec == net::error::would_block) {  // nothing yet: look again shortly, until the deadline
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      continue;
    }
    if (ec) return false;
    out->append(buf, n);
    return true;
  }
  return std::nullopt;
}

struct RawClient::Impl {
  net::io_context ioc;
  tcp::socket socket{ioc};
};

RawClient::~RawClient() = default;

RawClient::RawClient(uint16_t port) : impl_(std::make_unique<Impl>()) {
  impl_->socket.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
}

void RawClient::send(const std::string& s) {
  sent_ += s;
  beast::error_code ec;
  net::write(impl_->socket, net::buffer(s), ec);
}

void RawClient::send_raw(char c) {
  static_cast<void>(::send(impl_->socket.native_handle(), &c, 1, MSG_NOSIGNAL));
}

std::optional<std::string> RawClient::until_closed(std::chrono::milliseconds timeout) {
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    std::optional<bool> open = read_available(impl_->socket, &out, deadline);
    if (!open) return std::nullopt;
    if (!*open) break;
  }
  record_raw_answers(sent_, out);
  return out;
}

struct WsClient::Impl {
  net::io_context ioc;
  websocket::stream<tcp::socket> ws{ioc};
};

WsClient::~WsClient() = default;

WsClient::WsClient(uint16_t port, const std::string& target) : impl_(std::make_unique<Impl>()) {
  impl_->ws.next_layer().connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
  websocket::response_type res;
  try {
    impl_->ws.handshake(res, "127.0.0.1", target);
  } catch (...) {  // refused: the answer (an error body) is recorded too
    record_answer("GET", target, res.result_int(), header_map(res), res.body());
    throw;
  }
  record_answer("GET", target, res.result_int(), header_map(res), std::nullopt);
  impl_->ws.text(true);
}

void WsClient::send(const std::string& text) { impl_->ws.write(net::buffer(text)); }

std::optional<std::string> WsClient::next(std::chrono::milliseconds timeout) {
  // Run one async read on our own io_context, bounded by `timeout`.
  beast::flat_buffer buf;
  std::optional<std::string> out;
  bool done = false;
  impl_->ws.async_read(buf, [&](beast::error_code ec, std::size_t) {
    done = true;
    if (!ec) out = beast::buffers_to_string(buf.data());
  });
  impl_->ioc.restart();
  impl_->ioc.run_for(timeout);
  if (!done) {
    beast::get_lowest_layer(impl_->ws).cancel();
    impl_->ioc.restart();
    impl_->ioc.run();
    return std::nullopt;
  }
  return out;
}

std::optional<std::string> WsClient::next_of(const std::string& type,
                                             std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left <= std::chrono::milliseconds(0)) return std::nullopt;
    auto m = next(left);
    if (!m) return std::nullopt;
    if (field(*m, "type") == type) return m;
  }
}

std::string field(const std::string& json, const std::string& name) {
  boost::system::error_code ec;
  boost::json::value v = boost::json::parse(json, ec);
  if (ec || !v.is_object()) return {};
  const boost::json::value* f = v.as_object().if_contains(name);
  if (f == nullptr) return {};
  if (f->is_string()) return std::string(f->as_string());
  return boost::json::serialize(*f);
}

bool eventually(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace anteroom::testing
