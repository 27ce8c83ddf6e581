// Api: a room's scheduled event (PUT, GET, DELETE /v1/rooms/{room}/event) and its draw
// (GET /v1/rooms/{room}/event/draw); docs/policies.md.
#include <time.h>

#include <boost/json.hpp>
#include <cstdio>
#include <cstdlib>

#include "engine/fair_draw.h"
#include "server/app/api.h"
#include "server/app/json_text.h"
#include "server/app/room_json.h"
#include "server/app/wait_page.h"

namespace anteroom {
namespace json = boost::json;

namespace {

using Phase = RoomEvent::Phase;

const char* phase_name(Phase p) {
  switch (p) {
    case Phase::kScheduled:
      return "scheduled";
    case Phase::kPrequeue:
      return "prequeue";
    case Phase::kStarted:
      return "started";
    case Phase::kEnded:
      return "ended";
  }
  return "unknown";
}

ApiResponse bad_field(const std::string& field, const std::string& why) {
  return error_response(400, "invalid_field", field + " " + why);
}

// Whether `s` has RFC 3339's shape: "YYYY-MM-DDTHH:MM:SS", optional ".fraction", then "Z"
// or "+HH:MM" / "-HH:MM", every field its digits exactly (strptime alone takes " 1" or "1").
bool rfc3339_shape(std::string_view s) {
  auto digits = [&](size_t at, size_t n) {
    if (at + n > s.size()) return false;
    for (size_t i = at; i < at + n; ++i) {
      if (s[i] < '0' || s[i] > '9') return false;
    }
    return true;
  };
  if (s.size() < 20 || !digits(0, 4) || s[4] != '-' || !digits(5, 2) || s[7] != '-' ||
      !digits(8, 2) || (s[10] != 'T' && s[10] != 't') || !digits(11, 2) || s[13] != ':' ||
      !digits(14, 2) || s[16] != ':' || !digits(17, 2)) {
    return false;
  }
  size_t i = 19;
  if (s[i] == '.') {
    size_t n = 0;
    while (digits(i + 1 + n, 1)) ++n;
    if (n == 0 || n > 9) return false;
    i += 1 + n;
  }
  if (i < s.size() && (s[i] == 'Z' || s[i] == 'z')) return i + 1 == s.size();
  return i + 6 == s.size() && (s[i] == '+' || s[i] == '-') && digits(i + 1, 2) && s[i + 3] == ':' &&
         digits(i + 4, 2);
}

// An RFC 3339 time ("2026-12-01T10:00:00Z", "...T19:00:00.250+09:00") as Unix ms. Dates that
// do not exist (February 30th, a 61st second) are refused, not rolled over.
std::optional<int64_t> parse_time(std::string_view text) {
  if (!rfc3339_shape(text)) return std::nullopt;
  std::string s(text);
  struct tm tm {};
  const char* rest = strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (rest == nullptr || tm.tm_sec > 59) return std::nullopt;
  const struct tm asked = tm;
  int64_t ms = 0;
  if (*rest == '.') {
    int digits = 0;
    for (++rest; *rest >= '0' && *rest <= '9'; ++rest, ++digits) {
      if (digits < 3) ms = ms * 10 + (*rest - '0');
    }
    if (digits == 0) return std::nullopt;
    for (; digits < 3; ++digits) ms *= 10;
  }
  int64_t offset_s = 0;
  if (*rest == 'Z' || *rest == 'z') {
    ++rest;
  } else if ((*rest == '+' || *rest == '-') && std::strlen(rest) == 6 && rest[3] == ':') {
    const int sign = *rest == '-' ? -1 : 1;
    const int h = std::atoi(std::string(rest + 1, 2).c_str());
    const int m = std::atoi(std::string(rest + 4, 2).c_str());
    if (h > 23 || m > 59) return std::nullopt;
    offset_s = int64_t{sign} * (int64_t{h} * 3600 + int64_t{m} * 60);
    rest += 6;
  } else {
    return std::nullopt;
  }
  if (*rest != '\0') return std::nullopt;
  const time_t t = timegm(&tm);  // normalizes tm: a date that does not exist comes back moved
  if (t == static_cast<time_t>(-1) || tm.tm_year < 100 || tm.tm_year > 1100 ||
      tm.tm_mday != asked.tm_mday || tm.tm_mon != asked.tm_mon || tm.tm_hour != asked.tm_hour) {
    return std::nullopt;
  }
  return (static_cast<int64_t>(t) - offset_s) * 1000 + ms;
}

bool read_time(const json::object& o, const char* key, bool required, int64_t* out,
               ApiResponse* err) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr || v->is_null()) {
    if (required) *err = bad_field(key, "is required (an RFC 3339 time)");
    return !required;
  }
  std::optional<int64_t> t;
  if (v->is_string()) t = parse_time(v->as_string());
  if (!t) {
    *err = bad_field(key, "must be an RFC 3339 time such as \"2026-12-01T10:00:00+09:00\"");
    return false;
  }
  *out = *t;
  return true;
}

std::optional<uint32_t> read_u32(const json::object& o, const char* key, bool* ok,
                                 ApiResponse* err) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr || v->is_null()) return std::nullopt;
  if (v->is_uint64() && v->as_uint64() <= UINT32_MAX) return static_cast<uint32_t>(v->as_uint64());
  if (v->is_int64() && v->as_int64() >= 0 && v->as_int64() <= UINT32_MAX) {
    return static_cast<uint32_t>(v->as_int64());
  }
  *ok = false;
  *err = bad_field(key, "must be an integer from 0 to 4294967295");
  return std::nullopt;
}

// The event of a PUT body; nullopt with *err the 400 naming the field.
std::optional<RoomEvent> read_event(const json::object& o, int64_t now_ms, ApiResponse* err) {
  static constexpr const char* kFields[] = {"prequeue_at", "start_at",         "end_at", "shuffle",
                                            "capacity",    "admit_per_second", "mode"};
  for (const auto& kv : o) {
    if (std::find(std::begin(kFields), std::end(kFields), kv.key()) == std::end(kFields)) {
      *err = error_response(400, "invalid_field", "unknown field '" + std::string(kv.key()) + "'");
      return std::nullopt;
    }
  }
  RoomEvent e;
  if (!read_time(o, "prequeue_at", true, &e.prequeue_at_ms, err) ||
      !read_time(o, "start_at", true, &e.start_at_ms, err) ||
      !read_time(o, "end_at", false, &e.end_at_ms, err)) {
    return std::nullopt;
  }
  if (const json::value* v = o.if_contains("shuffle")) {
    if (!v->is_bool()) {
      *err = bad_field("shuffle", "must be true or false");
      return std::nullopt;
    }
    e.shuffle = v->as_bool();
  }
  bool ok = true;
  e.capacity = read_u32(o, "capacity", &ok, err);
  if (ok) e.admit_per_second = read_u32(o, "admit_per_second", &ok, err);
  if (!ok) return std::nullopt;
  if (const json::value* v = o.if_contains("mode"); v != nullptr && !v->is_null()) {
    RoomMode m{};
    if (!v->is_string() || !parse_mode(v->as_string(), &m)) {
      *err = bad_field("mode",
                       "must be one of \"fifo\", \"random\", \"passthrough\", \"reject\", "
                       "\"queue_all\"");
      return std::nullopt;
    }
    e.mode = m;
  }
  if (e.start_at_ms <= now_ms) {
    *err = bad_field("start_at", "is in the past");
    return std::nullopt;
  }
  if (Status st = e.validate(); !st.is_ok()) {
    *err = error_response(400, "invalid_field", st.message());
    return std::nullopt;
  }
  return e;
}

}  // namespace

std::optional<int64_t> parse_rfc3339(std::string_view text) { return parse_time(text); }

std::string rfc3339(int64_t unix_ms) {
  const time_t t = static_cast<time_t>(unix_ms / 1000);
  struct tm tm {};
  gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%03dZ", buf, static_cast<int>(unix_ms % 1000));
  return out;
}

// Whether an If-None-Match header names `etag` (or is "*"): a list of quoted tags, weak
// ones (W/) compared by their tag as RFC 9110 says for GET.
bool etag_matches(std::string_view header, std::string_view etag) {
  while (!header.empty()) {
    const size_t comma = header.find(',');
    std::string_view one = header.substr(0, comma);
    header = comma == std::string_view::npos ? std::string_view{} : header.substr(comma + 1);
    while (!one.empty() && one.front() == ' ') one.remove_prefix(1);
    while (!one.empty() && one.back() == ' ') one.remove_suffix(1);
    if (one.starts_with("W/")) one.remove_prefix(2);
    if (one == "*" || one == etag) return true;
  }
  return false;
}

json::object event_json(std::string_view room, const RoomEvent& e) {
  json::object o;
  o["room"] = room;
  o["prequeue_at"] = rfc3339(e.prequeue_at_ms);
  o["start_at"] = rfc3339(e.start_at_ms);
  o["end_at"] = e.end_at_ms != 0 ? json::value(rfc3339(e.end_at_ms)) : json::value(nullptr);
  o["shuffle"] = e.shuffle;
  o["capacity"] = e.capacity ? json::value(*e.capacity) : json::value(nullptr);
  o["admit_per_second"] =
      e.admit_per_second ? json::value(*e.admit_per_second) : json::value(nullptr);
  o["mode"] = e.mode ? json::value(mode_name(*e.mode)) : json::value(nullptr);
  o["phase"] = phase_name(e.phase);
  o["seed_sha256"] = to_hex(e.seed_sha256.data(), e.seed_sha256.size());
  if (e.shuffle && e.phase >= Phase::kStarted) {
    o["draw"] = "/v1/rooms/" + std::string(room) +
                "/event/draw?commitment=" + to_hex(e.seed_sha256.data(), e.seed_sha256.size());
  }
  return o;
}

// Whether `d` is the draw of the room's event `e` (a draw an earlier event left stands for
// its places, but is not this one's).
bool draw_of(const DrawInfo& d, const RoomEvent& e) {
  return e.exists() && sha256(d.seed.data(), d.seed.size()) == e.seed_sha256;
}

ApiResponse Api::event_route(const ApiRequest& req, std::string_view room) const {
  const std::string_view m = req.method;
  auto info = engine_.room_info(room);
  if (!info.is_ok()) return engine_error(info.status());
  const RoomEvent& now_event = info->config.event;
  if (m == "GET" || m == "HEAD") {
    if (!now_event.exists()) return error_response(404, "no_event", "the room has no event");
    json::object o = event_json(room, now_event);
    // From the start: the commitment to who was in the pre-queue, and how many.
    if (auto d = engine_.draw(room); d.is_ok() && draw_of(d.value(), now_event)) {
      const Digest refs = refs_commitment(d->refs);
      o["refs_sha256"] = to_hex(refs.data(), refs.size());
      o["drawn"] = d->refs.size();
    }
    ApiResponse res;
    res.body = json::serialize(o);
    res.headers.emplace_back("Cache-Control", "no-cache");  // its phase moves on
    return res;
  }
  // PUT and DELETE: the operator's (the route table has checked the key).
  const bool under_way =
      now_event.exists() && now_event.phase != Phase::kEnded &&
      (now_event.phase != Phase::kScheduled || now_ms() >= now_event.prequeue_at_ms);
  RoomConfig c = info->config;
  c.parts = RoomConfig::kEvent;  // a PUT of the room or its page at the same moment stays
  unsigned ok_status = 204;
  if (m == "DELETE") {
    if (!now_event.exists()) return error_response(404, "no_event", "the room has no event");
    c.event = RoomEvent{};
  } else {
    ApiResponse err;
    auto o = parse_object(req.body, &err, false);
    if (!o) return err;
    auto e = read_event(*o, now_ms(), &err);
    if (!e) return err;
    if (under_way) {
      return bad_field("prequeue_at", "cannot change: the room's event is under way (phase " +
                                          std::string(phase_name(now_event.phase)) +
                                          "); DELETE it first");
    }
    e->nonce = random_seed();  // the seed derives from it under the engine's key
    c.event = *e;
    ok_status = now_event.exists() ? 200 : 201;
  }
  return answer_when([&](const Respond& respond) {
    engine_.put_room_async(
        room, c, [this, room = std::string(room), ok_status, respond](const Status& st) {
          if (!st.is_ok()) {
            return respond(st.code() == Code::kInvalidArgument
                               ? error_response(400, "invalid_field", st.message())
                               : engine_error(st));
          }
          ApiResponse res;
          res.status = ok_status;
          if (ok_status != 204) {
            auto after = engine_.room_info(room);
            if (!after.is_ok()) return respond(engine_error(after.status()));
            res.body = json::serialize(event_json(room, after->config.event));
          }
          respond(std::move(res));
        });
  });
}

namespace {

// A draw asked for before it exists: a cache in front must not keep the 404 (anyone can ask
// before the start, the commitment being public) and serve it once the draw is there.
ApiResponse not_yet(ApiResponse r) {
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

}  // namespace

ApiResponse Api::draw_route(const ApiRequest& req, std::string_view room) const {
  auto info = engine_.room_info(room);
  if (!info.is_ok()) return engine_error(info.status());
  auto d = engine_.draw(room);
  if (!d.is_ok() && d.code() != Code::kWrongState) return engine_error(d.status());
  // Only the room's event's own draw: a draw an earlier event left (its places stand) must
  // not be shown beside a new event, let alone with its seed.
  const RoomEvent& e = info->config.event;
  if (!d.is_ok() || !draw_of(d.value(), e)) {
    std::lock_guard lock(draw_cache_mu_);
    draw_cache_.erase(std::string(room));
    return not_yet(error_response(404, "not_drawn", "the room's event has not drawn yet"));
  }
  // ?commitment= (the event's link carries it) names the event whose draw is asked for: a
  // CDN keeps each event's draw under its own URL.
  const std::string_view target = req.target;
  const size_t q = target.find('?');
  if (q != std::string_view::npos) {
    auto want = query_param(target.substr(q + 1), "commitment");
    const Digest commit = sha256(d->seed.data(), d->seed.size());
    if (want) {
      for (char& ch : *want) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    }
    if (want && *want != to_hex(commit.data(), commit.size())) {
      return not_yet(
          error_response(404, "not_drawn", "this room's event with that commitment has not drawn"));
    }
  }
  auto [body, etag] = draw_body(room, d.value());
  ApiResponse res;
  // A started event's draw never changes: under the event's own URL (?commitment=, as its
  // link gives it) a cache (a CDN in front) keeps it for good and answers the crowd that
  // checks it at the start. The bare URL names whichever event the room has now, so a cache
  // must ask again each time (the ETag makes that a 304).
  const bool own_url = target.find("commitment=") != std::string_view::npos;
  res.headers.emplace_back("Cache-Control",
                           own_url ? "public, max-age=31536000, immutable" : "public, no-cache");
  res.headers.emplace_back("ETag", etag);
  if (etag_matches(req.if_none_match, etag)) {
    res.status = 304;
    return res;
  }
  res.shared_body = std::move(body);
  return res;
}

// Built once per draw and shared by every answer: a draw of a million is 19 MB of JSON.
std::pair<std::shared_ptr<const std::string>, std::string> Api::draw_body(std::string_view room,
                                                                          const DrawInfo& d) const {
  std::lock_guard lock(draw_cache_mu_);
  auto& cached = draw_cache_[std::string(room)];
  if (cached.body && cached.seed == d.seed && cached.count == d.refs.size()) {
    return {cached.body, cached.etag};
  }
  const Digest commit = sha256(d.seed.data(), d.seed.size());
  auto out = std::make_shared<std::string>();
  out->reserve(200 + 19 * d.refs.size());
  *out += R"({"room":")";
  *out += room;
  *out += R"(","seed":")";
  *out += to_hex(d.seed.data(), d.seed.size());
  *out += R"(","seed_sha256":")";
  *out += to_hex(commit.data(), commit.size());
  const Digest refs = refs_commitment(d.refs);
  *out += R"(","refs_sha256":")";
  *out += to_hex(refs.data(), refs.size());
  *out += R"(","order":[)";
  for (size_t i = 0; i < d.refs.size(); ++i) {
    if (i != 0) *out += ',';
    *out += '"';
    *out += ref_hex(d.refs[i]);
    *out += '"';
  }
  *out += "]}";
  const Digest h = sha256(reinterpret_cast<const uint8_t*>(out->data()), out->size());
  cached = {d.seed, d.refs.size(), std::move(out), '"' + to_hex(h.data(), 16) + '"'};
  return {cached.body, cached.etag};
}

}  // namespace anteroom
