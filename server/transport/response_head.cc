#include "server/transport/response_head.h"

#include <array>
#include <ctime>
#include <memory_resource>

namespace anteroom {

std::string_view http_date(int64_t unix_s) {
  // Formatted once a second per thread: every answer carries it.
  thread_local int64_t cached_s = -1;
  thread_local std::array<char, 32> text{};
  thread_local size_t size = 0;
  if (unix_s != cached_s) {
    const auto t = static_cast<std::time_t>(unix_s);
    std::tm tm{};
    gmtime_r(&t, &tm);
    size = std::strftime(text.data(), text.size(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
    cached_s = unix_s;
  }
  return {text.data(), size};
}

void append_response_head(const HeadOptions& h, std::string* out) {
  // The fields live in a stack arena: a head costs no heap allocation (it is on every
  // answer's path).
  std::array<std::byte, 2048> arena;
  std::pmr::monotonic_buffer_resource pool(arena.data(), arena.size());
  using Fields = http::basic_fields<std::pmr::polymorphic_allocator<char>>;
  http::response<http::empty_body, Fields> m{std::piecewise_construct, std::make_tuple(),
                                             std::make_tuple(Fields::allocator_type(&pool))};
  m.version(11);
  m.result(h.status);
  m.set(http::field::server, "anteroom");
  m.set(http::field::date, http_date(static_cast<int64_t>(std::time(nullptr))));
  if (!h.content_type.empty()) m.set(http::field::content_type, h.content_type);
  if (h.content_length) m.content_length(*h.content_length);
  if (h.headers != nullptr) {
    for (const auto& [name, value] : *h.headers) m.insert(name, value);
  }
  // Every answer is of one visitor's or operator's moment (a ticket, a token, the room
  // now): no cache keeps it unless its route says otherwise.
  if (m.find(http::field::cache_control) == m.end()) m.set(http::field::cache_control, "no-store");
  m.keep_alive(h.keep_alive);
  if (h.keep_alive && h.request_version == 10) m.set(http::field::connection, "keep-alive");
  http::response_serializer<http::empty_body, Fields> sr(m);
  sr.split(true);
  beast::error_code ec;
  while (!ec && !sr.is_header_done()) {
    sr.next(ec, [&](beast::error_code&, const auto& buffers) {
      for (const auto b : beast::buffers_range_ref(buffers)) {
        out->append(static_cast<const char*>(b.data()), b.size());
      }
      sr.consume(beast::buffer_bytes(buffers));
    });
  }
}

std::shared_ptr<const std::string> PerSecondAnswer::get() {
  return get(static_cast<int64_t>(std::time(nullptr)));
}

std::shared_ptr<const std::string> PerSecondAnswer::get(int64_t now) {
  std::lock_guard lock(mu_);
  if (now != built_s_) {
    bytes_ = build_();
    built_s_ = now;
  }
  return bytes_;
}

std::shared_ptr<const std::string> closing_answer(
    unsigned status, std::string_view content_type, std::string_view body,
    const std::vector<std::pair<std::string, std::string>>& headers) {
  auto out = std::make_shared<std::string>();
  HeadOptions h;
  h.status = status;
  h.content_type = content_type;
  h.content_length = body.size();
  h.headers = &headers;
  h.keep_alive = false;
  append_response_head(h, out.get());
  out->append(body);
  return out;
}

}  // namespace anteroom
