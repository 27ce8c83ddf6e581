// Proposing records and tailing the streams (docs/cluster.md, "Records").
#include <openssl/sha.h>
#include <algorithm>

#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "cluster/lua_scripts.h"
#include "cluster/node.h"
#include "engine/hex.h"

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
const std::string_view kAppend = lua_script("cluster/lua/append.lua");

constexpr size_t kMaxOpsPerRecord = 4096;
constexpr const char* kFetchCount = "1000";

}  // namespace

// Whether stream id `a` ("ms-seq") comes after `b`.
bool stream_id_after(std::string_view a, std::string_view b) {
  auto parse = [](std::string_view s) {
    std::pair<uint64_t, uint64_t> v{0, 0};
    auto dash = s.find('-');
    std::from_chars(s.data(), s.data() + std::min(dash, s.size()), v.first);
    if (dash != std::string_view::npos) {
      std::from_chars(s.data() + dash + 1, s.data() + s.size(), v.second);
    }
    return v;
  };
  return parse(a) > parse(b);
}

std::string room_log_key(std::string_view room) { return log_key(room); }
std::string room_owner_key(std::string_view room) { return owner_key(room); }
std::string room_snap_key(std::string_view room) { return snap_key(room); }
std::string room_n_key(std::string_view room) { return n_key(room); }

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
  append(room, std::move(ops), std::move(done), clock_->now_ms(), Kind::kClient);
}

void Node::append(const std::string& room, std::vector<Op> ops, std::vector<Done> done,
                  int64_t at_ms, Kind kind) {
  const uint64_t id = next_batch_++;
  Record rec{origin_, id, at_ms, std::move(ops)};
  std::string bytes = encode_record(rec);
  Batch& batch = batches_[id];
  batch.room = room;
  batch.done = std::move(done);
  batch.since = Steady::now();
  batch.kind = kind;
  const bool decision = kind == Kind::kDecision;
  cmd_->command(
      {"EVALSHA", append_sha_, "3", n_key(room), log_key(room), owner_key(room), bytes,
       decision ? name_ : std::string(), room, origin_, std::to_string(rooms_[room].last_n)},
      [this, id, room, kind, cmd = cmd_](const RedisReply& reply) {
        if (cmd != cmd_) return;
        if (kind == Kind::kClient) rooms_[room].appending = false;
        if (reply.is_error()) {
          if (reply.str.starts_with("NOSCRIPT")) {  // flushed: load it everywhere again
            cmd_->close("Redis forgot the append script");
          }
          if (reply.str.starts_with("BEHIND")) {
            take_redis_copy(room, reply.str);
            fail_batch(id, Status(Code::kUnavailable,
                                  "this node's copy of the room was ahead of Redis's; it loads "
                                  "Redis's copy: try again"));
          } else if (reply.str.starts_with("LOST")) {
            lost_room(room, rooms_[room], reply.str);
            fail_batch(id, Status(Code::kUnavailable,
                                  "Redis lost this room's records (it restarted "
                                  "without its data); writes wait until an operator "
                                  "re-seeds it: POST /v1/cluster/reseed"));
          } else {
            fail_batch(id,
                       Status(Code::kUnavailable, "the record could not be stored: " + reply.str));
          }
        } else {
          if (auto b = batches_.find(id);
              b != batches_.end() && reply.is_array() && !reply.elements.empty()) {
            b->second.stored = true;
            b->second.stream_id = reply.elements[0].str;
          }
          fetch(room);  // the answer waits for this node to apply its record
        }
        if (kind == Kind::kClient) kick(room);
      });
  if (options_.redis_wait > 0) {
    // Bounded well under the connection's timeout, so that a slow replica fails the write,
    // not the connection.
    cmd_->command(
        {"WAIT", std::to_string(options_.redis_wait), std::to_string(options_.timeout_ms / 8)},
        [this, id, cmd = cmd_](const RedisReply& reply) {
          if (cmd != cmd_) return;
          if (reply.is_error() || reply.integer < static_cast<int64_t>(options_.redis_wait)) {
            fail_batch(id, Status(Code::kUnavailable, "the record reached too few Redis replicas"));
          }
        });
  }
}

// The append script by its SHA1 (EVALSHA): Redis parses it once, not per record. The router
// sends SCRIPT LOAD first on every connection it opens, so every append after it finds it.
void Node::load_scripts() {
  unsigned char digest[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(kAppend.data()), kAppend.size(), digest);
  append_sha_ = to_hex(digest, sizeof digest);
  cmd_->on_each_connection = {{"SCRIPT", "LOAD", std::string(kAppend)}};
}

void Node::fail_batch(uint64_t batch, const Status& why) {
  auto it = batches_.find(batch);
  if (it == batches_.end()) return;
  Batch b = std::move(it->second);
  batches_.erase(it);
  if (b.kind == Kind::kDecision) {
    auto r = rooms_.find(b.room);
    if (r != rooms_.end()) {
      r->second.deciding = false;
      set_due(b.room, r->second, r->second.decide_at_ms);  // its next look, as decided
    }
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

// A room from scratch: its snapshot if there is one, then the records after it. Writes of
// this node that the snapshot already covers can no longer be matched to their records:
// they fail (the visitor retries; a named visitor gets the same ticket back).
void Node::load(const std::string& room) {
  Room& r = rooms_[room];
  if (!up_ || r.loading) return;
  r.loading = true;
  cmd_->command({"GET", snap_key(room)}, [this, room, cmd = cmd_](const RedisReply& reply) {
    if (cmd != cmd_) return;
    Room& rr = rooms_[room];
    rr.loading = false;
    if (reply.is_error()) return release_waiters(rr);
    if (reply.is_nil()) {
      replica_->forget(room);
      rr.last_id = "0-0";
      rr.last_n = 0;
    } else {
      auto snap = decode_snapshot(reply.str);
      Status st = snap.is_ok() ? replica_->load_image(room, snap->image) : snap.status();
      if (!st.is_ok()) {
        fprintf(stderr, "anteroom cluster: room '%s': the snapshot cannot be loaded: %s\n",
                room.c_str(), st.message().c_str());
        rr.broken = true;  // tried again at the next report
        return release_waiters(rr);
      }
      rr.last_id = snap->stream_id;
      rr.last_n = snap->records;
      set_due(room, rr, 0);
      rr.snapshot_n = snap->records;
      std::vector<uint64_t> covered;
      for (auto& [id, b] : batches_) {
        if (b.room == room && b.stored && !stream_id_after(b.stream_id, rr.last_id)) {
          covered.push_back(id);
        }
      }
      for (uint64_t id : covered) {
        fail_batch(id, Status(Code::kUnavailable, "the answer was lost in a reload: try again"));
      }
    }
    rr.broken = false;
    rr.fetching = false;
    fetch(room);
  });
}

void Node::release_waiters(Room& r) {
  auto waiters = std::move(r.caught_up);
  r.caught_up.clear();
  for (auto& w : waiters) w();
}

// Reads the records after the last one applied, in pages, until none are left; then
// whoever waited for this copy to catch up looks again.
void Node::fetch(const std::string& room) {
  Room& r = rooms_[room];
  if (!up_ || r.broken) return release_waiters(r);
  if (r.loading) return;  // the load fetches when done, and releases the waiters then
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
                  if (reply.is_error()) return release_waiters(rr);
                  apply_entries(room, reply);
                  if (rr.loading) return;  // a gap: reloading
                  const bool more = reply.elements.size() >= 1000 || rr.fetch_again;
                  if (more && !rr.broken) return fetch(room);
                  release_waiters(rr);
                });
}

void Node::apply_entries(const std::string& room, const RedisReply& entries) {
  Room& r = rooms_[room];
  for (const RedisReply& e : entries.elements) {
    if (!apply_entry(room, r, e)) return;
  }
}

// Record `n` (stream entry `id`) is at or below the copy's last: applied already, unless
// Redis holds a history of the room the copy is ahead of. Then, unless the room is lost here
// (its copy waits to re-seed Redis), Redis's order is the cluster's: this node takes its copy
// rather than drift apart (false: the room reloads). A lost room's copy reads past it.
bool Node::seen_before(const std::string& room, Room& r, uint64_t n, const std::string& id) {
  if (!stream_id_after(id, r.last_id)) return true;
  if (!r.lost) {
    take_redis_copy(room, "Redis numbers a new record " + std::to_string(n) + ", after " +
                              std::to_string(r.last_n));
    return false;
  }
  r.last_id = id;  // read past it, never again
  if (!r.warned_lost) {
    r.warned_lost = true;
    fprintf(stderr,
            "anteroom cluster: room '%s': Redis numbers a new record %" PRIu64 ", after %" PRIu64
            ": it lost its data (run it with appendonly yes); this node keeps its copy and "
            "ignores them\n",
            room.c_str(), n, r.last_n);
  }
  return true;
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
  if (n <= r.last_n) return seen_before(room, r, n, id);
  if (n != r.last_n + 1) {
    if (!r.reloaded_for_gap) {
      // Records this copy never saw were trimmed away: start again from the snapshot.
      r.reloaded_for_gap = true;
      load(room);
      return false;
    }
    // The snapshot does not cover the gap either: this copy would differ from the others.
    fprintf(stderr,
            "anteroom cluster: room '%s': records %" PRIu64 " to %" PRIu64
            " are missing in Redis; the room is not applied until its snapshot covers them\n",
            room.c_str(), r.last_n + 1, n - 1);
    r.broken = true;
    return false;
  }
  r.reloaded_for_gap = false;
  r.lost = false;  // re-seeded: records come again
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
  if (rec->origin == origin_) {
    it = batches_.find(rec->batch);
    if (it != batches_.end()) mine = &it->second;
  }
  for (size_t i = 0; i < rec->ops.size(); ++i) {
    Applied a = replica_->apply(room, rec->at_ms, rec->ops[i]);
    if (mine != nullptr && i < mine->done.size() && mine->done[i]) mine->done[i](a);
  }
  replica_->publish(room);
  set_due(room, r, 0);  // what the record changed may be due now (a join a free slot takes)
  if (mine != nullptr) {
    if (mine->kind == Kind::kDecision) r.deciding = false;
    batches_.erase(it);
  }
  return true;
}

}  // namespace anteroom::cluster
