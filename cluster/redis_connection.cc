#include "cluster/redis_connection.h"

#include <hiredis/hiredis.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/write.hpp>

namespace anteroom::cluster {
namespace asio = boost::asio;
namespace ssl = asio::ssl;
using asio::ip::tcp;

struct RedisConnection::Tls {
  Tls(asio::io_context& io, ssl::context& ctx) : stream(io, ctx) {}
  ssl::stream<tcp::socket> stream;
};

namespace {

RedisReply copy_reply(const redisReply* r) {
  RedisReply out;
  switch (r->type) {
    case REDIS_REPLY_STRING:
      out.kind = RedisReply::Kind::kString;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_STATUS:
      out.kind = RedisReply::Kind::kStatus;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ERROR:
      out.kind = RedisReply::Kind::kError;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_INTEGER:
      out.kind = RedisReply::Kind::kInteger;
      out.integer = r->integer;
      break;
    case REDIS_REPLY_ARRAY:
      out.kind = RedisReply::Kind::kArray;
      out.elements.reserve(r->elements);
      for (size_t i = 0; i < r->elements; ++i) out.elements.push_back(copy_reply(r->element[i]));
      break;
    default:
      out.kind = RedisReply::Kind::kNil;
  }
  return out;
}

}  // namespace

RedisConnection::RedisConnection(asio::io_context& io, std::string host, uint16_t port,
                                 int64_t timeout_ms, std::shared_ptr<const RedisAccess> access)
    : io_(io),
      host_(std::move(host)),
      port_(port),
      timeout_(timeout_ms),
      access_(std::move(access)),
      socket_(io),
      watchdog_(io),
      reader_(redisReaderCreate()),
      in_(size_t{64} * 1024) {
  if (access_ && access_->tls) tls_ = std::make_unique<Tls>(io, *access_->tls_context);
}

tcp::socket& RedisConnection::socket() { return tls_ ? tls_->stream.next_layer() : socket_; }

RedisConnection::~RedisConnection() { redisReaderFree(reader_); }

void RedisConnection::connect(std::function<void(const std::string&)> done) {
  auto self = shared_from_this();
  auto resolver = std::make_shared<tcp::resolver>(io_);
  resolver->async_resolve(
      host_, std::to_string(port_),
      [this, self, resolver, done = std::move(done)](boost::system::error_code ec,
                                                     const tcp::resolver::results_type& results) {
        if (ec) return done("cannot resolve " + host_ + ": " + ec.message());
        asio::async_connect(
            socket(), results,
            [this, self, done](boost::system::error_code ec2, const tcp::endpoint&) {
              if (ec2 || closed_) {
                closed_ = true;
                return done("cannot connect to " + host_ + ":" + std::to_string(port_) + ": " +
                            (ec2 ? ec2.message() : std::string("closed")));
              }
              boost::system::error_code nodelay_ec;
              socket().set_option(tcp::no_delay(true), nodelay_ec);
              secured(done);
            });
      });
  // A connect that hangs (a peer that drops packets) ends with the watchdog's time.
  watchdog_.expires_after(timeout_);
  watchdog_.async_wait([this, self](boost::system::error_code ec) {
    if (!ec && !open_ && !closed_) {
      boost::system::error_code ignored;
      socket().close(ignored);  // the pending connect or handshake fails with operation_aborted
    }
  });
}

// TLS: the server's certificate must verify under the CA and name the host connected to;
// the host name goes out as SNI unless it is an address.
void RedisConnection::secured(std::function<void(const std::string&)> done) {
  if (!tls_) return introduce(done);
  boost::system::error_code not_ip;
  asio::ip::make_address(host_, not_ip);
  if (not_ip) {  // SSL_set_tlsext_host_name, without the macro's C cast
    SSL_ctrl(tls_->stream.native_handle(), SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
             const_cast<char*>(host_.c_str()));
  }
  tls_->stream.set_verify_callback(ssl::host_name_verification(host_));
  tls_->stream.async_handshake(ssl::stream_base::client, [this, self = shared_from_this(),
                                                          done = std::move(done)](
                                                             boost::system::error_code ec) {
    if (!ec && !closed_) return introduce(done);
    closed_ = true;
    const std::string at = host_ + ":" + std::to_string(port_);
    if (ec.category() == asio::error::get_ssl_category() &&
        ERR_GET_REASON(static_cast<unsigned long>(ec.value())) == SSL_R_CERTIFICATE_VERIFY_FAILED) {
      return done("TLS: the certificate of Redis at " + at +
                  " does not verify (--redis-tls-ca, the host name)");
    }
    done("TLS handshake with Redis at " + at +
         " failed: " + (ec ? ec.message() : std::string("closed")));
  });
}

// AUTH when there is a password, then PING: a Redis that wants AUTH answers NOAUTH.
void RedisConnection::introduce(const std::function<void(const std::string&)>& done) {
  open_ = true;
  start_read();
  arm_watchdog();
  auto self = shared_from_this();
  const std::string at = "Redis at " + host_ + ":" + std::to_string(port_);
  auto refuse = [this, self](const std::function<void(const std::string&)>& to,
                             const std::string& why) {
    on_close = nullptr;  // the failure goes to `done`, as a failed connect's does
    close(why);
    to(why);
  };
  auto ping = [this, self, at, refuse, done] {
    command({"PING"}, [this, at, refuse, done](const RedisReply& r) {
      if (!r.is_error()) return done("");
      if (r.str.starts_with("NOAUTH")) {
        return refuse(done, at + " demands AUTH: give the password in --cluster "
                                 "(redis://[USER]:PASSWORD@HOST:PORT) or ANTEROOM_REDIS_PASSWORD");
      }
      refuse(done, at + " says: " + scrubbed(r.str));
    });
  };
  if (!access_ || (access_->password.empty() && access_->user.empty())) return ping();
  std::vector<std::string> auth{"AUTH"};
  if (!access_->user.empty()) auth.push_back(access_->user);
  auth.push_back(access_->password);
  command(auth, [this, at, refuse, ping, done](const RedisReply& r) {
    // A Redis (or Sentinel) that has no password takes none: go on without.
    if (!r.is_error() || r.str.find("without any password configured") != std::string::npos) {
      return ping();
    }
    const std::string why = scrubbed(r.str);
    // Only these say the password or user is wrong (redis_access_refused then gives up);
    // anything else (the connection lost, too many clients) may pass.
    const bool wrong = r.str.starts_with("WRONGPASS") || r.str.starts_with("NOPERM") ||
                       r.str.find("invalid password") != std::string::npos ||
                       r.str.find("invalid username-password") != std::string::npos;
    refuse(done, at + (wrong ? " refused AUTH: " : " AUTH failed: ") + why);
  });
}

// Redis's own words, as they go into messages that may be logged or shown by /readyz: an
// error that repeats a command's arguments (a renamed AUTH is an unknown command "with args
// beginning with" the password) is cut there, and the password never appears.
std::string RedisConnection::scrubbed(std::string text) const {
  const size_t args = text.find("with args beginning with");
  if (args != std::string::npos) text = text.substr(0, args) + "(arguments not shown)";
  const std::string password = access_ ? access_->password : std::string();
  for (size_t at; !password.empty() && (at = text.find(password)) != std::string::npos;) {
    text.replace(at, password.size(), "***");
  }
  return text;
}

void RedisConnection::command(const std::vector<std::string>& args, Handler handler) {
  if (!open_ || subscriber_) {
    handler(RedisReply::error(subscriber_ ? "connection is subscribed" : "connection lost"));
    return;
  }
  std::vector<const char*> argv;
  std::vector<size_t> lens;
  argv.reserve(args.size());
  lens.reserve(args.size());
  for (const auto& a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  char* cmd = nullptr;
  int n = redisFormatCommandArgv(&cmd, static_cast<int>(args.size()), argv.data(), lens.data());
  if (n < 0) {
    handler(RedisReply::error("cannot format command"));
    return;
  }
  out_.append(cmd, static_cast<size_t>(n));
  redisFreeCommand(cmd);
  waiting_.push_back({std::move(handler), std::chrono::steady_clock::now()});
  flush();
}

void RedisConnection::subscribe(const std::string& channel, Handler on_push) {
  command({"SUBSCRIBE", channel}, [](const RedisReply&) {});
  waiting_.clear();  // the confirmation comes as a push like any message
  subscriber_ = true;
  on_push_ = std::move(on_push);
}

void RedisConnection::flush() {
  if (writing_ || out_.empty() || !open_) return;
  writing_ = true;
  sending_.swap(out_);
  out_.clear();
  auto written = [this, self = shared_from_this()](boost::system::error_code ec, size_t) {
    writing_ = false;
    sending_.clear();
    if (ec) return close("write failed: " + ec.message());
    flush();
  };
  if (tls_) {
    asio::async_write(tls_->stream, asio::buffer(sending_), std::move(written));
  } else {
    asio::async_write(socket_, asio::buffer(sending_), std::move(written));
  }
}

void RedisConnection::start_read() {
  auto got = [this, self = shared_from_this()](boost::system::error_code ec, size_t n) {
    if (ec) return close("read failed: " + ec.message());
    on_read(n);
  };
  if (tls_) {
    tls_->stream.async_read_some(asio::buffer(in_), std::move(got));
  } else {
    socket_.async_read_some(asio::buffer(in_), std::move(got));
  }
}

void RedisConnection::on_read(size_t n) {
  if (redisReaderFeed(reader_, in_.data(), n) != REDIS_OK) return close("cannot read reply");
  for (;;) {
    void* raw = nullptr;
    if (redisReaderGetReply(reader_, &raw) != REDIS_OK) return close("reply does not parse");
    if (raw == nullptr) break;
    RedisReply reply = copy_reply(static_cast<redisReply*>(raw));
    freeReplyObject(raw);
    deliver(reply);
    if (closed_) return;
  }
  start_read();
}

void RedisConnection::deliver(const RedisReply& reply) {
  if (subscriber_) {
    if (on_push_) on_push_(reply);
    return;
  }
  if (waiting_.empty()) {  // e.g. a Redis in protected mode says why it refuses, and hangs up
    return close(reply.is_error() ? "Redis says: " + scrubbed(reply.str)
                                  : "a reply nobody asked for");
  }
  // A master that Sentinel demoted answers writes so: nothing was done, and this connection
  // is to the wrong Redis now. Closing answers every command "connection lost" (the owner
  // reconnects, asking Sentinel anew).
  if (reply.is_error() && reply.str.starts_with("READONLY")) {
    return close("Redis at " + host_ + ":" + std::to_string(port_) +
                 " is a replica now: " + reply.str);
  }
  Handler h = std::move(waiting_.front().handler);
  waiting_.pop_front();
  h(reply);
}

void RedisConnection::arm_watchdog() {
  watchdog_.expires_after(timeout_ / 4 + std::chrono::milliseconds(1));
  watchdog_.async_wait([this, self = shared_from_this()](boost::system::error_code ec) {
    if (ec || closed_) return;
    if (!waiting_.empty() && std::chrono::steady_clock::now() - waiting_.front().since > timeout_) {
      return close("no reply within " + std::to_string(timeout_.count()) + " ms");
    }
    arm_watchdog();
  });
}

void RedisConnection::close(const std::string& why) {
  if (closed_) return;
  closed_ = true;
  open_ = false;
  boost::system::error_code ignored;
  socket().close(ignored);
  watchdog_.cancel();
  auto waiting = std::move(waiting_);
  waiting_.clear();
  const RedisReply lost = RedisReply::error("connection lost: " + why);
  for (auto& w : waiting) w.handler(lost);
  if (on_close) {
    auto call = std::move(on_close);
    on_close = nullptr;
    call(why);
  }
}

}  // namespace anteroom::cluster
