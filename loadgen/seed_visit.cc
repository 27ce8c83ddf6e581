// seed-visit: seed 000's scripted test, over its WebSocket protocol, printing PASS or FAIL
// for every step: a room of capacity 10; 20 users enter (10 allowed, 10 queued at 1..10);
// user_10000 enters and is queued at 11; another user enters and user_10000 is still 11;
// the visitors leave one a second and user_10000 moves up by one each time; then user_10000
// is admitted (pushed, with a token the gate accepts) and user_20000 is first in line.
#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <cstdio>
#include <memory>
#include <tuple>
#include <vector>

#include "loadgen/admin.h"
#include "loadgen/conn.h"
#include "loadgen/scenarios.h"

namespace anteroom::loadgen {

namespace {

class Script {
 public:
  Script(const Config& cfg, std::string room, RunResult* run)
      : cfg_(cfg), room_(std::move(room)), run_(run), io_(1), wd_(io_) {}

  void run() {
    net::co_spawn(io_, steps(), net::detached);
    wd_.start();
    io_.run();
  }

 private:
  bool step(const std::string& name, bool ok, const std::string& detail) {
    run_->checks.push_back({name, ok, detail});
    std::printf("%s  %s%s%s\n", ok ? "PASS" : "FAIL", name.c_str(), detail.empty() ? "" : ": ",
                detail.c_str());
    std::fflush(stdout);
    return ok;
  }

  // Each socket on the next target in turn: over a cluster's nodes, the waiting visitor's
  // socket and those of the visitors who leave ahead of it are on different nodes.
  net::awaitable<std::unique_ptr<Conn>> open_socket() {
    auto c = std::make_unique<Conn>(io_, wd_, nullptr);
    c->set_timeout(static_cast<int64_t>(cfg_.timeout_s * 1e6));
    std::string host = cfg_.target_host;
    uint16_t port = cfg_.target_port;
    if (!cfg_.targets.empty()) {
      std::tie(host, port) = cfg_.targets[sockets_++ % cfg_.targets.size()];
    }
    Fail f = co_await c->connect(resolve_endpoint(host, port), net::ip::address());
    if (f) co_return nullptr;
    f = co_await c->ws_open(host, "/v1/rooms/" + room_ + "/ws");
    if (f) co_return nullptr;
    co_return c;
  }

  // The next message of `type` (others are skipped); false on error or timeout.
  net::awaitable<bool> next_of(Conn& c, const std::string& type, Message* m) {
    std::string text;
    bool found = false;
    while (!found) {
      Fail f = co_await c.ws_next(&text);
      if (f) break;
      found = parse_message(text, m) && m->type == type;
    }
    co_return found;
  }

  net::awaitable<void> pause(int ms) {
    net::steady_timer t(io_);
    t.expires_after(std::chrono::milliseconds(ms));
    co_await t.async_wait(net::as_tuple(net::use_awaitable));
  }

  net::awaitable<void> steps() {
    co_await script();
    users_.clear();
    me_.reset();
    other_.reset();
    wd_.stop();
  }

  // Each step says PASS or FAIL; the script stops at the first that fails. (GCC 12: assign
  // what is awaited, then test it; see docs/loadgen.md.)
  net::awaitable<void> script() {
    bool ok = co_await twenty_users_enter();
    if (!ok) co_return;
    ok = co_await enter_queued(&me_, "user_10000", 11, "user_10000 enters and is queued at 11");
    if (!ok) co_return;
    ok = co_await user_20000_enters_behind();
    if (!ok) co_return;
    ok = co_await visitors_leave_one_a_second();
    if (!ok) co_return;
    co_await user_10000_is_admitted();
  }

  // Step 1: 20 users enter a room of capacity 10.
  net::awaitable<bool> twenty_users_enter() {
    int allowed = 0;
    int queued_right = 0;
    for (int i = 0; i < 20; ++i) {
      auto c = co_await open_socket();
      if (!c) co_return step("20 users enter", false, "cannot open socket " + std::to_string(i));
      std::string user = "user_" + std::to_string(i);
      co_await c->ws_send(seed_ws_message("ENTER", user));
      const char* want = i < 10 ? "ALLOWED" : "QUEUE";
      bool got = co_await next_of(*c, want, &m_);
      if (!got) {
        co_return step("20 users enter", false, user + " did not get " + want);
      }
      if (i < 10) ++allowed;
      if (i >= 10 && m_.position == i - 9) ++queued_right;
      users_.push_back(std::move(c));
    }
    if (!step("20 users enter a room of capacity 10: the first 10 ALLOWED", allowed == 10,
              std::to_string(allowed) + " allowed"))
      co_return false;
    co_return step("the next 10 QUEUE at positions 1 to 10", queued_right == 10,
                   std::to_string(queued_right) + " at the right position");
  }

  // Steps 2 and 3: `user` opens `*conn`, enters, and checks (as `check`) that it waits at
  // `position`.
  net::awaitable<bool> enter_queued(std::unique_ptr<Conn>* conn, const std::string& user,
                                    int64_t position, const std::string& check) {
    *conn = co_await open_socket();
    if (!*conn) co_return step(user + " enters", false, "cannot open socket");
    co_await (*conn)->ws_send(seed_ws_message("ENTER", user));
    bool ok = co_await next_of(**conn, "QUEUE", &m_);
    co_return step(check, ok && m_.position == position, "position " + std::to_string(m_.position));
  }

  // Step 3: someone else enters; user_10000 keeps its place.
  net::awaitable<bool> user_20000_enters_behind() {
    bool ok = co_await enter_queued(&other_, "user_20000", 12, "user_20000 enters behind, at 12");
    if (!ok) co_return false;
    co_await me_->ws_send(seed_ws_message("CHECK_QUEUE_STATUS", "user_10000"));
    ok = co_await answer(*me_, &m_);
    co_return step("user_10000 keeps position 11 while the line grows", ok && m_.position == 11,
                   "position " + std::to_string(m_.position));
  }

  // Asks `user`'s position on `c` until it is `want`, within the second a position is
  // promised to follow a change in: on a cluster, `c`'s node applies a leave taken by another
  // node a moment after that node did, so one read at once can see the place before it. False
  // if the position passes `want` (moved too far) or is not there after a second; *lag_ms
  // gets how long it took.
  net::awaitable<bool> position_settles(Conn& c, const std::string& user, int64_t want,
                                        int64_t* lag_ms) {
    const auto from = std::chrono::steady_clock::now();
    for (;;) {
      co_await c.ws_send(seed_ws_message("CHECK_QUEUE_STATUS", user));
      const bool asked = co_await answer(c, &m_);
      *lag_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::steady_clock::now() - from)
                    .count();
      if (!asked || m_.position < want) co_return false;
      if (m_.position == want) co_return true;
      if (*lag_ms >= 1000) co_return false;
      co_await pause(20);
    }
  }

  // Step 4: the visitors leave one a second; user_10000 moves up by one each time.
  net::awaitable<bool> visitors_leave_one_a_second() {
    int moved_right = 0;
    int64_t most_lag_ms = 0;
    std::string detail;
    for (int i = 0; i < 10; ++i) {
      co_await pause(1000);
      co_await users_[i]->ws_send(seed_ws_message("LEAVE", "user_" + std::to_string(i)));
      bool next_in = co_await next_of(*users_[10 + i], "ALLOWED", &m_);
      int64_t lag_ms = 0;
      bool settled = co_await position_settles(*me_, "user_10000", 10 - i, &lag_ms);
      most_lag_ms = std::max(most_lag_ms, lag_ms);
      if (next_in && settled) {
        ++moved_right;
      } else {
        detail = "after " + std::to_string(i + 1) + " left: position " +
                 std::to_string(m_.position) + " after " + std::to_string(lag_ms) + " ms";
      }
    }
    if (detail.empty()) {
      detail = "each within " + std::to_string(most_lag_ms) + " ms (a second is the bound)";
    }
    co_return step("visitors leave one a second; user_10000 moves up by one each time",
                   moved_right == 10, detail);
  }

  // Step 5: one more leaves; user_10000 is admitted without asking, with a working token.
  net::awaitable<void> user_10000_is_admitted() {
    co_await users_[10]->ws_send(seed_ws_message("LEAVE", "user_10"));
    bool ok = co_await next_of(*me_, "ALLOWED", &m_);
    if (!step("user_10000 is admitted (ALLOWED pushed)", ok && !m_.token.empty(),
              ok ? "token received" : "no ALLOWED"))
      co_return;
    // A plain GET with the cookie the waiting page would set, as nginx's auth_request sends it.
    Reply gate = http_call(cfg_, "GET", "/v1/gate/" + room_, "", false,
                           "Cookie: anteroom_" + room_ + "=" + m_.token + "\r\n");
    step("the gate lets user_10000's token in", gate.status == 204,
         "HTTP " + std::to_string(gate.status));
    int64_t lag_ms = 0;
    ok = co_await position_settles(*other_, "user_20000", 1, &lag_ms);
    step("user_20000 is now first in line", ok,
         "position " + std::to_string(m_.position) + " after " + std::to_string(lag_ms) + " ms");
  }

  // The answer to a CHECK_QUEUE_STATUS (pushed QUEUE_STATUS frames are skipped).
  net::awaitable<bool> answer(Conn& c, Message* m) {
    bool ok = true;
    do {
      ok = co_await next_of(c, "QUEUE_STATUS", m);
    } while (ok && !m->reply);
    co_return ok;
  }

  const Config& cfg_;
  std::string room_;
  size_t sockets_ = 0;  // sockets opened so far (which target the next one uses)
  RunResult* run_;
  net::io_context io_;
  Watchdog wd_;
  std::vector<std::unique_ptr<Conn>> users_;
  std::unique_ptr<Conn> me_;
  std::unique_ptr<Conn> other_;
  // The message last read, by any step (a step whose read fails shows the position left here).
  Message m_;
};

}  // namespace

int run_seed_visit(const Config& cfg) {
  std::string room = room_for(cfg);
  RunResult run = new_result(cfg);
  std::string e = create_room(cfg, room, "auto");
  if (!run.checks.emplace_back(Check{"create room " + room + " (capacity 10, auto)", e.empty(), e})
           .passed) {
    std::printf("FAIL  create room: %s\n", e.c_str());
    return finish(cfg, room, &run);
  }
  std::printf("PASS  create room %s (capacity 10, auto)\n", room.c_str());
  Script(cfg, room, &run).run();
  delete_room(cfg, room);
  return finish(cfg, room, &run);
}

}  // namespace anteroom::loadgen
