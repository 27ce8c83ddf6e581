// Room: lanes (RoomConfig::lanes). Admission takes the lanes' turns (lane_schedule.h), the
// head of each lane in join order; positions count the admissions ahead under the same
// schedule. Rooms without lanes never take lanes_mu_.
//
// How a join lands in its lane. A join in a room with lanes claims its seq and adds it to
// its lane under lanes_mu_, so a lane's seqs come in claim order. A room switching to lanes
// (set_lanes) makes its lanes and stores has_lanes_ under the lock, then reads the tail T;
// a join checks has_lanes_ after its claim (the claim, the store, the read and the check
// are seq_cst, so they fall in one order). A join that claimed before T was read is filled
// in by the switch once it is published (fill_lanes); one that claimed after sees the flag
// and adds itself (the lock keeps it behind the switch's making of the lanes).
#include <array>
#include <thread>

#include "engine/room.h"

namespace anteroom {

bool Room::claim_in_lanes(uint64_t* seq, uint16_t terms) {
  std::unique_lock<std::shared_mutex> lock(lanes_mu_, std::defer_lock);
  const bool first = has_lanes_.load(std::memory_order_seq_cst);
  if (first) lock.lock();
  if (!line_.claim(seq)) return false;
  line_.slot_for_publish(*seq).terms = terms;
  if (!first) {
    if (!has_lanes_.load(std::memory_order_seq_cst)) return true;  // no lanes: the usual case
    lock.lock();
  }
  if (lanes_ != nullptr && *seq >= lanes_from_)
    lanes_->lines[lanes_->lane_of(terms_lane(terms))].add(*seq);
  return true;
}

void Room::set_lanes(const std::vector<uint32_t>& weights) {
  {
    std::unique_lock lock(lanes_mu_);
    if (weights.empty()) {
      lanes_.reset();
      lane_count_.store(0, std::memory_order_relaxed);
      has_lanes_.store(false, std::memory_order_seq_cst);
      return;
    }
    if (lanes_ != nullptr && lanes_->lines.size() == weights.size()) {
      if (lanes_->schedule.weights() != weights) {  // new weights: the schedule starts again
        lanes_->schedule = LaneSchedule(weights);
        lanes_->last = {};
      }
      return;
    }
    lanes_ = std::make_unique<Lanes>(weights);  // new lanes, or another number of them
    lane_count_.store(static_cast<uint8_t>(weights.size()), std::memory_order_relaxed);
    has_lanes_.store(true, std::memory_order_seq_cst);
    lanes_from_ = line_.claimed_seq_cst();
  }
  fill_lanes(lanes_from_);
}

void Room::fill_lanes(uint64_t end) {
  // Joins claimed before `end` publish without the lanes: wait for them (a claim is
  // followed by its publish at once; none of it waits for this room's owner).
  const uint64_t from = line_.cursor();
  for (uint64_t seq = from; seq < end; ++seq) {
    // No segment yet: the join that claimed the seq is about to make it.
    for (const Slot* s = line_.find(seq);
         s == nullptr || (!Line::is_sentinel(s) && load_state(*s) == 0); s = line_.find(seq)) {
      std::this_thread::yield();
    }
  }
  std::unique_lock lock(lanes_mu_);
  if (lanes_ == nullptr) return;
  std::vector<std::vector<uint64_t>> waiting(lanes_->lines.size());
  for (uint64_t seq = from; seq < end; ++seq) {
    const Slot* s = line_.find(seq);
    if (s == nullptr || Line::is_sentinel(s)) continue;
    if (state_of(load_state(*s)) == TicketState::kWaiting) {
      waiting[lanes_->lane_of(terms_lane(s->terms))].push_back(seq);
    }
  }
  for (size_t j = 0; j < waiting.size(); ++j) lanes_->lines[j].add_front(waiting[j]);
  positions_moved_ = true;
}

bool Room::lane_head(Lanes& lanes, uint32_t j, uint32_t now, uint64_t* seq, Slot** slot,
                     uint8_t* packed, bool* unpublished) {
  LaneLine& line = lanes.lines[j];
  while (line.cursor() < line.size()) {
    const size_t at = line.cursor();
    *seq = line.seq_at(at);
    Slot* s = line_.find(*seq);
    uint8_t p =
        s == nullptr || Line::is_sentinel(s) ? pack_state(TicketState::kLeft, {}) : load_state(*s);
    if (p == 0) {  // a join not published yet: nothing behind it in its lane goes first
      *unpublished = true;
      return false;
    }
    if (state_of(p) == TicketState::kWaiting && abandoned(*s, now)) {
      expire(*seq, *s, p, EndReason::kAbandoned);
      p = load_state(*s);  // expired by us, or left by its visitor: passed below either way
    }
    if (state_of(p) != TicketState::kWaiting) {
      line.advance_cursor(at + 1);
      continue;
    }
    *slot = s;
    *packed = p;
    return true;
  }
  return false;
}

uint64_t Room::admit_from_lanes(uint64_t budget) {
  const uint32_t now = now_tick();
  uint64_t admitted = 0;
  {
    std::unique_lock lock(lanes_mu_);
    if (lanes_ == nullptr) return 0;
    lanes_held_ = true;
    Lanes& lanes = *lanes_;
    const auto n = static_cast<uint32_t>(lanes.lines.size());
    std::array<uint64_t, LaneSchedule::kMaxLanes> seq{};
    std::array<Slot*, LaneSchedule::kMaxLanes> slot{};
    std::array<uint8_t, LaneSchedule::kMaxLanes> packed{};
    while (admitted < budget) {
      uint32_t ready = 0, pending = 0;
      for (uint32_t j = 0; j < n; ++j) {
        bool unpublished = false;
        if (lane_head(lanes, j, now, &seq[j], &slot[j], &packed[j], &unpublished)) {
          ready |= 1u << j;
        } else if (unpublished) {
          pending |= 1u << j;
        }
      }
      const LaneSchedule::Turn turn = lanes.schedule.next(lanes.last, ready | pending);
      if (!turn.taken || (pending & (1u << turn.lane)) != 0) break;
      const uint32_t j = turn.lane;
      if (!admit_one(seq[j], *slot[j], packed[j], now)) continue;  // it left first: look again
      lanes.last = turn;
      count_hole(seq[j], *slot[j]);
      ++admitted;
    }
    lanes_held_ = false;
  }
  count_admitted(admitted);
  return admitted;
}

void Room::lane_hole(uint64_t seq, const Slot& s) {
  if (!has_lanes_.load(std::memory_order_relaxed)) return;
  std::unique_lock<std::shared_mutex> lock(lanes_mu_, std::defer_lock);
  if (!lanes_held_) lock.lock();
  if (lanes_ == nullptr) return;
  LaneLine& line = lanes_->lines[lanes_->lane_of(terms_lane(s.terms))];
  if (const size_t i = line.index_of(seq); i != LaneLine::kNone) line.add_hole(i);
}

uint64_t Room::lane_position(uint64_t seq, const Slot& s) const {
  std::shared_lock lock(lanes_mu_);
  if (lanes_ == nullptr) return 0;
  const uint32_t lane = lanes_->lane_of(terms_lane(s.terms));
  const LaneLine& line = lanes_->lines[lane];
  const size_t i = line.index_of(seq);
  if (i == LaneLine::kNone || i < line.cursor()) return 0;
  std::array<uint64_t, LaneSchedule::kMaxLanes> waiting{};
  for (size_t j = 0; j < lanes_->lines.size(); ++j) waiting[j] = lanes_->lines[j].waiting();
  return lanes_->schedule.position(lanes_->last, lane, line.waiting_before(i) + 1,
                                   std::span<const uint64_t>(waiting.data(), lanes_->lines.size()));
}

LaneSchedule::Turn Room::lanes_turn() const {
  std::shared_lock lock(lanes_mu_);
  return lanes_ != nullptr ? lanes_->last : LaneSchedule::Turn{};
}

void Room::restore_lanes_turn(const LaneSchedule::Turn& turn) {
  std::unique_lock lock(lanes_mu_);
  if (lanes_ != nullptr && turn.lane < lanes_->lines.size()) lanes_->last = turn;
}

}  // namespace anteroom
