// The visit's shared parts: arriving on time, the bookkeeping every transport does, one
// checked HTTP exchange, using the admission, and the entry points visit() and
// closed_loop(). Each transport's joining and waiting is in visit_http.cc or visit_ws.cc.
#include "loadgen/visit.h"

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <memory>

#include "loadgen/draw_check.h"
#include "loadgen/visitor.h"

namespace anteroom::loadgen {

namespace json = boost::json;

bool parse_message(std::string_view text, Message* m) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) return false;
  const json::object& o = v.get_object();
  *m = Message{};
  auto str = [&](const char* key, std::string* out) {
    if (const json::value* x = o.if_contains(key); x != nullptr && x->is_string()) {
      *out = std::string(x->get_string());
    }
  };
  auto num = [&](const char* key) -> std::optional<int64_t> {
    const json::value* x = o.if_contains(key);
    if (x == nullptr) return std::nullopt;
    if (x->is_int64()) return x->get_int64();
    if (x->is_uint64()) return static_cast<int64_t>(x->get_uint64());
    return std::nullopt;
  };
  str("type", &m->type);
  str("status", &m->status);
  str("token", &m->token);
  str("ticket", &m->ticket);
  if (auto p = num("position")) m->position = *p;
  if (const json::value* p = o.if_contains("position")) m->position_null = p->is_null();
  m->opens_at = o.contains("opens_at");
  std::string ref;
  str("ref", &ref);
  m->ref = ref_number(ref);
  if (auto s = num("seq")) m->seq = static_cast<uint64_t>(*s);
  if (auto p = num("poll_after_ms")) m->poll_after_ms = *p;
  m->reply = o.contains("inReplyTo");
  return true;
}

std::string seed_ws_message(const char* type, const std::string& user) {
  return std::string(R"({"type":")") + type + R"(","userId":")" + user + "\"}";
}

namespace {

constexpr auto kTok = net::as_tuple(net::use_awaitable);

uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A number in [0, 1) fixed by the run's seed, the visitor and what it is for.
double unit(uint64_t seed, uint64_t index, uint64_t salt) {
  return static_cast<double>(mix(seed ^ mix(index * 8 + salt)) >> 11) * 0x1.0p-53;
}

}  // namespace

net::awaitable<void> sleep_until(net::steady_timer& timer, int64_t at_us) {
  int64_t d = at_us - now_us();
  if (d <= 0) co_return;
  timer.expires_after(std::chrono::microseconds(d));
  co_await timer.async_wait(kTok);
}

ErrorKind http_error(int status) { return answer_error(static_cast<unsigned>(status), {}); }
ErrorKind http_error(const HttpResponse& r) { return r.limit ? *r.limit : http_error(r.status); }

bool holds_slot(const std::string& s) { return s == "ALLOWED" || s == "ACTIVE"; }

Visitor::Visitor(ThreadCtx& t, uint64_t index, VisitorRecord& r)
    : t_(t),
      cfg_(*t.plan.cfg),
      index_(index),
      r_(r),
      conn_(t.io, t.watchdog, &t.live.open),
      timer_(t.io) {
  abandoner_ = t.plan.mode == Mode::kVisit && unit(cfg_.seed, index, 1) < cfg_.abandon;
  stay_us_ = static_cast<int64_t>(cfg_.stay_s * 1e6 * (0.5 + unit(cfg_.seed, index, 2)));
  user_ = "lg" + std::to_string(index);
  const std::string& room = t.plan.room;
  base_ = "/v1/rooms/" + room;
  host_ = "\r\nHost: " + t.plan.host + "\r\n";
  conn_.set_timeout(timeout());
}

net::awaitable<void> Visitor::run() {
  co_await sleep_until(timer_, r_.due_us);
  if (t_.plan.mode == Mode::kDirect) {
    co_await direct();
  } else if (Fail f = co_await conn_.connect(target(), source()); f && !co_await move_on(conn_)) {
    fail(*f);
  } else if (t_.plan.mode == Mode::kSite) {
    key_ = "k" + std::to_string(cfg_.seed) + "-" + std::to_string(index_);
    co_await run_site();
  } else if (cfg_.transport == Transport::kWs) {
    co_await run_ws();
  } else {
    co_await run_http();
  }
  conn_.close();
  set_waiting(false);
  set_active(false);
  t_.live.finished.fetch_add(1, std::memory_order_relaxed);
}

net::awaitable<bool> Visitor::move_on(Conn& c) {
  const size_t n = t_.plan.targets.size();
  while (n > 1 && moves_ + 1 < 2 * n) {  // each target twice at most
    c.close();
    ++moves_;
    ++t_.rec.visits.moved;
    if (!co_await c.connect(target(), source())) co_return true;
  }
  co_return false;
}

void Visitor::fail(ErrorKind kind) {
  t_.rec.error(kind, now_us());
  t_.live.errors.fetch_add(1, std::memory_order_relaxed);
  r_.outcome = Outcome::kFailed;
  ++t_.rec.visits.failed;
}

void Visitor::end(Outcome o) {
  r_.outcome = o;
  if (o == Outcome::kAbandoned) ++t_.rec.visits.abandoned;
  if (o == Outcome::kExpired) ++t_.rec.visits.expired;
  if (o == Outcome::kLeft) ++t_.rec.visits.left;
}

void Visitor::set_waiting(bool on) {
  if (on != waiting_) t_.live.waiting.fetch_add(on ? 1 : -1, std::memory_order_relaxed);
  waiting_ = on;
}

void Visitor::set_active(bool on) {
  if (on != active_) t_.live.active.fetch_add(on ? 1 : -1, std::memory_order_relaxed);
  active_ = on;
}

void Visitor::note(const Message& m, int64_t asked_at) {
  if (m.status == "WAITING") {
    if (last_position_ >= 0 && m.position > last_position_) r_.position_grew = true;
    if (m.position >= 0) last_position_ = m.position;
    if (asked_at != 0) r_.last_waiting_sent_us = std::max(r_.last_waiting_sent_us, asked_at);
    set_waiting(true);
    return;
  }
  set_waiting(false);
  if (holds_slot(m.status) && r_.allowed_seen_us == 0) {
    int64_t now = now_us();
    r_.allowed_seen_us = now;
    t_.rec.admitted(r_.due_us, now);
    ++t_.rec.visits.admitted;
    t_.live.admitted.fetch_add(1, std::memory_order_relaxed);
    set_active(true);
    if (!m.token.empty()) token_ = m.token;
  }
}

void Visitor::joined(const Message& m, int64_t sent) {
  int64_t now = now_us();
  r_.join_sent_us = sent;
  r_.join_acked_us = now;
  r_.seq = m.seq;
  r_.first_position = m.position > 0 ? static_cast<uint64_t>(m.position) : 0;
  r_.ref = m.ref;
  r_.joined_prequeue = m.status == "WAITING" && m.position_null && m.opens_at;
  ticket_ = m.ticket;
  ++t_.rec.visits.joined;
  t_.live.joined.fetch_add(1, std::memory_order_relaxed);
  abandon_at_ = now + static_cast<int64_t>(cfg_.patience_s * 1e6 * unit(cfg_.seed, index_, 3));
}

net::awaitable<bool> Visitor::call(Conn& c, const std::string& req, RequestKind kind, int64_t due,
                                   int want, Message* m, int64_t* sent_out) {
  int64_t sent = now_us();
  if (sent_out != nullptr) *sent_out = sent;
  HttpResponse resp;
  for (;;) {
    Fail f = co_await c.exchange(req, &resp);
    // A node that went away, or that answers 503 (cut off from its cluster's Redis): the
    // next target has the same line.
    if ((f || resp.status == 503) && co_await move_on(c)) continue;
    if (f) {
      fail(*f);
      co_return false;
    }
    break;
  }
  int64_t done = now_us();
  last_status_ = resp.status;
  if (resp.status != want && !(want == 201 && resp.status == 200)) {
    fail(http_error(resp));
    co_return false;
  }
  if (m != nullptr && (!parse_message(resp.body, m) || (m->status.empty() && m->type.empty()))) {
    fail(ErrorKind::kProtocol);
    co_return false;
  }
  t_.request(kind, due, done);
  co_return true;
}

void Visitor::on_hold_frame(const Message& m) {
  if (!held_) {
    held_ = true;
    held_position_ = m.position;
    r_.outcome = Outcome::kHeld;
    t_.live.held.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  bool moved = m.status != "WAITING" || (m.position >= 0 && m.position < held_position_);
  if (moved && r_.change_seen_us == 0 && t_.control.trigger_us.load() != 0) {
    r_.change_seen_us = now_us();
    t_.live.changed.fetch_add(1, std::memory_order_relaxed);
  }
}

net::awaitable<bool> Visitor::use(const Message& m) {
  if (t_.plan.origin_after_admission) {
    bool ok = co_await origin_request();
    co_return ok;
  }
  std::string token = m.token.empty() ? token_ : m.token;
  std::string req;
  int want = 204;
  if (cfg_.use == UseVia::kGate) {
    // The admission cookie of a bound ticket is TOKEN~KEY (server/app/gate.cc).
    req = "GET /v1/gate/" + t_.plan.room + " HTTP/1.1" + host_ + "Cookie: anteroom_" +
          t_.plan.room + "=" + token + (key_.empty() ? "" : "~" + key_) + "\r\n\r\n";
  } else {
    std::string body =
        R"({"token":")" + token + "\"" + (key_.empty() ? "" : R"(,"key":")" + key_ + "\"") + "}";
    req = "POST " + base_ + "/verify HTTP/1.1" + host_ + "Authorization: Bearer " + cfg_.admin_key +
          "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
          "\r\n\r\n" + body;
    want = 200;
  }
  Conn& c = use_conn();
  if (!c.is_open() && &c != &conn_) {
    if (Fail f = co_await c.connect(target(), source()); f && !co_await move_on(c)) {
      fail(*f);
      co_return false;
    }
  }
  bool ok = co_await call(c, req, RequestKind::kUse, now_us(), want, nullptr);
  if (!ok) co_return false;
  ++t_.rec.visits.used;
  co_return true;
}

Conn& Visitor::use_conn() {
  if (cfg_.transport != Transport::kWs) return conn_;
  if (!http_) http_ = std::make_unique<Conn>(t_.io, t_.watchdog, &t_.live.open);
  http_->set_timeout(timeout());
  return *http_;
}

net::awaitable<bool> Visitor::origin_request() {
  Conn c(t_.io, t_.watchdog, &t_.live.open);
  c.set_timeout(timeout());
  int64_t due = now_us();
  if (Fail f = co_await c.connect(t_.plan.origin, source())) {
    fail(*f);
    co_return false;
  }
  std::string req = "GET /buy HTTP/1.1\r\nHost: origin\r\n\r\n";
  bool ok = co_await call(c, req, RequestKind::kOrigin, due, 200, nullptr);
  if (ok) ++t_.rec.visits.used;
  co_return ok;
}

net::awaitable<void> Visitor::direct() {
  bool ok = co_await origin_request();
  if (ok) end(Outcome::kServed);
}

net::awaitable<void> visit(ThreadCtx& t, uint64_t index, VisitorRecord& r) {
  {
    Visitor v(t, index, r);
    co_await v.run();
  }
  --t.running;
  if (t.running == 0) t.watchdog.stop();
}

net::awaitable<void> closed_loop(ThreadCtx& t, uint64_t index, int64_t end_us) {
  {
    Conn c(t.io, t.watchdog, &t.live.open);
    c.set_timeout(static_cast<int64_t>(t.plan.cfg->timeout_s * 1e6));
    const auto& s = t.plan.sources;
    net::ip::address from = s.empty() ? net::ip::address() : s[index % s.size()];
    std::string req = "GET " + t.plan.cfg->path + " HTTP/1.1\r\nHost: " + t.plan.host + "\r\n\r\n";
    HttpResponse resp;
    Fail f = co_await c.connect(t.plan.target, from);
    if (f) t.rec.error(*f, now_us());
    while (!f) {
      int64_t sent = now_us();
      if (sent >= end_us) break;
      f = co_await c.exchange(req, &resp);
      int64_t done = now_us();
      if (f) {
        t.rec.error(*f, done);
      } else if (resp.status >= 400) {
        t.rec.error(http_error(resp), done);
      } else {
        t.request(RequestKind::kFixed, sent, done);
      }
    }
  }
  --t.running;
  if (t.running == 0) t.watchdog.stop();
}

}  // namespace anteroom::loadgen
