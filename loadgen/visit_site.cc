// The site visitor (site scenario, docs/loadgen.md): a browser on a protected site behind a
// real proxy. It loads the page, following the site's redirects and keeping its cookies (the
// gate's own admission through /v1/enter, or straight in); when the answer is the waiting
// page it waits as the page does (join, poll, ask for the cookie) and loads the page again.
// Then the page's assets, sending no cookie and keeping none (only the room's bypass rule
// can let them through, and a gate admission they got would be a ticket nobody uses), and
// the page's XHR with the cookies.
#include <algorithm>

#include "loadgen/visitor.h"

namespace anteroom::loadgen {

namespace {

// The path and query of a Location (absolute or not).
std::string path_of(std::string_view location) {
  if (size_t scheme = location.find("://"); scheme != std::string_view::npos) {
    const size_t slash = location.find('/', scheme + 3);
    return slash == std::string_view::npos ? "/" : std::string(location.substr(slash));
  }
  return std::string(location);
}

}  // namespace

void Visitor::take_cookie(std::string_view set_cookie) {
  const std::string_view pair = set_cookie.substr(0, set_cookie.find(';'));
  const size_t eq = pair.find('=');
  if (eq == std::string_view::npos || eq == 0) return;
  const std::string name(pair.substr(0, eq + 1));
  // One value per name: a new one replaces the old.
  std::string kept;
  for (size_t i = 0; i < jar_.size();) {
    const size_t end = std::min(jar_.find("; ", i), jar_.size());
    std::string_view c(jar_.data() + i, end - i);
    if (!c.starts_with(name)) {
      if (!kept.empty()) kept += "; ";
      kept += c;
    }
    i = end + 2;
  }
  if (!kept.empty()) kept += "; ";
  kept += pair;
  jar_ = std::move(kept);
}

// One GET on the site as a browser (`html`) or a script, with the cookies or without
// (`cookies`); the answer in *res.
net::awaitable<bool> Visitor::site_get(const std::string& path, bool html, bool cookies,
                                       HttpResponse* res) {
  std::string req = "GET " + path + " HTTP/1.1" + host_;
  req += html ? "Accept: text/html,application/xhtml+xml\r\n" : "Accept: */*\r\n";
  if (cookies && !jar_.empty()) req += "Cookie: " + jar_ + "\r\n";
  req += "\r\n";
  const int64_t sent = now_us();
  if (Fail f = co_await conn_.exchange(req, res)) {
    fail(*f);
    co_return false;
  }
  t_.request(RequestKind::kOrigin, sent, now_us());
  if (cookies && !res->set_cookie.empty()) take_cookie(res->set_cookie);
  co_return true;
}

// Waits as the waiting page does: joins with a key, polls as told, and once admitted asks
// for the cookie.
net::awaitable<bool> Visitor::wait_as_page() {
  r_.saw_page = true;
  Message m;
  const std::string body = R"({"key":")" + key_ + R"("})";
  const std::string join =
      "POST " + base_ + "/tickets HTTP/1.1" + host_ +
      "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\n\r\n" + body;
  int64_t sent = 0;
  if (!co_await call(conn_, join, RequestKind::kJoin, now_us(), 201, &m, &sent)) co_return false;
  joined(m, sent);
  // The positions seen (the truth checks); the admission is counted at the origin.
  if (m.status == "WAITING") note(m, sent);
  while (m.status == "WAITING") {
    co_await sleep_until(timer_, now_us() + std::max<int64_t>(m.poll_after_ms, 200) * 1000);
    const std::string poll = "GET " + base_ + "/tickets/" + ticket_ + " HTTP/1.1" + host_ + "\r\n";
    const int64_t asked = now_us();
    if (!co_await call(conn_, poll, RequestKind::kStatus, asked, 200, &m)) co_return false;
    if (m.status == "WAITING") note(m, asked);
  }
  set_waiting(false);
  if (!holds_slot(m.status)) {
    end(Outcome::kExpired);
    co_return false;
  }
  const std::string cookie =
      "POST " + base_ + "/tickets/" + ticket_ + "/cookie HTTP/1.1" + host_ +
      "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\n\r\n" + body;
  HttpResponse res;
  const int64_t asked = now_us();
  if (Fail f = co_await conn_.exchange(cookie, &res)) {
    fail(*f);
    co_return false;
  }
  if (res.status != 204 || res.set_cookie.empty()) {
    fail(http_error(res));
    co_return false;
  }
  t_.request(RequestKind::kUse, asked, now_us());
  take_cookie(res.set_cookie);
  co_return true;
}

net::awaitable<void> Visitor::run_site() {
  HttpResponse res;
  std::string path = cfg_.site_page;
  for (int hops = 0;; ++hops) {
    if (hops == 12) co_return fail(ErrorKind::kProtocol);  // a redirect loop
    if (!co_await site_get(path, true, true, &res)) co_return;
    if (res.status == 301 || res.status == 302 || res.status == 303 || res.status == 307) {
      path = path_of(res.location);
      if (path.starts_with("/wait")) r_.saw_page = true;
      continue;
    }
    if (res.status == 200 && res.body.find("anteroom-config") != std::string_view::npos) {
      if (!co_await wait_as_page()) co_return;
      path = cfg_.site_page;  // the page sends the visitor back where it came from
      continue;
    }
    if (res.status != 200) co_return fail(http_error(res));
    break;  // the origin's page
  }
  // Admitted: time from arrival to the origin's page.
  r_.allowed_seen_us = now_us();
  t_.rec.admitted(r_.due_us, r_.allowed_seen_us);
  ++t_.rec.visits.admitted;
  t_.live.admitted.fetch_add(1, std::memory_order_relaxed);
  for (const std::string& asset : cfg_.site_assets) {
    if (!co_await site_get(asset, false, false, &res)) co_return;
    if (res.status != 200) co_return fail(http_error(res));
  }
  if (!cfg_.site_xhr.empty()) {
    if (!co_await site_get(cfg_.site_xhr, false, true, &res)) co_return;
    if (res.status != 200) co_return fail(http_error(res));
  }
  end(Outcome::kServed);
}

}  // namespace anteroom::loadgen
