// The loadgen's HTTP client (loadgen/conn.h) against a server that answers as a real origin
// may: a chunked body, a body that runs to the end of the connection, a redirect with its
// cookie, pipelined bytes of the next answer already in the buffer.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>
#include <thread>

#include "loadgen/conn.h"

namespace anteroom::loadgen {
namespace {

// A server on 127.0.0.1 that answers each request with the next of `answers`, raw.
class RawServer {
 public:
  explicit RawServer(std::vector<std::string> answers)
      : acceptor_(io_, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0)),
        answers_(std::move(answers)) {
    thread_ = std::thread([this] {
      tcp::socket s(io_);
      boost::system::error_code ec;
      acceptor_.accept(s, ec);
      net::streambuf in;
      for (const std::string& a : answers_) {
        if (ec || net::read_until(s, in, "\r\n\r\n", ec) == 0) return;
        in.consume(in.size());
        net::write(s, net::buffer(a), ec);
      }
      s.shutdown(tcp::socket::shutdown_send, ec);
    });
  }
  ~RawServer() { thread_.join(); }
  tcp::endpoint endpoint() const { return acceptor_.local_endpoint(); }

 private:
  net::io_context io_;
  tcp::acceptor acceptor_;
  std::vector<std::string> answers_;
  std::thread thread_;
};

struct Got {
  int status = 0;
  std::string body, location, cookie;
  bool close = false;
  std::optional<ErrorKind> error;
};

// Sends `n` requests over one connection to `server`, each answer kept.
std::vector<Got> exchange_all(const RawServer& server, int n) {
  net::io_context io;
  Watchdog dog(io);
  std::vector<Got> out;
  net::co_spawn(
      io,
      [&]() -> net::awaitable<void> {
        Conn c(io, dog, nullptr);
        if (Fail f = co_await c.connect(server.endpoint(), {})) {
          out.push_back(Got{0, {}, {}, {}, false, f});
          co_return;
        }
        for (int i = 0; i < n; ++i) {
          HttpResponse r;
          Fail f = co_await c.exchange("GET / HTTP/1.1\r\nHost: x\r\n\r\n", &r);
          out.push_back(Got{r.status, std::string(r.body), std::string(r.location),
                            std::string(r.set_cookie), r.close, f});
          if (f || r.close) break;
        }
      },
      net::detached);
  io.run();
  return out;
}

TEST(Conn, ReadsChunkedBodiesAndKeepsTheConnection) {
  RawServer s(
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
       "5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\n\r\n",
       "HTTP/1.1 302 Found\r\nLocation: /v1/enter?t=x\r\n"
       "Set-Cookie: anteroom_shop=abc; Path=/\r\nContent-Length: 0\r\n\r\n"});
  auto got = exchange_all(s, 2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_FALSE(got[0].error);
  EXPECT_EQ(got[0].status, 200);
  EXPECT_EQ(got[0].body, "hello, world");
  EXPECT_FALSE(got[0].close);
  EXPECT_EQ(got[1].status, 302);
  EXPECT_EQ(got[1].location, "/v1/enter?t=x");
  EXPECT_EQ(got[1].cookie, "anteroom_shop=abc; Path=/");
}

TEST(Conn, ReadsABodyThatRunsToTheEndOfTheConnection) {
  RawServer s({"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n<p>origin</p>"});
  auto got = exchange_all(s, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_FALSE(got[0].error);
  EXPECT_EQ(got[0].body, "<p>origin</p>");
  EXPECT_TRUE(got[0].close);
}

TEST(Conn, RefusesAnAnswerThatIsNotHttp) {
  RawServer s({"SSH-2.0-OpenSSH\r\n\r\n"});
  auto got = exchange_all(s, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].error, ErrorKind::kProtocol);
}

}  // namespace
}  // namespace anteroom::loadgen
