// The WebSocket visitor's journey, on seed 000's protocol: ENTER, wait on the socket for
// ALLOWED (asking CHECK_QUEUE_STATUS now and then), use the admission, stay, LEAVE.
#include "loadgen/visitor.h"

#include <algorithm>
#include <string>

namespace anteroom::loadgen {

net::awaitable<void> Visitor::run_ws() {
  if (Fail f = co_await conn_.ws_open(t_.plan.host, base_ + "/ws")) {
    fail(*f);
    co_return;
  }
  int64_t sent = now_us();
  if (Fail f = co_await conn_.ws_send(seed_ws_message("ENTER", user_))) {
    fail(*f);
    co_return;
  }
  Message m;
  std::string text;
  for (;;) {
    if (Fail f = co_await conn_.ws_next(&text)) {
      fail(*f);
      co_return;
    }
    if (!parse_message(text, &m)) {
      fail(ErrorKind::kProtocol);
      co_return;
    }
    if (m.type == "ALLOWED" || m.type == "QUEUE") break;
    if (m.type == "ERROR") {
      fail(ErrorKind::kProtocol);
      co_return;
    }
  }
  t_.request(RequestKind::kJoin, r_.due_us, now_us());
  if (m.status.empty()) m.status = m.type == "ALLOWED" ? "ALLOWED" : "WAITING";
  joined(m, sent);
  note(m, sent);
  if (m.type == "QUEUE") {
    bool waited = co_await wait_ws(&m);
    if (!waited) co_return;
  }
  if (!holds_slot(m.status)) {
    end(Outcome::kExpired);
    co_return;
  }
  bool used = co_await use(m);
  if (!used) co_return;
  co_await sleep_until(timer_, now_us() + stay_us_);
  if (Fail f = co_await conn_.ws_send(seed_ws_message("LEAVE", user_))) {
    fail(*f);
    co_return;
  }
  co_await conn_.ws_close();
  set_active(false);
  end(Outcome::kLeft);
}

net::awaitable<bool> Visitor::wait_ws(Message* m) {
  bool hold = t_.plan.mode == Mode::kHold;
  if (hold) on_hold_frame(*m);
  auto every = static_cast<int64_t>(cfg_.ws_check_s * 1e6);
  int64_t next_check = now_us() + every;
  int64_t check_sent = 0;  // 0: no question outstanding
  std::string text;
  for (;;) {
    int64_t now = now_us();
    if (abandoner_ && now >= abandon_at_) {
      co_await conn_.ws_close();
      end(Outcome::kAbandoned);
      co_return false;
    }
    if (!hold && now >= next_check) {
      if (check_sent != 0 && now - check_sent > timeout()) {
        fail(ErrorKind::kTimeout);
        co_return false;
      }
      if (check_sent == 0) {
        check_sent = now;
        conn_.set_timeout(timeout());
        if (Fail f = co_await conn_.ws_send(seed_ws_message("CHECK_QUEUE_STATUS", user_))) {
          fail(*f);
          co_return false;
        }
      }
      next_check = now + every;
    }
    int64_t until = hold ? 0 : next_check;
    if (abandoner_) until = std::min(until, abandon_at_);
    conn_.set_timeout(hold ? 0 : std::max<int64_t>(1000, until - now_us()));
    Fail f = co_await conn_.ws_next(&text);
    conn_.set_timeout(timeout());
    if (f == ErrorKind::kTimeout && !hold) continue;  // time to ask, or to give up
    if (f) {
      fail(*f);
      co_return false;
    }
    if (!parse_message(text, m)) {
      fail(ErrorKind::kProtocol);
      co_return false;
    }
    if (m->type == "VISITOR_COUNT") continue;
    if (m->type == "ERROR") {
      fail(ErrorKind::kProtocol);
      co_return false;
    }
    if (m->type == "ALLOWED" && m->status.empty()) m->status = "ALLOWED";
    int64_t asked = 0;
    if (m->reply && check_sent != 0) {
      t_.request(RequestKind::kStatus, check_sent, now_us());
      asked = check_sent;
      check_sent = 0;
    }
    note(*m, asked);
    if (hold) on_hold_frame(*m);
    if (m->status != "WAITING" && !m->status.empty()) co_return true;
  }
}

}  // namespace anteroom::loadgen
