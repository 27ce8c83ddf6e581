#include "storage/snapshot.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>

#include "storage/log_records.h"

namespace anteroom {
namespace {

Status write_synced(const std::string& path, const std::string& data) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Status(Code::kUnavailable, "cannot create " + path);
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n <= 0) {
      ::close(fd);
      return Status(Code::kUnavailable, "cannot write " + path);
    }
    done += static_cast<size_t>(n);
  }
  bool ok = ::fdatasync(fd) == 0;
  ::close(fd);
  return ok ? Status::ok() : Status(Code::kUnavailable, "cannot sync " + path);
}

}  // namespace

Snapshotter::Snapshotter(const Engine& engine, LogWriter& log, std::string dir,
                         std::array<uint64_t, 2> id_key, int64_t engine_minus_wall_ms,
                         uint64_t after_bytes)
    : engine_(engine),
      log_(log),
      dir_(std::move(dir)),
      id_key_(id_key),
      engine_minus_wall_ms_(engine_minus_wall_ms),
      after_bytes_(after_bytes),
      last_bytes_(log.file_bytes()) {}

Snapshotter::~Snapshotter() {
  if (background_.joinable()) background_.join();
}

std::string Snapshotter::encode_state(uint64_t* tickets) const {
  using namespace logrec;
  std::string out;
  encode(Meta{kVersion, id_key_}, &out);
  const size_t begin = out.size();
  encode(SnapshotBegin{}, &out);
  for (const RoomInfo& room : engine_.rooms()) {
    auto live = engine_.export_tickets(room.name);
    if (!live.is_ok()) continue;  // deleted meanwhile; its delete record follows
    encode(RoomOp{room.name, 0, op::PutRoom{room.config}}, &out);
    if (auto d = engine_.draw(room.name); d.is_ok()) {
      Change c;
      c.kind = Change::Kind::kDraw;
      c.room = room.name;
      c.draw = &d.value();
      encode_change(c, 0, &out);
    }
    for (const RestoredTicket& t : live.value()) {
      encode(
          RoomOp{room.name, 0, op::Join{t.tag, t.user, t.key_hash, t.seq, t.lane, t.probation_s}},
          &out);
      const int64_t admitted_wall = t.admitted_at_ms - engine_minus_wall_ms_;
      if (holds_slot(t.state)) {
        encode(RoomOp{room.name, admitted_wall, op::Admit{1, 0, {t.seq}}}, &out);
      }
      if (t.state == TicketState::kActive) {
        encode(RoomOp{room.name, admitted_wall, op::Activate{t.seq}}, &out);
      }
      ++*tickets;
    }
    if (const LaneSchedule::Turn turn = engine_.lanes_turn(room.name); turn.taken) {
      encode(RoomOp{room.name, 0, op::LaneTurn{turn.lane, turn.k}}, &out);
    }
  }
  encode(SnapshotEnd{logfmt::crc32c(out.data() + begin, out.size() - begin)}, &out);
  return out;
}

Result<Engine::SnapshotInfo> Snapshotter::snapshot() {
  std::lock_guard lock(mu_);
  Engine::SnapshotInfo info;
  info.bytes_before = log_.file_bytes();
  // Everything journaled from here on is replayed on top of the snapshot. Replay moves
  // states only forward, so a change both captured and logged after `since` does no harm;
  // a join journaled before `since` is published before the export reads past it.
  const uint64_t since = log_.position();
  const std::string out = encode_state(&info.tickets);
  const std::string tmp = dir_ + "/anteroom.log.snapshot";
  if (Status st = write_synced(tmp, out); !st.is_ok()) return st;
  if (Status st = log_.compact(tmp, since); !st.is_ok()) {
    ::unlink(tmp.c_str());
    return st;
  }
  info.bytes_after = log_.file_bytes();
  last_bytes_.store(info.bytes_after, std::memory_order_relaxed);
  return info;
}

void Snapshotter::maybe_start() {
  if (after_bytes_ == 0 || running_.load(std::memory_order_relaxed)) return;
  const uint64_t bytes = log_.file_bytes();
  if (bytes < after_bytes_ || bytes < 2 * last_bytes_.load(std::memory_order_relaxed)) return;
  if (running_.exchange(true, std::memory_order_acq_rel)) return;
  if (background_.joinable()) background_.join();
  background_ = std::thread([this] {
    auto r = snapshot();
    if (!r.is_ok())
      std::fprintf(stderr, "anteroom: snapshot failed: %s\n", r.status().message().c_str());
    running_.store(false, std::memory_order_release);
  });
}

}  // namespace anteroom
