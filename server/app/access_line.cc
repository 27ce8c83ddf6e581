// The access log's lines (access_log.h): what a request's record keeps of its target, and
// the record as one line of JSON. The writer that queues and writes the lines is
// access_log.cc.
#include <arpa/inet.h>

#include <charconv>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <string_view>

#include "engine/model.h"
#include "server/app/access_log.h"

namespace anteroom {

namespace {

// What a line may say of a request target: no query; no scheme, user or host of an
// absolute-form target (they may carry a password); and no ticket id, which is the visitor's
// secret (docs/api.md): /v1/rooms/{room}/tickets/{ticket}... reads .../tickets/-/...
// The path, split around the ticket id it holds (`after` empty and `id` false if none).
struct PathParts {
  std::string_view before, after;
  bool id = false;
};

PathParts redacted_path(std::string_view target) {
  std::string_view path = target.substr(0, target.find('?'));
  if (!path.starts_with('/')) {
    const size_t scheme = path.find("://");
    const size_t slash = scheme == std::string_view::npos ? 0 : path.find('/', scheme + 3);
    path = slash == std::string_view::npos || scheme == std::string_view::npos ? std::string_view()
                                                                               : path.substr(slash);
  }
  constexpr std::string_view kRooms = "/v1/rooms/", kTickets = "/tickets/";
  if (path.starts_with(kRooms)) {
    const size_t room_end = path.find('/', kRooms.size());
    if (room_end != std::string_view::npos && path.substr(room_end).starts_with(kTickets)) {
      const size_t id = room_end + kTickets.size();
      const size_t id_end = std::min(path.find('/', id), path.size());
      if (id_end > id) return {path.substr(0, id), path.substr(id_end), true};
    }
  }
  return {path, {}, false};
}

}  // namespace

// Copied straight into the record: no allocation unless the line is long.
void AccessRecord::set_request(std::string_view method, std::string_view target) {
  const PathParts p = redacted_path(target);
  const std::string_view id = p.id ? "-" : "";
  method_size_ = static_cast<uint16_t>(std::min<size_t>(method.size(), UINT16_MAX));
  method = method.substr(0, method_size_);
  const size_t size = method.size() + p.before.size() + id.size() + p.after.size();
  char* out = nullptr;
  if (size <= short_.size()) {
    short_size_ = static_cast<uint8_t>(size);
    long_.clear();
    out = short_.data();
  } else {
    long_.resize(size);
    out = long_.data();
  }
  for (std::string_view piece : {method, p.before, id, p.after}) {
    if (piece.empty()) continue;  // its data() may be null
    std::memcpy(out, piece.data(), piece.size());
    out += piece.size();
  }
}

namespace {

constexpr char kHex[] = "0123456789abcdef";

// The length of the UTF-8 sequence starting at p[0] (shortest form, no surrogates, at most
// U+10FFFF), or 0 if the bytes there are not one.
size_t utf8_length(const unsigned char* p, size_t n) {
  auto cont = [&](size_t i) { return i < n && (p[i] & 0xC0) == 0x80; };
  const unsigned char c = p[0];
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (n < 2 || (c == 0xE0 && p[1] < 0xA0) || (c == 0xED && p[1] > 0x9F)) return 0;
    return cont(1) && cont(2) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (n < 2 || (c == 0xF0 && p[1] < 0x90) || (c == 0xF4 && p[1] > 0x8F)) return 0;
    return cont(1) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

// The room of a route that has one: /v1/rooms/{room}..., /wait/{room}, /v1/gate/{room}.
// None for a request that reached no route: its path is whatever the client sent.
std::string_view room_of(const AccessRecord& r) {
  if (r.route == Route::kNotFound || r.route == Route::kUnrouted || r.route == Route::kListRooms) {
    return {};
  }
  std::string_view p = r.path();
  for (std::string_view prefix : {"/v1/rooms/", "/wait/", "/v1/gate/"}) {
    if (!p.starts_with(prefix)) continue;
    p.remove_prefix(prefix.size());
    const std::string_view room = p.substr(0, p.find('/'));
    return valid_room_name(room) ? room : std::string_view{};
  }
  return {};
}

// "2026-12-01T09:10:11.123456Z"; the part up to the second is kept from the last call.
void append_time(int64_t unix_us, std::string* out) {
  thread_local int64_t cached_second = -1;
  thread_local char prefix[32];
  const int64_t second = unix_us / 1'000'000;
  if (second != cached_second) {
    const time_t t = static_cast<time_t>(second);
    tm utc{};
    gmtime_r(&t, &utc);
    std::strftime(prefix, sizeof prefix, "%Y-%m-%dT%H:%M:%S", &utc);
    cached_second = second;
  }
  out->append(prefix);
  char fraction[] = ".000000Z";
  auto us = static_cast<uint32_t>(unix_us - second * 1'000'000);
  for (int i = 6; i >= 1; --i, us /= 10) fraction[i] = static_cast<char>('0' + us % 10);
  out->append(fraction, sizeof fraction - 1);
}

void append_number(uint64_t n, std::string* out) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, n).ptr;
  out->append(digits, end);
}

}  // namespace

void append_json_string(std::string_view s, std::string* out) {
  out->push_back('"');
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  size_t plain = 0;  // start of the run of bytes copied as they are
  for (size_t i = 0; i < n;) {
    const unsigned char c = p[i];
    if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\') {
      ++i;
      continue;
    }
    if (c >= 0x80) {
      if (const size_t len = utf8_length(p + i, n - i); len != 0) {
        i += len;
        continue;
      }
    }
    out->append(s.substr(plain, i - plain));
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(static_cast<char>(c));
    } else if (c >= 0x80) {
      out->append("\\ufffd");  // not UTF-8
    } else {
      out->append("\\u00");
      out->push_back(kHex[c >> 4]);
      out->push_back(kHex[c & 15]);
    }
    plain = ++i;
  }
  out->append(s.substr(plain));
  out->push_back('"');
}

void append_access_line(const AccessRecord& r, std::string* out) {
  out->append(R"({"time":")");
  append_time(r.unix_us, out);
  out->append(R"(","client":)");
  char address[INET6_ADDRSTRLEN] = "";
  if (r.address_size == 4 || r.address_size == 16) {
    inet_ntop(r.address_size == 4 ? AF_INET : AF_INET6, r.address.data(), address, sizeof address);
    out->push_back('"');
    out->append(address);
    out->push_back('"');
  } else {
    out->append("null");
  }
  out->append(R"(,"method":)");
  append_json_string(r.method(), out);
  out->append(R"(,"path":)");
  append_json_string(r.path(), out);
  out->append(R"(,"status":)");
  append_number(r.status, out);
  out->append(R"(,"bytes":)");
  append_number(r.bytes, out);
  out->append(R"(,"duration_us":)");
  append_number(r.duration_us, out);
  out->append(R"(,"route":")");
  out->append(route_name(r.route));
  out->push_back('"');
  if (const std::string_view room = room_of(r); !room.empty()) {
    out->append(R"(,"room":")");
    out->append(room);  // a valid room name: nothing to escape
    out->push_back('"');
  }
  out->append("}\n");
}

}  // namespace anteroom
