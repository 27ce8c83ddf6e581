// One keep-alive HTTP connection: read a request (with header and body limits, an idle
// timeout before its first byte and a read timeout after), answer it through Api, repeat.
#include <chrono>
#include <optional>

#include "server/sessions.h"

namespace anteroom {
namespace {

class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(tcp::socket socket, ServerContext& ctx, ConnectionSlot slot)
      : stream_(std::move(socket)), ctx_(ctx), slot_(std::move(slot)) {}

  void run() {
    net::dispatch(stream_.get_executor(), beast::bind_front_handler(&HttpSession::do_read, shared_from_this()));
  }

 private:
  void do_read() {
    parser_.emplace();
    parser_->header_limit(ctx_.options.header_limit);
    parser_->body_limit(ctx_.options.body_limit);
    if (buffer_.size() != 0) return do_read_request();  // pipelined bytes already here
    // Idle: wait for the first byte of the next request.
    stream_.expires_after(std::chrono::seconds(ctx_.options.idle_timeout_s));
    stream_.async_read_some(buffer_.prepare(4096),
                            beast::bind_front_handler(&HttpSession::on_first_bytes, shared_from_this()));
  }

  void on_first_bytes(beast::error_code ec, std::size_t n) {
    if (ec) return close();  // idle timeout, or the client went away
    buffer_.commit(n);
    do_read_request();
  }

  void do_read_request() {
    stream_.expires_after(std::chrono::seconds(ctx_.options.request_timeout_s));
    http::async_read(stream_, buffer_, *parser_,
                     beast::bind_front_handler(&HttpSession::on_read, shared_from_this()));
  }

  void on_read(beast::error_code ec, std::size_t) {
    if (ec == http::error::end_of_stream || ec == beast::error::timeout) return close();
    if (ec == http::error::header_limit) {
      return reply_error(431, "header_too_large", "request headers are over the limit");
    }
    if (ec == http::error::body_limit) return reply_error(413, "body_too_large", "request body is over the limit");
    if (ec) return reply_error(400, "bad_request", "the request is not valid HTTP/1.1");
    started_ = std::chrono::steady_clock::now();
    const auto& req = parser_->get();
    if (ctx_.stopping.load(std::memory_order_relaxed)) {
      return reply_error(503, "shutting_down", "the server is shutting down");
    }
    ApiRequest a;
    a.method = req.method_string();
    a.target = req.target();
    a.authorization = header(http::field::authorization);
    a.cookie = header(http::field::cookie);
    a.accept_language = header(http::field::accept_language);
    a.return_header = header_named("X-Anteroom-Return");
    a.body = req.body();
    ApiResponse r = ctx_.api.handle(a);
    if (r.upgrade != ApiResponse::Upgrade::kNone) return upgrade(std::move(r));
    write(std::move(r), req.keep_alive(), req.method() == http::verb::head);
  }

  std::string_view header_named(std::string_view name) const {
    const auto& req = parser_->get();
    auto it = req.find(name);
    return it == req.end() ? std::string_view{} : std::string_view(it->value());
  }

  std::string_view header(http::field f) const {
    const auto& req = parser_->get();
    auto it = req.find(f);
    return it == req.end() ? std::string_view{} : std::string_view(it->value());
  }

  void upgrade(ApiResponse r) {
    ctx_.metrics.request(r.route, 101, elapsed());
    stream_.expires_never();
    if (r.upgrade == ApiResponse::Upgrade::kWebSocket) {
      if (!websocket::is_upgrade(parser_->get())) {
        return reply_error(400, "websocket_required", "this route speaks WebSocket only");
      }
      slot_.become(ConnKind::kWebSocket);
      return run_ws_session(std::move(stream_), ctx_, std::move(slot_), parser_->release(), std::move(r.room));
    }
    slot_.become(ConnKind::kSse);
    run_sse_session(std::move(stream_), ctx_, std::move(slot_), std::move(r.room), std::move(r.ticket));
  }

  void reply_error(unsigned status, const char* code, const char* message) {
    started_ = std::chrono::steady_clock::now();
    ApiResponse r = error_response(status, code, message);
    // After a framing error the rest of the stream cannot be trusted: answer, then close.
    write(std::move(r), false, false);
  }

  void write(ApiResponse r, bool keep_alive, bool head) {
    ctx_.metrics.request(r.route, r.status, elapsed());
    res_.emplace();
    res_->result(r.status);
    res_->version(11);
    res_->set(http::field::server, "anteroom");
    if (!r.body.empty() || r.status != 204) res_->set(http::field::content_type, r.content_type);
    for (auto& [k, v] : r.headers) res_->set(k, v);
    res_->keep_alive(keep_alive && !ctx_.stopping.load(std::memory_order_relaxed));
    res_->body() = head ? std::string() : std::move(r.body);
    res_->prepare_payload();
    stream_.expires_after(std::chrono::seconds(ctx_.options.request_timeout_s));
    http::async_write(stream_, *res_, beast::bind_front_handler(&HttpSession::on_write, shared_from_this()));
  }

  void on_write(beast::error_code ec, std::size_t) {
    if (ec) return close();
    if (!res_->keep_alive()) return close();
    res_.reset();
    do_read();
  }

  void close() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    stream_.close();
  }

  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  }

  beast::tcp_stream stream_;
  ServerContext& ctx_;
  ConnectionSlot slot_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::optional<http::response<http::string_body>> res_;
  std::chrono::steady_clock::time_point started_;
};

}  // namespace

void run_http_session(tcp::socket socket, ServerContext& ctx, ConnectionSlot slot) {
  std::make_shared<HttpSession>(std::move(socket), ctx, std::move(slot))->run();
}

void refuse_connection(tcp::socket socket) {
  static const std::string kBusy =
      "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 5\r\nContent-Type: application/json\r\n"
      "Connection: close\r\nContent-Length: 85\r\n\r\n"
      R"({"error":{"code":"overloaded","message":"too many open connections, try again soon"}})";
  auto s = std::make_shared<tcp::socket>(std::move(socket));
  net::async_write(*s, net::buffer(kBusy), [s](beast::error_code, std::size_t) {
    beast::error_code ec;
    s->shutdown(tcp::socket::shutdown_both, ec);
    s->close(ec);
  });
}

}  // namespace anteroom
