// Room: modes and the scheduled event (docs/policies.md). Owner side unless
// said otherwise: the event's phases, the draw, random picks, the settings an event
// overrides, and the wait estimate's pace.
#include <algorithm>
#include <thread>
#include <unordered_map>

#include "engine/epoch.h"
#include "engine/fair_draw.h"
#include "engine/room.h"

namespace anteroom {
namespace {

using Phase = RoomEvent::Phase;

}  // namespace

Room::~Room() { delete draw_.load(std::memory_order_relaxed); }

// Any thread.
uint64_t Room::position_of(uint64_t seq, bool* hidden) const {
  *hidden = false;
  if (mode() == RoomMode::kRandom) {
    *hidden = true;
    return 0;
  }
  const auto phase = static_cast<Phase>(event_phase_.load(std::memory_order_acquire));
  if (phase == Phase::kPrequeue && seq >= prequeue_seq_.load(std::memory_order_relaxed)) {
    *hidden = true;
    return 0;
  }
  if (const DrawLine* d = draw_.load(std::memory_order_acquire); d != nullptr) {
    if (const uint32_t rank = d->rank_of(seq); rank != DrawLine::kNone) {
      return line_.waiting_before(d->first_seq()) + d->waiting_before(rank) + 1;
    }
  }
  if (has_lanes_.load(std::memory_order_acquire)) {
    if (const Slot* s = line_.find(seq); s != nullptr && !Line::is_sentinel(s)) {
      if (const uint64_t p = lane_position(seq, *s); p != 0) return p;
    }
  }
  return line_.waiting_before(seq) + 1;
}

// Any thread.
std::optional<DrawInfo> Room::draw_info() const {
  const DrawLine* d = draw_.load(std::memory_order_acquire);
  if (d == nullptr) return std::nullopt;
  return DrawInfo{d->seed(), d->first_seq(), d->end_seq(), d->refs()};
}

Phase Room::due_phase(int64_t now_ms) const {
  const RoomEvent& e = base_.event;
  const int64_t wall = wall_ms(now_ms);
  Phase due = Phase::kScheduled;
  if (wall >= e.prequeue_at_ms) due = Phase::kPrequeue;
  if (wall >= e.start_at_ms) due = Phase::kStarted;
  if (e.end_at_ms != 0 && wall >= e.end_at_ms) due = Phase::kEnded;
  return std::max(due, e.phase);
}

bool Room::event_holds_admission(int64_t now_ms) const {
  const auto phase = static_cast<Phase>(event_phase_.load(std::memory_order_relaxed));
  if (phase == Phase::kPrequeue) return true;
  if (phase != Phase::kScheduled) return false;
  // A replica waits for the decider's record of the pre-queue; its time has come already.
  const int64_t prequeue_at = base_.event.prequeue_at_ms;
  return base_.event.exists() && wall_ms(now_ms) >= prequeue_at;
}

void Room::advance_event(int64_t now_ms) {
  if (!base_.event.exists()) return;
  const Phase due = due_phase(now_ms);
  while (base_.event.phase < due)
    enter_phase(static_cast<Phase>(static_cast<int>(base_.event.phase) + 1));
}

void Room::apply_event_phase(int64_t at_ms, Phase phase) {
  applying(at_ms, [&] {
    if (!base_.event.exists()) return 0;
    while (base_.event.phase < phase) {
      enter_phase(static_cast<Phase>(static_cast<int>(base_.event.phase) + 1));
    }
    pass();
    return 0;
  });
}

void Room::enter_phase(Phase phase) {
  RoomConfig c;
  {
    std::lock_guard lock(config_mu_);
    RoomEvent& e = base_.event;
    if (phase == Phase::kPrequeue) e.prequeue_seq = line_.claimed();
    if (phase == Phase::kStarted) e.start_seq = line_.claimed();
    e.phase = phase;
    c = base_;
  }
  if (phase == Phase::kPrequeue) {
    prequeue_seq_.store(c.event.prequeue_seq, std::memory_order_relaxed);
  }
  if (phase == Phase::kStarted) {
    start_seq_.store(c.event.start_seq, std::memory_order_relaxed);
    if (c.event.shuffle) build_draw();
  }
  event_phase_.store(static_cast<uint8_t>(phase), std::memory_order_release);
  apply_settings();
  Change ch = change(Change::Kind::kRoomPut, 0);
  ch.config = &c;
  journal(ch);
  positions_moved_ = true;
}

std::array<uint8_t, 32> Room::seed_of(const RoomEvent& e) const {
  return e.legacy_seed ? e.nonce : event_seed(env_.draw_key, name_, e.nonce);
}

uint64_t Room::pick_number(uint64_t a, uint64_t b) const {
  // The room and its time origin are in the message: rooms of the same shape, or a room made
  // again under its old name, pick differently (every replica knows both alike).
  std::string message = name_;
  message += '\0';
  for (uint64_t v : {static_cast<uint64_t>(epoch_ms_), a, b}) {
    for (int i = 0; i < 8; ++i) message += static_cast<char>(v >> (8 * i));
  }
  const Digest d = hmac_sha256(env_.pick_key.data(), env_.pick_key.size(), message);
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | d[i];
  return v;
}

void Room::build_draw() {
  const RoomEvent& e = base_.event;
  const Seed seed = seed_of(e);
  std::vector<uint64_t> seqs, refs;
  for (uint64_t seq = e.prequeue_seq; seq < e.start_seq; ++seq) {
    // A join claims its place, is journaled, then published: wait out that moment (a
    // replica's joins are all published).
    const Slot* s = nullptr;
    uint8_t packed = 0;
    while ((s = line_.find(seq)) != nullptr && !Line::is_sentinel(s) &&
           (packed = load_state(*s)) == 0) {
      std::this_thread::yield();
    }
    if (s == nullptr || Line::is_sentinel(s) || state_of(packed) != TicketState::kWaiting) continue;
    const TicketId id = env_.codec.encode(seq, Tag{s->tag[0], s->tag[1], s->tag[2]});
    seqs.push_back(seq);
    refs.push_back(ticket_ref(id_view(id)));
  }
  const std::vector<uint32_t> order = draw_order(seed, refs);
  std::vector<uint64_t> drawn_seqs(order.size()), drawn_refs(order.size());
  for (size_t k = 0; k < order.size(); ++k) {
    drawn_seqs[k] = seqs[order[k]];
    drawn_refs[k] = refs[order[k]];
  }
  auto* d = new DrawLine(e.prequeue_seq, e.start_seq, std::move(drawn_seqs), drawn_refs, seed);
  if (DrawLine* old = draw_.exchange(d, std::memory_order_acq_rel)) epoch::retire(old);
  const DrawInfo info{seed, e.prequeue_seq, e.start_seq, std::move(drawn_refs)};
  Change ch = change(Change::Kind::kDraw, 0);
  ch.draw = &info;
  journal(ch);
}

void Room::restore_draw(const DrawInfo& draw) {
  with_owner([&] {
    if (draw.end_seq < draw.first_seq || draw.end_seq > line_.claimed()) return 0;  // not ours
    std::unordered_map<uint64_t, uint64_t> seq_of;  // ref -> seq of the live tickets drawn
    for (uint64_t seq = draw.first_seq; seq < draw.end_seq; ++seq) {
      const Slot* s = published(seq);
      if (s == nullptr || !is_live(state_of(load_state(*s)))) continue;
      const TicketId id = env_.codec.encode(seq, Tag{s->tag[0], s->tag[1], s->tag[2]});
      seq_of.emplace(ticket_ref(id_view(id)), seq);
    }
    std::vector<uint64_t> seqs(draw.refs.size(), DrawLine::kGone);
    for (size_t k = 0; k < draw.refs.size(); ++k) {
      if (auto it = seq_of.find(draw.refs[k]); it != seq_of.end()) seqs[k] = it->second;
    }
    auto* d = new DrawLine(draw.first_seq, draw.end_seq, seqs, draw.refs, draw.seed);
    uint32_t head = d->size();  // the first rank still WAITING
    for (uint32_t r = 0; r < d->size(); ++r) {
      const Slot* s = seqs[r] == DrawLine::kGone ? nullptr : published(seqs[r]);
      const bool waiting = s != nullptr && state_of(load_state(*s)) == TicketState::kWaiting;
      if (!waiting) d->add_hole(r);
      if (waiting && head == d->size()) head = r;
    }
    d->advance_cursor(head);
    if (DrawLine* old = draw_.exchange(d, std::memory_order_acq_rel)) epoch::retire(old);
    positions_moved_ = true;
    return 0;
  });
}

void Room::apply_settings() {
  RoomConfig c;
  {
    std::lock_guard lock(config_mu_);
    c = base_;
  }
  const RoomEvent& e = c.event;
  if (e.exists() && e.phase == Phase::kStarted) {
    if (e.capacity) c.capacity = *e.capacity;
    if (e.admit_per_second) c.admit_per_second = *e.admit_per_second;
    if (e.mode) c.mode = *e.mode;
  }
  capacity_.store(c.capacity, std::memory_order_relaxed);
  admission_.store(static_cast<uint8_t>(c.admission), std::memory_order_relaxed);
  admit_per_second_.store(c.admit_per_second, std::memory_order_relaxed);
  mode_.store(static_cast<uint8_t>(c.mode), std::memory_order_relaxed);
  tokens_ = std::min<double>(tokens_, c.admit_per_second);
  positions_moved_ = true;  // a mode change shows or hides positions
}

void Room::count_hole(uint64_t seq, Slot& slot) {
  line_.add_hole(seq, slot);
  if (DrawLine* d = draw_.load(std::memory_order_relaxed); d != nullptr) {
    if (const uint32_t rank = d->rank_of(seq); rank != DrawLine::kNone) d->add_hole(rank);
  }
  lane_hole(seq, slot);
}

uint64_t Room::admit_from_draw(uint64_t budget) {
  DrawLine* d = draw_.load(std::memory_order_relaxed);
  const uint32_t now = now_tick();
  uint64_t admitted = 0;
  uint32_t rank = d->cursor();
  for (; rank < d->size(); ++rank) {
    const uint64_t seq = d->seq_at(rank);
    Slot* s = seq == DrawLine::kGone ? nullptr : line_.find(seq);
    if (s == nullptr || Line::is_sentinel(s)) continue;
    uint8_t packed = load_state(*s);
    if (state_of(packed) != TicketState::kWaiting) continue;
    if (abandoned(*s, now)) {
      expire(seq, *s, packed, EndReason::kAbandoned);
      continue;
    }
    if (admitted == budget) break;
    if (admit_one(seq, *s, packed, now)) {
      count_hole(seq, *s);
      ++admitted;
    }
  }
  d->advance_cursor(rank);
  positions_moved_ = true;
  return admitted;
}

// Picks uniformly among the WAITING: a keyed hash of the picks so far (admissions plus
// abandonments, which every replica counts alike) chooses a seq between the cursor and the
// tail until it finds one WAITING; after 64 misses, the n-th WAITING ticket by a count.
uint64_t Room::admit_random(uint64_t budget) {
  const uint32_t now = now_tick();
  uint64_t admitted = 0;
  while (admitted < budget) {
    const uint64_t from = line_.cursor(), end = line_.claimed();
    if (from >= end || line_.waiting() == 0) break;
    const uint64_t pick = admitted_total_.load(std::memory_order_relaxed) + admitted +
                          expired_[3].load(std::memory_order_relaxed);
    uint64_t seq = end;
    Slot* s = nullptr;
    uint8_t packed = 0;
    for (uint64_t attempt = 0; attempt < 64 && s == nullptr; ++attempt) {
      const uint64_t q = from + pick_number(pick, attempt) % (end - from);
      Slot* t = line_.find(q);
      if (t == nullptr || Line::is_sentinel(t)) continue;
      const uint8_t p = load_state(*t);
      if (p != 0 && state_of(p) == TicketState::kWaiting) {
        seq = q;
        s = t;
        packed = p;
      }
    }
    if (s == nullptr) {
      uint64_t count = 0;
      for_each_waiting([&](uint64_t, Slot&, uint8_t) { ++count; });
      if (count == 0) break;
      uint64_t k = pick_number(pick, 64) % count;
      for_each_waiting([&](uint64_t q, Slot& t, uint8_t p) {
        if (k-- == 0) {
          seq = q;
          s = &t;
          packed = p;
        }
      });
      if (s == nullptr) break;
    }
    if (abandoned(*s, now)) {
      expire(seq, *s, packed, EndReason::kAbandoned);
      continue;
    }
    if (admit_one(seq, *s, packed, now)) {
      count_hole(seq, *s);
      ++admitted;
    }
  }
  count_admitted(admitted);
  return admitted;
}

void Room::note_freed(const Slot& s) {
  const uint32_t at =
      std::atomic_ref<const uint32_t>(s.admitted_at).load(std::memory_order_relaxed);
  holds_.record(ticks_since(now_tick(), at) * 100);
}

void Room::publish_pace(int64_t now_ms) {
  PaceInputs in;
  const RoomMode m = mode();
  in.manual =
      admission_.load(std::memory_order_relaxed) == static_cast<uint8_t>(AdmissionMode::kManual);
  in.capacity = capacity_.load(std::memory_order_relaxed);
  in.admit_per_second = admit_per_second_.load(std::memory_order_relaxed);
  in.immediate =
      m == RoomMode::kPassthrough || (!in.manual && in.capacity == 0 && in.admit_per_second == 0);
  in.manual_rate = rate_window_.per_second(now_ms);
  in.in_use = in_use_.load(std::memory_order_relaxed);
  in.holds_ended = holds_.count();
  in.mean_hold_ms = holds_.mean_ms();
  const uint32_t now = tick(now_ms);
  double age_sum = 0;
  size_t n = 0;
  for (uint64_t seq : holders_) {
    if (n == 4096) break;
    const Slot* s = line_.find(seq);
    if (s == nullptr || Line::is_sentinel(s) || !holds_slot(state_of(load_state(*s)))) continue;
    const uint32_t at =
        std::atomic_ref<const uint32_t>(s->admitted_at).load(std::memory_order_relaxed);
    age_sum += static_cast<double>(std::max<int64_t>(0, ticks_since(now, at)) * 100);
    ++n;
  }
  in.mean_age_ms = n == 0 ? 0 : age_sum / static_cast<double>(n);
  const bool unknown = m == RoomMode::kRandom || m == RoomMode::kQueueAll ||
                       m == RoomMode::kReject || event_holds_admission(now_ms);
  pace_.store(unknown ? 0 : line_pace(in), std::memory_order_relaxed);
}

}  // namespace anteroom
