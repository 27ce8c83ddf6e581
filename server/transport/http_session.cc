// One keep-alive HTTP connection: read a request (header and body limits; an idle timeout
// before its first byte, a read timeout after), answer it through Api, repeat.
//
// Cheap per request by design: bytes already buffered are parsed without another async
// read; the response head is serialized by Beast (response_head.h) into one reused buffer;
// timeouts are a deadline variable checked by one watchdog timer per connection, so moving
// the deadline costs an assignment, not a timer cancel and re-arm.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>

#include "server/transport/fail.h"
#include "server/transport/response_head.h"
#include "server/transport/sessions.h"

namespace anteroom {
namespace {

using Clock = std::chrono::steady_clock;

// What the read buffer holds besides a header of --header-limit: the rest of one read.
// Bodies go to the parser's body as they arrive, so what stays buffered is at most a
// header, a chunk line (size and extensions) or a trailer; one of those that does not end
// within the buffer fills it, and the read fails with buffer_overflow instead of growing it.
constexpr size_t kReadSlack = 4096;

class HttpSession : public std::enable_shared_from_this<HttpSession>, public HeaderLookup {
 public:
  HttpSession(tcp::socket socket, ServerContext& ctx, ConnectionSlot slot, bool in_reserve,
              bool operator_listener)
      : socket_(std::move(socket)),
        ctx_(ctx),
        slot_(std::move(slot)),
        watchdog_(socket_.get_executor()),
        buffer_(ctx.options.header_limit + kReadSlack),
        in_reserve_(in_reserve),
        operator_listener_(operator_listener) {}

  void run() {
    set_deadline(idle_timeout());
    do_read();
  }

 private:
  // Moving the deadline later is an assignment (the watchdog re-checks when it fires);
  // moving it earlier re-arms the watchdog.
  void set_deadline(std::chrono::seconds from_now) {
    deadline_ = Clock::now() + from_now;
    if (deadline_ < armed_at_) arm_watchdog();
  }

  // Closes the socket once the deadline has passed; re-arms itself while the session lives.
  void arm_watchdog() {
    armed_at_ = deadline_;
    watchdog_.expires_at(deadline_);
    watchdog_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (ec || self->done_) return;
      if (Clock::now() >= self->deadline_) return self->close();
      self->arm_watchdog();
    });
  }

  void do_read() {
    client_.clear();  // this request's, once read (client_address)
    parser_.emplace();
    parser_->header_limit(ctx_.options.header_limit);
    parser_->body_limit(ctx_.options.body_limit);
    parser_->eager(true);
    if (buffer_.size() != 0) return on_bytes();  // pipelined bytes already here
    set_deadline(idle_timeout());
    socket_.async_read_some(
        buffer_.prepare(4096),
        beast::bind_front_handler(&HttpSession::on_first_bytes, shared_from_this()));
  }

  void on_first_bytes(beast::error_code ec, std::size_t n) {
    if (ec) {  // usually the client went away, or the watchdog closed an idle connection
      fail(ec, "http read");
      return close();
    }
    buffer_.commit(n);
    on_bytes();
  }

  // Parses what is buffered; answers if that is a whole request, else reads the rest.
  void on_bytes() {
    beast::error_code ec;
    while (buffer_.size() != 0 && !parser_->is_done()) {
      size_t used = parser_->put(buffer_.data(), ec);
      buffer_.consume(used);
      if (ec == http::error::need_more) {
        ec = {};
        break;
      }
      if (ec) return on_read(ec, 0);
    }
    if (parser_->is_done()) return on_read({}, 0);
    // Only a request that did not arrive whole gets the (shorter) request deadline: a client
    // trickling bytes is cut off at --request-timeout from here.
    set_deadline(std::chrono::seconds(ctx_.options.request_timeout_s));
    http::async_read(socket_, buffer_, *parser_,
                     beast::bind_front_handler(&HttpSession::on_read, shared_from_this()));
  }

  void on_read(beast::error_code ec, std::size_t) {
    if (ec == http::error::end_of_stream || ec == net::error::operation_aborted ||
        ec == net::error::eof) {
      return close();
    }
    if (ec == http::error::header_limit) {
      return reply_error(431, "header_too_large", "request headers are over the limit");
    }
    if (ec == http::error::body_limit)
      return reply_error(413, "body_too_large", "request body is over the limit");
    if (ec == http::error::buffer_overflow) {
      if (!parser_->is_header_done()) {
        return reply_error(431, "header_too_large", "request headers are over the limit");
      }
      return reply_error(413, "body_too_large",
                         "a chunk line (size and extensions) or the trailer is over the limit");
    }
    if (ordinary_end(ec)) return close();
    if (ec) return reply_error(400, "bad_request", "the request is not valid HTTP/1.1");
    started_ = Clock::now();
    const auto& req = parser_->get();
    // A Transfer-Encoding that does not end in chunked leaves the body's length unknown:
    // HTTP/1.1 says answer 400 and close, or what follows would be read as a request.
    if (req.find(http::field::transfer_encoding) != req.end() && !req.chunked()) {
      return reply_error(400, "bad_request", "Transfer-Encoding must end in chunked");
    }
    if (ctx_.stopping.load(std::memory_order_relaxed)) {
      return reply_error(503, "shutting_down", "the server is shutting down");
    }
    ApiRequest a;
    a.method = req.method_string();
    a.target = req.target();
    a.authorization = header(http::field::authorization);
    a.cookie = cookies();
    a.reserve_only = in_reserve_ || ctx_.connections.load(std::memory_order_relaxed) >
                                        static_cast<int64_t>(ctx_.options.max_connections -
                                                             ctx_.options.operator_reserve);
    a.accept_language = header(http::field::accept_language);
    a.return_header = header_named("X-Anteroom-Return");
    a.if_none_match = header(http::field::if_none_match);
    a.origin = header(http::field::origin);
    a.sec_fetch_site = header_named("Sec-Fetch-Site");
    a.host = header(http::field::host);
    a.body = req.body();
    a.client = client_address();
    a.accept = header(http::field::accept);
    a.user_agent = header(http::field::user_agent);
    a.headers = this;
    if (peer_known_ && ctx_.proxies.contains(peer_)) {
      a.trusted_peer = true;
      a.forwarded_host = header_named("X-Forwarded-Host");
    }
    a.operator_listener = operator_listener_;
    ApiResponse r = ctx_.api.handle(a);
    if (r.upgrade != ApiResponse::Upgrade::kNone) return upgrade(std::move(r));
    if (r.later) {
      return write_later(std::move(r), req.keep_alive(), req.method() == http::verb::head,
                         req.version());
    }
    write(r, req.keep_alive(), req.method() == http::verb::head, req.version());
  }

  // An answer that waits (a join until it is durable, a cluster node's write until its
  // record came back from Redis), without holding this thread.
  void write_later(ApiResponse r, bool keep_alive, bool head, unsigned version) {
    const Route route = r.route;
    auto later = std::move(r.later);
    later([self = shared_from_this(), route, keep_alive, head, version](ApiResponse answer) {
      answer.route = route;
      self->answer_later(std::move(answer), keep_alive, head, version);
    });
  }

  // The answer of write_later, from whichever thread it came on, back on this session's.
  void answer_later(ApiResponse answer, bool keep_alive, bool head, unsigned version) {
    auto ex = socket_.get_executor();
    net::post(ex, [self = shared_from_this(), answer = std::move(answer), keep_alive, head,
                   version]() mutable {
      if (answer.upgrade != ApiResponse::Upgrade::kNone) return self->upgrade(std::move(answer));
      self->write(answer, keep_alive, head, version);
    });
  }

  // A connection accepted into the operator reserve gets one request, soon, then is closed:
  // idle sockets cannot sit on the places kept for health checks and operators.
  std::chrono::seconds idle_timeout() const {
    return std::chrono::seconds(in_reserve_ ? 2 : ctx_.options.idle_timeout_s);
  }

  // The client's address (ApiRequest::client; TrustedProxies::client_of).
  std::string_view client_address() {
    if (!peer_known_) {
      beast::error_code ec;
      peer_ = socket_.remote_endpoint(ec).address();
      peer_known_ = !ec;
      if (!peer_known_) return {};
    }
    client_ip_ = ctx_.proxies.client_ip(peer_, forwarded_for(parser_->get()));
    client_ = TrustedProxies::key_of(client_ip_);
    return client_;
  }

  // The access log's line of this request (--access-log), answered `status` in `bytes`.
  void log_access(Route route, unsigned status, uint64_t bytes) {
    AccessRecord rec;
    rec.unix_us = std::chrono::duration_cast<std::chrono::microseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
    rec.duration_us = static_cast<uint32_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started_).count());
    rec.status = static_cast<uint16_t>(status);
    rec.route = route;
    rec.bytes = bytes;
    if (client_.empty()) client_address();  // a request refused before it reached the API
    if (peer_known_ && client_ip_.is_v4()) {
      const auto b = client_ip_.to_v4().to_bytes();
      std::memcpy(rec.address.data(), b.data(), b.size());
      rec.address_size = 4;
    } else if (peer_known_) {
      const auto b = client_ip_.to_v6().to_bytes();
      std::memcpy(rec.address.data(), b.data(), b.size());
      rec.address_size = 16;
    }
    const auto& req = parser_->get();
    std::string_view method = req.method_string(), target = req.target();
    if (method.empty() && target.empty()) unparsed_request_line(&method, &target);
    rec.set_request(method, target);
    ctx_.access_log->record(std::move(rec));
  }

  // A request line the parser refused (a 400 before the request was read) is still in the
  // buffer: its method and target, as sent, for the access log.
  void unparsed_request_line(std::string_view* method, std::string_view* target) const {
    const auto data = buffer_.data();
    std::string_view line(static_cast<const char*>(data.data()),
                          std::min<size_t>(data.size(), ctx_.options.header_limit));
    line = line.substr(0, line.find("\r\n"));
    const size_t space = line.find(' ');
    if (space == std::string_view::npos) return;
    *method = line.substr(0, space);
    *target = line.substr(
        space + 1, line.rfind(' ') > space ? line.rfind(' ') - space - 1 : std::string_view::npos);
  }

  std::string_view get(std::string_view name) const override { return header_named(name); }
  std::string_view header_named(std::string_view name) const {
    const auto& req = parser_->get();
    auto it = req.find(name);
    return it == req.end() ? std::string_view{} : std::string_view(it->value());
  }
  // Every Cookie header of the request (a client may send several), joined.
  std::string_view cookies() {
    cookies_.clear();
    const auto& req = parser_->get();
    for (auto [it, end] = req.equal_range(http::field::cookie); it != end; ++it) {
      if (!cookies_.empty()) cookies_ += "; ";
      cookies_ += it->value();
    }
    return cookies_;
  }
  std::string_view header(http::field f) const {
    const auto& req = parser_->get();
    auto it = req.find(f);
    return it == req.end() ? std::string_view{} : std::string_view(it->value());
  }

  void upgrade(ApiResponse r) {
    if (r.upgrade == ApiResponse::Upgrade::kWebSocket && !websocket::is_upgrade(parser_->get())) {
      return reply_error(400, "websocket_required", "this route speaks WebSocket only", r.route);
    }
    ctx_.metrics.request(r.route, 101, elapsed());
    if (ctx_.access_log != nullptr) {  // one line as the stream opens; its bytes are not counted
      log_access(r.route, r.upgrade == ApiResponse::Upgrade::kWebSocket ? 101 : 200, 0);
    }
    done_ = true;
    watchdog_.cancel();
    beast::tcp_stream stream(std::move(socket_));
    if (r.upgrade == ApiResponse::Upgrade::kWebSocket) {
      slot_.become(ConnKind::kWebSocket);
      return run_ws_session(std::move(stream), ctx_, std::move(slot_), parser_->release(),
                            std::move(r.room));
    }
    slot_.become(ConnKind::kSse);
    if (r.upgrade == ApiResponse::Upgrade::kDashboard) {
      return run_dashboard_session(std::move(stream), ctx_, std::move(slot_),
                                   ctx_.dashboard != nullptr ? ctx_.dashboard->frame() : nullptr);
    }
    run_sse_session(std::move(stream), ctx_, std::move(slot_), std::move(r.room),
                    std::move(r.ticket));
  }

  // Counted and logged under `route`: unrouted unless the request got as far as routing.
  void reply_error(unsigned status, const char* code, const char* message,
                   Route route = Route::kUnrouted) {
    started_ = Clock::now();
    // After a framing error the rest of the stream cannot be trusted: answer, then close.
    ApiResponse r = error_response(status, code, message);
    r.route = route;
    write(r, false, false, 11);
  }

  void write(const ApiResponse& r, bool keep_alive, bool head, unsigned version) {
    ctx_.metrics.request(r.route, r.status, elapsed());
    keep_alive_ = keep_alive && !in_reserve_ && !ctx_.stopping.load(std::memory_order_relaxed) &&
                  !ctx_.draining.load(std::memory_order_relaxed);
    out_.clear();
    HeadOptions h;
    h.status = r.status;
    if (r.status != 204 && r.status != 304) {  // neither has a body
      h.content_type = r.content_type;
      h.content_length = r.shared_body ? r.shared_body->size() : r.body.size();
    }
    h.headers = &r.headers;
    h.keep_alive = keep_alive_;
    h.request_version = version;
    append_response_head(h, &out_);
    if (!head && r.status != 204 && r.status != 304 && !r.shared_body) out_ += r.body;
    // A shared body goes out from where it is, kept alive until written.
    shared_out_ = head || r.status == 204 || r.status == 304 ? nullptr : r.shared_body;
    if (ctx_.access_log != nullptr) {
      log_access(r.route, r.status, out_.size() + (shared_out_ ? shared_out_->size() : 0));
    }
    std::array<net::const_buffer, 2> buffers{
        net::buffer(out_), shared_out_ ? net::buffer(*shared_out_) : net::const_buffer()};
    net::async_write(socket_, buffers,
                     beast::bind_front_handler(&HttpSession::on_write, shared_from_this()));
  }

  void on_write(beast::error_code ec, std::size_t) {
    shared_out_.reset();
    if (ec) fail(ec, "http write");
    if (ec || !keep_alive_) return close();
    do_read();
  }

  void close() {
    if (done_) return;
    done_ = true;
    watchdog_.cancel();
    beast::error_code ec;
    socket_.shutdown(tcp::socket::shutdown_both, ec);
    socket_.close(ec);
  }

  double elapsed() const { return std::chrono::duration<double>(Clock::now() - started_).count(); }

  tcp::socket socket_;
  ServerContext& ctx_;
  ConnectionSlot slot_;
  net::steady_timer watchdog_;
  Clock::time_point deadline_;
  Clock::time_point armed_at_ = Clock::time_point::max();  // when the watchdog fires next
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::shared_ptr<const std::string> shared_out_;  // the shared body being written
  net::ip::address peer_;                          // the socket's peer, once read
  net::ip::address client_ip_;                     // client_address()'s, whole
  bool peer_known_ = false;
  std::string client_;   // client_address()'s bytes
  std::string out_;      // the response being written; reused
  std::string cookies_;  // the request's Cookie headers joined; reused
  Clock::time_point started_;
  bool keep_alive_ = true;
  const bool in_reserve_;         // accepted past --max-connections minus --operator-reserve
  const bool operator_listener_;  // accepted on --admin-listen
  bool done_ = false;
};

}  // namespace

void run_http_session(tcp::socket socket, ServerContext& ctx, ConnectionSlot slot, bool in_reserve,
                      bool operator_listener) {
  std::make_shared<HttpSession>(std::move(socket), ctx, std::move(slot), in_reserve,
                                operator_listener)
      ->run();
}

}  // namespace anteroom
