// HTTP/1.1 response heads as bytes, serialized by Beast (never written by hand: a
// hand-counted Content-Length once promised 100 bytes for a 95-byte body). Every answer the
// transport writes goes through here: an HttpSession's, the SSE stream's head, and the
// fixed answers written outside a session (a refused connection, a stream that cannot start).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/transport/beast.h"

namespace anteroom {

struct HeadOptions {
  unsigned status = 200;
  std::string_view content_type;  // empty: no Content-Type (204, a stream's head sets its own)
  // Content-Length: the body's size; absent for 204 and for a stream (no length).
  std::optional<size_t> content_length;
  const std::vector<std::pair<std::string, std::string>>* headers = nullptr;  // extra fields
  bool keep_alive = true;
  unsigned request_version = 11;  // an HTTP/1.0 client kept alive is told so
};

// Appends the head (status line, fields, the empty line) to *out. Every head has Server,
// Date, and Cache-Control: no-store unless `headers` name a Cache-Control of their own.
void append_response_head(const HeadOptions& h, std::string* out);

// `unix_s` as an HTTP date ("Thu, 03 Dec 2026 18:30:00 GMT"); valid on this thread until
// the next call.
std::string_view http_date(int64_t unix_s);

// Bytes of a fixed answer many are sent (the SSE head, the refusals), built again by
// `build` when the second changes, so that their Date is always the current one.
class PerSecondAnswer {
 public:
  explicit PerSecondAnswer(std::function<std::shared_ptr<const std::string>()> build)
      : build_(std::move(build)) {}
  std::shared_ptr<const std::string> get();                // any thread
  std::shared_ptr<const std::string> get(int64_t unix_s);  // as of that second

 private:
  std::function<std::shared_ptr<const std::string>()> build_;
  std::mutex mu_;
  int64_t built_s_ = -1;
  std::shared_ptr<const std::string> bytes_;
};

// A whole answer (head and body) for writing outside an HttpSession; closes the connection.
std::shared_ptr<const std::string> closing_answer(
    unsigned status, std::string_view content_type, std::string_view body,
    const std::vector<std::pair<std::string, std::string>>& headers = {});

}  // namespace anteroom
