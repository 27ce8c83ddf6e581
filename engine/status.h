// Errors as values. The engine never throws across its interface: every call that can fail
// returns a Status or a Result<T>, whose code the server maps onto an HTTP status.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace anteroom {

enum class Code {
  kOk,
  kInvalidArgument,  // a malformed room name, user, config field or ticket id
  kRoomNotFound,
  kTicketNotFound,
  kRoomFull,       // max_waiting reached: the join is refused, nothing changes
  kWrongState,     // e.g. activating a ticket that is still waiting
  kUnavailable,    // the engine cannot take writes now (e.g. a cluster node without Redis)
  kStorageFailed,  // a write could not be made durable (the log failed)
  kRoomClosed,     // the room is in reject mode: joins are refused
};

// Stable snake_case name of a code, used in the HTTP error body.
const char* code_name(Code code);

class Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status ok() { return {}; }

  bool is_ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

// Either a value or a non-ok Status.
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}         // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {}  // NOLINT(google-explicit-constructor)

  bool is_ok() const { return std::holds_alternative<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T& value() & { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  const T* operator->() const { return &std::get<T>(v_); }
  // The error; ok() when a value is held.
  Status status() const { return is_ok() ? Status::ok() : std::get<Status>(v_); }
  Code code() const { return is_ok() ? Code::kOk : std::get<Status>(v_).code(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace anteroom
