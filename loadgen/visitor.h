// The visitor behind visit() (visit.h), for the files that hold its parts: visit.cc (arrival,
// bookkeeping, using the admission), visit_http.cc (poll and SSE) and visit_ws.cc (WebSocket).
// Nothing else includes it.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <memory>
#include <string>

#include "loadgen/visit.h"

namespace anteroom::loadgen {

net::awaitable<void> sleep_until(net::steady_timer& timer, int64_t at_us);
// The error an unexpected HTTP status counts as.
ErrorKind http_error(int status);
ErrorKind http_error(const HttpResponse& r);  // a connection limit's kind if it names one
bool holds_slot(const std::string& s);        // ALLOWED or ACTIVE

class Visitor {
 public:
  Visitor(ThreadCtx& t, uint64_t index, VisitorRecord& r);
  net::awaitable<void> run();

 private:
  int64_t timeout() const { return static_cast<int64_t>(cfg_.timeout_s * 1e6); }
  net::ip::address source() const {
    const auto& s = t_.plan.sources;
    return s.empty() ? net::ip::address() : s[index_ % s.size()];
  }

  // The target this visitor talks to: its share of the plan's, until its node goes away.
  tcp::endpoint target() const {
    const auto& ts = t_.plan.targets;
    return ts.empty() ? t_.plan.target : ts[(index_ + moves_) % ts.size()];
  }
  // After a connection failure (or a 503): connects `c` to the next target, keeping the
  // ticket. False when there is no other target left to try.
  net::awaitable<bool> move_on(Conn& c);

  void fail(ErrorKind kind);
  void end(Outcome o);
  void set_waiting(bool on);
  void set_active(bool on);
  // Everything a status answer or frame says about order and progress. `asked_at` is when the
  // request it answers was sent (0 for pushed frames, which prove nothing about time).
  void note(const Message& m, int64_t asked_at);
  void joined(const Message& m, int64_t sent);
  // One HTTP exchange that must answer `want`; parses the body into `m` when asked.
  net::awaitable<bool> call(Conn& c, const std::string& req, RequestKind kind, int64_t due,
                            int want, Message* m, int64_t* sent_out = nullptr);

  // hold: the first frame means the session is held; later ones may carry the change.
  void on_hold_frame(const Message& m);
  // Uses the admission: at the gate (as nginx would), through verify (as the protected
  // service would), or at the origin itself (protect).
  net::awaitable<bool> use(const Message& m);
  // A WebSocket visitor keeps its socket and uses a second connection for HTTP, as a page
  // would; the others reuse their one connection.
  Conn& use_conn();
  net::awaitable<bool> origin_request();
  net::awaitable<void> direct();

  // visit_http.cc
  net::awaitable<void> run_http();
  // The room asks for proof of work (bots): GET .../challenge and solve it, yielding to the
  // thread's other visitors between steps. `field` becomes the join body's ,"pow":{...}.
  net::awaitable<bool> prove_work(std::string* field);
  net::awaitable<bool> wait_poll(Message* m);
  net::awaitable<bool> wait_sse(Message* m);
  net::awaitable<void> after_wait(const Message& m);

  // visit_site.cc: a browser on a protected site behind a proxy.
  net::awaitable<void> run_site();
  net::awaitable<bool> site_get(const std::string& path, bool html, bool cookies,
                                HttpResponse* res);
  net::awaitable<bool> wait_as_page();
  void take_cookie(std::string_view set_cookie);  // into jar_

  // visit_ws.cc
  net::awaitable<void> run_ws();
  // Waits on the socket for ALLOWED, asking CHECK_QUEUE_STATUS every --ws-check seconds as
  // seed 000's page does; the answers double as evidence for the order check.
  net::awaitable<bool> wait_ws(Message* m);

  ThreadCtx& t_;
  const Config& cfg_;
  uint64_t index_;
  size_t moves_ = 0;  // targets given up on (each one's node went away)
  VisitorRecord& r_;
  Conn conn_;
  std::unique_ptr<Conn> http_;
  net::steady_timer timer_;
  bool abandoner_ = false;
  int64_t abandon_at_ = INT64_MAX;
  int64_t stay_us_ = 0;
  std::string user_, ticket_, token_, base_, host_;
  // The key an HTTP visitor's ticket is bound to, as the waiting page binds its own: a join
  // retried on another node after its own went away mid-answer gets the same ticket back.
  std::string key_;
  std::string jar_;  // site: the site's cookies, as a Cookie header
  int64_t last_position_ = -1;
  int last_status_ = 0;  // of the last answer call() read
  bool waiting_ = false;
  bool active_ = false;
  bool held_ = false;
  int64_t held_position_ = 0;
};

}  // namespace anteroom::loadgen
