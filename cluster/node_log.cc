// Proposing records and tailing the streams (docs/cluster.md, "Records").
#include <algorithm>
#include <charconv>

#include "cluster/node.h"

namespace anteroom::cluster {
namespace {

std::string log_key(std::string_view room) { return "anteroom:{" + std::string(room) + "}:log"; }
std::string n_key(std::string_view room) { return "anteroom:{" + std::string(room) + "}:n"; }
std::string owner_key(std::string_view room) {
  return "anteroom:{" + std::string(room) + "}:owner";
}
std::string snap_key(std::string_view room) { return "anteroom:{" + std::string(room) + "}:snap"; }

// Appends one record: numbers it (the room's counter), adds it to the stream and rings the
// bell. With an owner (a decider's record), only while that node still holds the lease.
constexpr const char* kAppend = R"lua(
if ARGV[2] ~= '' and redis.call('GET', KEYS[3]) ~= ARGV[2] then
  return redis.error_reply('NOTOWNER the lease is held by another node')
end
local n = redis.call('INCR', KEYS[1])
local id = redis.call('XADD', KEYS[2], '*', 'n', n, 'r', ARGV[1])
redis.call('PUBLISH', 'anteroom:bell', ARGV[3])
return {id, n}
)lua";

constexpr size_t kMaxOpsPerRecord = 4096;
constexpr const char* kFetchCount = "1000";

}  // namespace

std::string room_log_key(std::string_view room) { return log_key(room); }
std::string room_owner_key(std::string_view room) { return owner_key(room); }
std::string room_snap_key(std::string_view room) { return snap_key(room); }

void Node::propose(const std::string& room, Op op, Done done) {
  Room& r = rooms_[room];
  r.queue.push_back(std::move(op));
  r.queue_done.push_back(std::move(done));
  kick(room);
}

// One record in flight per room: while it is on its way, joins gather into the next one.
void Node::kick(const std::string& room) {
  Room& r = rooms_[room];
  if (r.appending || r.queue.empty() || !up_) return;
  std::vector<Op> ops;
  std::vector<Done> done;
  if (r.queue.size() <= kMaxOpsPerRecord) {
    ops.swap(r.queue);
    done.swap(r.queue_done);
  } else {
    ops.assign(std::make_move_iterator(r.queue.begin()),
               std::make_move_iterator(r.queue.begin() + kMaxOpsPerRecord));
    done.assign(std::make_move_iterator(r.queue_done.begin()),
                std::make_move_iterator(r.queue_done.begin() + kMaxOpsPerRecord));
    r.queue.erase(r.queue.begin(), r.queue.begin() + kMaxOpsPerRecord);
    r.queue_done.erase(r.queue_done.begin(), r.queue_done.begin() + kMaxOpsPerRecord);
  }
  r.appending = true;
  append(room, std::move(ops), std::move(done), clock_->now_ms(), false);
}

void Node::append(const std::string& room, std::vector<Op> ops, std::vector<Done> done,
                  int64_t at_ms, bool decision) {
  const uint64_t id = next_batch_++;
  Record rec{name_, id, at_ms, std::move(ops)};
  std::string bytes = encode_record(rec);
  batches_[id] = Batch{room, std::move(done), Steady::now(), decision};
  cmd_->command({"EVAL", kAppend, "3", n_key(room), log_key(room), owner_key(room), bytes,
                 decision ? name_ : std::string(), room},
                [this, id, room, decision, cmd = cmd_](const RedisReply& reply) {
                  if (cmd != cmd_) return;
                  if (!decision) {
                    rooms_[room].appending = false;
                  }
                  if (reply.is_error()) {
                    fail_batch(id, Status(Code::kUnavailable,
                                          "the record could not be stored: " + reply.str));
                  } else {
                    fetch(room);  // the answer waits for this node to apply its record
                  }
                  if (!decision) kick(room);
                });
  if (options_.redis_wait > 0) {
    cmd_->command(
        {"WAIT", std::to_string(options_.redis_wait), std::to_string(options_.timeout_ms / 2)},
        [this, id, cmd = cmd_](const RedisReply& reply) {
          if (cmd != cmd_) return;
          if (reply.is_error() || reply.integer < static_cast<int64_t>(options_.redis_wait)) {
            fail_batch(id, Status(Code::kUnavailable, "the record reached too few Redis replicas"));
          }
        });
  }
}

void Node::fail_batch(uint64_t batch, const Status& why) {
  auto it = batches_.find(batch);
  if (it == batches_.end()) return;
  Batch b = std::move(it->second);
  batches_.erase(it);
  if (b.decision) {
    auto r = rooms_.find(b.room);
    if (r != rooms_.end()) r->second.deciding = false;
  }
  const Applied failed{why, {}, {}, 0};
  for (auto& d : b.done) {
    if (d) d(failed);
  }
}

void Node::track(const std::string& room) {
  if (rooms_.contains(room)) return;
  rooms_[room];
  load(room);
}

// A room from scratch: its snapshot if there is one, then the records after it.
void Node::load(const std::string& room) {
  Room& r = rooms_[room];
  if (!up_ || r.loading) return;
  r.loading = true;
  cmd_->command({"GET", snap_key(room)}, [this, room, cmd = cmd_](const RedisReply& reply) {
    if (cmd != cmd_) return;
    Room& rr = rooms_[room];
    rr.loading = false;
    if (reply.is_error()) return;
    if (reply.is_nil()) {
      replica_->forget(room);
      rr.last_id = "0-0";
      rr.last_n = 0;
    } else {
      auto snap = decode_snapshot(reply.str);
      if (!snap.is_ok()) {
        fprintf(stderr, "anteroom cluster: room '%s': %s\n", room.c_str(),
                snap.status().message().c_str());
        return;
      }
      if (Status st = replica_->load_image(room, snap->image); !st.is_ok()) {
        fprintf(stderr, "anteroom cluster: room '%s': snapshot refused: %s\n", room.c_str(),
                st.message().c_str());
        return;
      }
      rr.last_id = snap->stream_id;
      rr.last_n = snap->records;
      rr.snapshot_n = snap->records;
    }
    rr.fetching = false;
    fetch(room);
  });
}

// Reads the records after the last one applied, in pages, until none are left; then
// whoever waited for this copy to catch up looks again.
void Node::fetch(const std::string& room) {
  Room& r = rooms_[room];
  if (!up_ || r.loading) return;
  if (r.fetching) {
    r.fetch_again = true;
    return;
  }
  r.fetching = true;
  r.fetch_again = false;
  cmd_->command({"XRANGE", log_key(room), "(" + r.last_id, "+", "COUNT", kFetchCount},
                [this, room, cmd = cmd_](const RedisReply& reply) {
                  if (cmd != cmd_) return;
                  Room& rr = rooms_[room];
                  rr.fetching = false;
                  if (reply.is_error()) return;
                  apply_entries(room, reply);
                  if (rr.loading) return;  // a gap: reloading
                  const bool more = reply.elements.size() >= 1000 || rr.fetch_again;
                  if (more) return fetch(room);
                  auto waiters = std::move(rr.caught_up);
                  rr.caught_up.clear();
                  for (auto& w : waiters) w();
                });
}

void Node::apply_entries(const std::string& room, const RedisReply& entries) {
  Room& r = rooms_[room];
  for (const RedisReply& e : entries.elements) {
    if (!apply_entry(room, r, e)) return;
  }
}

// One stream entry: [id, ["n", n, "r", record]]. False when the room must reload first.
bool Node::apply_entry(const std::string& room, Room& r, const RedisReply& entry) {
  if (!entry.is_array() || entry.elements.size() != 2 || !entry.elements[1].is_array()) {
    return true;
  }
  const std::string& id = entry.elements[0].str;
  const auto& fields = entry.elements[1].elements;
  uint64_t n = 0;
  const std::string* bytes = nullptr;
  for (size_t i = 0; i + 1 < fields.size(); i += 2) {
    if (fields[i].str == "n") {
      const std::string& s = fields[i + 1].str;
      std::from_chars(s.data(), s.data() + s.size(), n);
    } else if (fields[i].str == "r") {
      bytes = &fields[i + 1].str;
    }
  }
  if (n <= r.last_n) {  // applied already, unless Redis started again without its data
    if (id > r.last_id && !r.warned_lost) {
      r.warned_lost = true;
      fprintf(stderr,
              "anteroom cluster: room '%s': Redis numbers a new record %llu, after %llu: it lost "
              "its data (run it with appendonly yes); this node keeps its copy and ignores them\n",
              room.c_str(), static_cast<unsigned long long>(n),
              static_cast<unsigned long long>(r.last_n));
    }
    return true;
  }
  if (n != r.last_n + 1 && !r.reloaded) {
    // Records this copy never saw were trimmed away: start again from the snapshot.
    r.reloaded = true;
    load(room);
    return false;
  }
  if (n != r.last_n + 1) {
    fprintf(stderr, "anteroom cluster: room '%s': records %llu to %llu are missing in Redis\n",
            room.c_str(), static_cast<unsigned long long>(r.last_n + 1),
            static_cast<unsigned long long>(n - 1));
  }
  r.reloaded = false;
  r.last_n = n;
  r.last_id = id;
  if (bytes == nullptr) return true;
  auto rec = decode_record(*bytes);
  if (!rec.is_ok()) {
    fprintf(stderr, "anteroom cluster: room '%s' record %s: %s\n", room.c_str(), id.c_str(),
            rec.status().message().c_str());
    return true;
  }
  Batch* mine = nullptr;
  std::map<uint64_t, Batch>::iterator it;
  if (rec->origin == name_) {
    it = batches_.find(rec->batch);
    if (it != batches_.end()) mine = &it->second;
  }
  for (size_t i = 0; i < rec->ops.size(); ++i) {
    Applied a = replica_->apply(room, rec->at_ms, rec->ops[i]);
    if (mine != nullptr && i < mine->done.size() && mine->done[i]) mine->done[i](a);
  }
  replica_->publish(room);
  if (mine != nullptr) {
    if (mine->decision) r.deciding = false;
    batches_.erase(it);
  }
  return true;
}

}  // namespace anteroom::cluster
