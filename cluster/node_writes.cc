// The cluster node's writes: each becomes a record proposed to the room's stream (node_log.cc
// appends it) and is answered once applied; the synchronous forms wait for that answer.
#include <future>
#include <utility>

#include "cluster/node.h"

namespace anteroom::cluster {
namespace {

TicketView view_of(const TicketDetail& d) { return d.ticket; }

}  // namespace

// ---- Writes: records.

void Node::with_seq(const std::string& room, const std::string& ticket,
                    std::function<void(Result<TicketDetail>)> then) {
  auto d = replica_->describe(room, ticket);
  if (d.is_ok() || d.status().code() != Code::kTicketNotFound || !rooms_.contains(room) || !up_ ||
      !may_be_ahead(room, ticket)) {
    return then(std::move(d));
  }
  Room& r = rooms_[room];
  if (r.caught_up.size() >= kMaxCaughtUpWaiters) return then(std::move(d));
  // As when_caught_up: the next read of the room (the bell, or the one each second of a room
  // someone waits in) answers it.
  r.caught_up.emplace_back(
      [this, room, ticket, then = std::move(then)] { then(replica_->describe(room, ticket)); });
}

void Node::join_async(std::string_view room, const JoinRequest& request, Then<JoinResult> then) {
  if (!request.user.empty() && !valid_user(request.user)) {
    return then(Status(Code::kInvalidArgument, kUserRule));
  }
  op::Join j{random_tag(), std::string(request.user), request.key_hash, std::nullopt,
             request.lane, request.probation_s};
  post([this, room = std::string(room), j = std::move(j), then = std::move(then)]() mutable {
    if (!up_) return then(unreachable());
    if (!replica_->room_info(room).is_ok()) {
      return then(Status(Code::kRoomNotFound, "room '" + room + "' not found"));
    }
    propose(room, std::move(j), [then = std::move(then)](const Applied& a) {
      if (!a.status.is_ok()) return then(a.status);
      if (!a.join) return then(Status(Code::kUnavailable, "no join in the record's answer"));
      then(*a.join);
    });
  });
}

void Node::leave_async(std::string_view room, std::string_view ticket, Then<TicketView> then) {
  post([this, room = std::string(room), ticket = std::string(ticket),
        then = std::move(then)]() mutable {
    with_seq(room, ticket,
             [this, room, then = std::move(then)](const Result<TicketDetail>& d) mutable {
               if (!d.is_ok()) return then(d.status());
               if (!is_live(d->ticket.state)) return then(d->ticket);  // already ended: as it is
               if (!up_) return then(unreachable());
               propose(room, op::Leave{d->ticket.seq}, [then = std::move(then)](const Applied& a) {
                 if (!a.status.is_ok()) return then(a.status);
                 if (!a.ticket)
                   return then(Status(Code::kUnavailable, "no ticket in the record's answer"));
                 then(view_of(*a.ticket));
               });
             });
  });
}

// First use (ALLOWED -> ACTIVE) is a record; a use of an ACTIVE ticket only refreshes its
// session, which the next seen-report carries.
void Node::activate_async(std::string_view room, std::string_view ticket, Then<TicketDetail> then) {
  auto d = replica_->describe(room, ticket);
  if (d.is_ok() && d->ticket.state == TicketState::kActive) {
    mark_seen(room, d->ticket.seq);
    return then(std::move(d));
  }
  post([this, room = std::string(room), ticket = std::string(ticket),
        then = std::move(then)]() mutable {
    with_seq(room, ticket, [this, room, then = std::move(then)](Result<TicketDetail> d2) mutable {
      if (!d2.is_ok()) return then(d2.status());
      if (d2->ticket.state == TicketState::kActive) {
        mark_seen(room, d2->ticket.seq);
        return then(std::move(d2));
      }
      if (d2->ticket.state != TicketState::kAllowed) {
        return then(
            Status(Code::kWrongState, std::string("ticket is ") + state_name(d2->ticket.state)));
      }
      if (!up_) return then(unreachable());
      propose(room, op::Activate{d2->ticket.seq}, [then = std::move(then)](const Applied& a) {
        if (!a.status.is_ok()) return then(a.status);
        if (!a.ticket) return then(Status(Code::kUnavailable, "no ticket in the record's answer"));
        then(*a.ticket);
      });
    });
  });
}

void Node::admit_async(std::string_view room, uint64_t count, Then<uint64_t> then) {
  post([this, room = std::string(room), count, then = std::move(then)]() mutable {
    if (!up_) return then(unreachable());
    if (!replica_->room_info(room).is_ok()) {
      return then(Status(Code::kRoomNotFound, "room '" + room + "' not found"));
    }
    propose(room, op::Admit{count, 0, {}}, [then = std::move(then)](const Applied& a) {
      if (!a.status.is_ok()) return then(a.status);
      then(a.count);
    });
  });
}

void Node::clear_async(std::string_view room, Then<uint64_t> then) {
  post([this, room = std::string(room), then = std::move(then)]() mutable {
    if (!up_) return then(unreachable());
    if (!replica_->room_info(room).is_ok()) {
      return then(Status(Code::kRoomNotFound, "room '" + room + "' not found"));
    }
    propose(room, op::Clear{}, [then = std::move(then)](const Applied& a) {
      if (!a.status.is_ok()) return then(a.status);
      then(a.count);
    });
  });
}

void Node::put_room_async(std::string_view room, const RoomConfig& config,
                          std::function<void(Status)> then) {
  if (!valid_room_name(room)) {
    return then(Status(Code::kInvalidArgument, "invalid room name"));
  }
  if (Status st = config.validate(); !st.is_ok()) return then(st);
  post([this, room = std::string(room), config, then = std::move(then)]() mutable {
    if (!up_) return then(unreachable());
    if (!replica_->room_info(room).is_ok() && replica_->rooms().size() >= max_rooms_) {
      return then(Status(Code::kUnavailable, "the cluster holds its maximum of " +
                                                 std::to_string(max_rooms_) + " rooms"));
    }
    track(room);
    cmd_->command({"SADD", "anteroom:rooms", room}, [](const RedisReply&) {});
    propose(room, op::PutRoom{config},
            [then = std::move(then)](const Applied& a) { then(a.status); });
  });
}

void Node::delete_room_async(std::string_view room, std::function<void(Status)> then) {
  post([this, room = std::string(room), then = std::move(then)]() mutable {
    if (!up_) return then(unreachable());
    if (!replica_->room_info(room).is_ok()) {
      return then(Status(Code::kRoomNotFound, "room '" + room + "' not found"));
    }
    propose(room, op::DeleteRoom{}, [this, room, then = std::move(then)](const Applied& a) {
      if (a.status.is_ok() && up_) {
        cmd_->command({"SREM", "anteroom:rooms", room}, [](const RedisReply&) {});
      }
      then(a.status);
    });
  });
}

// ---- The synchronous writes.

template <typename T>
Result<T> Node::wait(const std::function<void(std::function<void(Result<T>)>)>& start) {
  auto p = std::make_shared<std::promise<Result<T>>>();
  auto f = p->get_future();
  start([p](Result<T> r) { p->set_value(std::move(r)); });
  return f.get();
}

Status Node::put_room(std::string_view room, const RoomConfig& config) {
  auto r = wait<bool>([&](auto done) {
    put_room_async(room, config, [done](const Status& st) {
      if (st.is_ok()) return done(true);
      done(st);
    });
  });
  return r.is_ok() ? Status::ok() : r.status();
}

Status Node::delete_room(std::string_view room) {
  auto r = wait<bool>([&](auto done) {
    delete_room_async(room, [done](const Status& st) {
      if (st.is_ok()) return done(true);
      done(st);
    });
  });
  return r.is_ok() ? Status::ok() : r.status();
}

Result<uint64_t> Node::admit(std::string_view room, uint64_t count) {
  return wait<uint64_t>([&](auto done) { admit_async(room, count, done); });
}
Result<uint64_t> Node::clear(std::string_view room) {
  return wait<uint64_t>([&](auto done) { clear_async(room, done); });
}
Result<JoinResult> Node::join(std::string_view room, const JoinRequest& request) {
  return wait<JoinResult>([&](auto done) { join_async(room, request, done); });
}
Result<TicketView> Node::leave(std::string_view room, std::string_view ticket) {
  return wait<TicketView>([&](auto done) { leave_async(room, ticket, done); });
}
Result<TicketDetail> Node::activate(std::string_view room, std::string_view ticket) {
  return wait<TicketDetail>([&](auto done) { activate_async(room, ticket, done); });
}

Status Node::restore_room(std::string_view, const RoomConfig&, const std::vector<RestoredTicket>&) {
  return Status(Code::kUnavailable, "a cluster node restores rooms from Redis, not from a log");
}

}  // namespace anteroom::cluster
