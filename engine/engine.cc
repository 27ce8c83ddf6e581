// The Engine interface's defaults for writes answered when done: at once, a join only once
// it is durable; and RoomService's for a copy with nothing to catch up with.
#include "engine/engine.h"

#include <utility>

namespace anteroom {

void Engine::join_async(std::string_view room, const JoinRequest& request, Then<JoinResult> then) {
  answer_when_durable(join(room, request), std::move(then));
}

void Engine::answer_when_durable(Result<JoinResult> r, Then<JoinResult> then) {
  if (!r.is_ok() || r->durable_at == 0) return then(std::move(r));
  const uint64_t at = r->durable_at;
  when_durable(at, [r = std::move(r), then = std::move(then)](const Status& st) mutable {
    if (!st.is_ok()) {
      return then(Status(Code::kStorageFailed, "the join could not be stored: " + st.message()));
    }
    then(std::move(r));
  });
}

void Engine::leave_async(std::string_view room, std::string_view ticket, Then<TicketView> then) {
  auto call = std::move(then);
  call(leave(room, ticket));
}

void Engine::activate_async(std::string_view room, std::string_view ticket,
                            Then<TicketDetail> then) {
  auto call = std::move(then);
  call(activate(room, ticket));
}

void Engine::admit_async(std::string_view room, uint64_t count, Then<uint64_t> then) {
  auto call = std::move(then);
  call(admit(room, count));
}

void Engine::clear_async(std::string_view room, Then<uint64_t> then) {
  auto call = std::move(then);
  call(clear(room));
}

void Engine::put_room_async(std::string_view room, const RoomConfig& config,
                            std::function<void(Status)> then) {
  auto call = std::move(then);
  call(put_room(room, config));
}

void Engine::delete_room_async(std::string_view room, std::function<void(Status)> then) {
  auto call = std::move(then);
  call(delete_room(room));
}

void Engine::snapshot_async(Then<SnapshotInfo> then) {
  auto call = std::move(then);
  call(snapshot());
}

bool RoomService::when_caught_up(std::string_view room, std::string_view ticket,
                                 std::function<void()> done) {
  static_cast<void>(room);
  static_cast<void>(ticket);
  const std::function<void()> never = std::move(done);  // a lone engine has no other copy
  static_cast<void>(never);
  return false;
}

}  // namespace anteroom
