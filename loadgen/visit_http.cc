// The HTTP visitors' journey: join with a POST, wait by polling the ticket (honouring
// poll_after_ms) or on its SSE stream, then use the admission, stay and leave with a DELETE.
#include "loadgen/visitor.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <string>

#include "loadgen/pow_solver.h"

namespace anteroom::loadgen {

net::awaitable<void> Visitor::run_http() {
  std::string pow;
  int64_t due = r_.due_us;
  if (cfg_.pow_difficulty != 0) {
    bool proved = co_await prove_work(&pow);
    if (!proved) co_return;
    due = r_.pow_solved_us;  // the join's own clock starts once it can be sent
  }
  key_ = "k" + std::to_string(cfg_.seed) + "-" + std::to_string(index_);
  std::string body = R"({"user":")" + user_ + R"(","key":")" + key_ + "\"" + pow + "}";
  std::string join =
      "POST " + base_ + "/tickets HTTP/1.1" + host_ +
      "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\n\r\n" + body;
  Message m;
  int64_t sent = 0;
  bool ok = co_await call(conn_, join, RequestKind::kJoin, due, 201, &m, &sent);
  if (!ok) {
    if (last_status_ >= 400) r_.join_refused = static_cast<uint16_t>(last_status_);
    co_return;
  }
  joined(m, sent);
  note(m, sent);
  bool go_on = false;
  if (cfg_.transport == Transport::kPoll) {
    go_on = co_await wait_poll(&m);
  } else {
    go_on = co_await wait_sse(&m);
  }
  if (go_on) co_await after_wait(m);
}

net::awaitable<bool> Visitor::prove_work(std::string* field) {
  const std::string req = "GET " + base_ + "/challenge HTTP/1.1" + host_ + "\r\n";
  HttpResponse resp;
  for (;;) {
    Fail f = co_await conn_.exchange(req, &resp);
    if ((f || resp.status == 503) && co_await move_on(conn_)) continue;
    if (f) {
      fail(*f);
      co_return false;
    }
    break;
  }
  last_status_ = resp.status;
  if (resp.status != 200) {
    fail(http_error(resp));
    co_return false;
  }
  PowChallengeText c;
  if (!parse_challenge(resp.body, &c)) {
    fail(ErrorKind::kProtocol);
    co_return false;
  }
  PowSearch search(c.challenge, c.difficulty);
  while (!search.step(kPowStep)) {
    co_await net::post(t_.io, net::use_awaitable);  // the thread's other visitors go on
  }
  r_.pow_solved_us = now_us();
  *field = R"(,"pow":{"challenge":")" + c.challenge + R"(","nonce":")" + search.nonce() + "\"}";
  co_return true;
}

net::awaitable<bool> Visitor::wait_poll(Message* m) {
  std::string req = "GET " + base_ + "/tickets/" + ticket_ + " HTTP/1.1" + host_ + "\r\n";
  while (m->status == "WAITING") {
    int64_t pause = (m->poll_after_ms >= 0 ? m->poll_after_ms : 1000) * 1000;
    int64_t due = now_us() + pause;
    if (abandoner_ && due >= abandon_at_) {
      co_await sleep_until(timer_, abandon_at_);
      conn_.close();  // the tab is closed: no leave, the server finds out by itself
      end(Outcome::kAbandoned);
      co_return false;
    }
    co_await sleep_until(timer_, due);
    int64_t sent = 0;
    bool ok = co_await call(conn_, req, RequestKind::kStatus, due, 200, m, &sent);
    if (!ok) co_return false;
    note(*m, sent);
  }
  co_return true;
}

net::awaitable<bool> Visitor::wait_sse(Message* m) {
  if (m->status != "WAITING") co_return true;
  std::string req = "GET " + base_ + "/tickets/" + ticket_ + "/events HTTP/1.1" + host_ +
                    "Accept: text/event-stream\r\n\r\n";
  bool first = true;
  for (;;) {  // a stream whose node went away reopens on the next target
    int64_t sent = now_us();
    int status = 0;
    Fail f = co_await conn_.sse_open(req, &status);
    if ((f || status == 503) && co_await move_on(conn_)) continue;
    if (f) {
      fail(*f);
      co_return false;
    }
    if (status != 200) {
      fail(http_error(status));
      co_return false;
    }
    std::string data;
    for (;;) {
      int64_t now = now_us();
      if (held_) {
        conn_.set_timeout(0);  // hold: the coordinator ends the phase
      } else if (abandoner_) {
        conn_.set_timeout(std::max<int64_t>(1000, abandon_at_ - now));
      } else {
        conn_.set_timeout(std::max<int64_t>(timeout(), 60'000'000));  // keep-alives every 15 s
      }
      f = co_await conn_.sse_next(&data);
      conn_.set_timeout(timeout());
      if (f) break;
      if (!parse_message(data, m) || m->status.empty()) {
        fail(ErrorKind::kProtocol);
        co_return false;
      }
      if (first) {
        t_.request(RequestKind::kStream, sent, now_us());
        first = false;
      }
      note(*m, 0);
      if (t_.plan.mode == Mode::kHold) on_hold_frame(*m);
      if (m->status != "WAITING") {
        conn_.close();  // the server ends the stream after the final frame
        co_return true;
      }
    }
    if (abandoner_ && now_us() >= abandon_at_ - 30'000) {
      conn_.close();
      end(Outcome::kAbandoned);
      co_return false;
    }
    if (!co_await move_on(conn_)) {
      fail(*f);
      co_return false;
    }
  }
}

net::awaitable<void> Visitor::after_wait(const Message& m) {
  if (!holds_slot(m.status)) {
    if (m.status != "WAITING") end(Outcome::kExpired);
    co_return;
  }
  bool used = co_await use(m);
  if (!used) co_return;
  co_await sleep_until(timer_, now_us() + stay_us_);
  std::string req = "DELETE " + base_ + "/tickets/" + ticket_ + " HTTP/1.1" + host_ + "\r\n";
  int64_t due = now_us();
  bool ok = co_await call(conn_, req, RequestKind::kLeave, due, 204, nullptr);
  if (!ok) co_return;
  set_active(false);
  end(Outcome::kLeft);
}

}  // namespace anteroom::loadgen
