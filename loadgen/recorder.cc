#include "loadgen/recorder.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

namespace anteroom::loadgen {

Recorder::Second& Recorder::second_at(int64_t at_us) {
  int64_t s = std::max<int64_t>(0, (at_us - t0_) / 1000000);
  auto i = static_cast<size_t>(std::min<int64_t>(s, int64_t{24} * 3600));
  if (seconds_.size() <= i) seconds_.resize(i + 1);
  return seconds_[i];
}

void Recorder::request(RequestKind kind, int64_t due_us, int64_t done_us) {
  auto lat = static_cast<uint64_t>(std::max<int64_t>(0, done_us - due_us));
  latency_[static_cast<size_t>(kind)].record(lat);
  Second& s = second_at(done_us);
  ++s.requests;
  s.latency.record(lat);
}

void Recorder::error(ErrorKind kind, int64_t at_us) {
  ++errors_[static_cast<size_t>(kind)];
  ++second_at(at_us).errors;
}

void Recorder::admitted(int64_t due_us, int64_t seen_us) {
  tta_.record(static_cast<uint64_t>(std::max<int64_t>(0, seen_us - due_us)));
  ++second_at(seen_us).admitted;
}

void Recorder::merge(const Recorder& o) {
  for (int i = 0; i < kErrorKinds; ++i) errors_[i] += o.errors_[i];
  for (int i = 0; i < kRequestKinds; ++i) latency_[i].merge(o.latency_[i]);
  tta_.merge(o.tta_);
  if (seconds_.size() < o.seconds_.size()) seconds_.resize(o.seconds_.size());
  for (size_t i = 0; i < o.seconds_.size(); ++i) {
    seconds_[i].requests += o.seconds_[i].requests;
    seconds_[i].errors += o.seconds_[i].errors;
    seconds_[i].admitted += o.seconds_[i].admitted;
    seconds_[i].latency.merge(o.seconds_[i].latency);
  }
  visits.planned += o.visits.planned;
  visits.joined += o.visits.joined;
  visits.admitted += o.visits.admitted;
  visits.used += o.visits.used;
  visits.left += o.visits.left;
  visits.abandoned += o.visits.abandoned;
  visits.expired += o.visits.expired;
  visits.unresolved += o.visits.unresolved;
  visits.failed += o.visits.failed;
  visits.moved += o.visits.moved;
  records.insert(records.end(), o.records.begin(), o.records.end());
}

void Recorder::merge_into(Phase* p) const {
  for (int i = 0; i < kErrorKinds; ++i) p->errors[i] += errors_[i];
  for (int i = 0; i < kRequestKinds; ++i) p->latency[i].merge(latency_[i]);
  p->time_to_admission.merge(tta_);
  if (p->seconds.size() < seconds_.size()) p->seconds.resize(seconds_.size());
  for (size_t i = 0; i < seconds_.size(); ++i) {
    p->seconds[i].requests += seconds_[i].requests;
    p->seconds[i].errors += seconds_[i].errors;
    p->seconds[i].admitted += seconds_[i].admitted;
    p->seconds[i].latency.merge(seconds_[i].latency);
  }
  VisitCounts& v = p->visits;
  v.planned += visits.planned;
  v.joined += visits.joined;
  v.admitted += visits.admitted;
  v.used += visits.used;
  v.left += visits.left;
  v.abandoned += visits.abandoned;
  v.expired += visits.expired;
  v.unresolved += visits.unresolved;
  v.failed += visits.failed;
  v.moved += visits.moved;
}

// The bytes between processes of one run: same binary, same machine, so plain fixed-width
// integers in host order, each section counted.
namespace {
class Writer {
 public:
  void u64(uint64_t v) { out_.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void hist(const Histogram& h) {
    auto nz = h.nonzero();
    u64(nz.size());
    for (auto [i, n] : nz) {
      u64(i);
      u64(n);
    }
    u64(h.min());
    u64(h.max());
    u64(h.sum());
  }
  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool u64(uint64_t* v) {
    if (in_.size() < sizeof *v) return ok_ = false;
    std::memcpy(v, in_.data(), sizeof *v);
    in_.remove_prefix(sizeof *v);
    return true;
  }
  bool hist(Histogram* h) {
    uint64_t n = 0;
    if (!u64(&n) || n > Histogram::kBuckets) return ok_ = false;
    for (uint64_t k = 0; k < n; ++k) {
      uint64_t i = 0;
      uint64_t c = 0;
      if (!u64(&i) || !u64(&c)) return false;
      h->add_bucket(static_cast<uint32_t>(i), c);
    }
    uint64_t mn = 0;
    uint64_t mx = 0;
    uint64_t sum = 0;
    if (!u64(&mn) || !u64(&mx) || !u64(&sum)) return false;
    h->set_exact(mn, mx, sum);
    return true;
  }
  bool ok() const { return ok_ && in_.empty(); }
  std::string_view rest() const { return in_; }
  void skip(size_t n) { in_.remove_prefix(std::min(n, in_.size())); }

 private:
  std::string_view in_;
  bool ok_ = true;
};

constexpr uint64_t kMagic = 0x414e54524c47ULL;  // "ANTRLG"
static_assert(std::is_trivially_copyable_v<VisitorRecord>);
}  // namespace

std::string Recorder::encode() const {
  Writer w;
  w.u64(kMagic);
  w.u64(static_cast<uint64_t>(t0_));
  for (uint64_t e : errors_) w.u64(e);
  for (const Histogram& h : latency_) w.hist(h);
  w.hist(tta_);
  w.u64(seconds_.size());
  for (const Second& s : seconds_) {
    w.u64(s.requests);
    w.u64(s.errors);
    w.u64(s.admitted);
    w.hist(s.latency);
  }
  for (uint64_t v :
       {visits.planned, visits.joined, visits.admitted, visits.used, visits.left, visits.abandoned,
        visits.expired, visits.unresolved, visits.failed, visits.moved}) {
    w.u64(v);
  }
  w.u64(records.size());
  w.out_.append(reinterpret_cast<const char*>(records.data()),
                records.size() * sizeof(VisitorRecord));
  return std::move(w.out_);
}

bool Recorder::decode(std::string_view bytes) {
  *this = Recorder();
  Reader r(bytes);
  uint64_t magic = 0;
  uint64_t t0 = 0;
  if (!r.u64(&magic) || magic != kMagic || !r.u64(&t0)) return false;
  t0_ = static_cast<int64_t>(t0);
  for (uint64_t& e : errors_) r.u64(&e);
  for (Histogram& h : latency_) r.hist(&h);
  r.hist(&tta_);
  uint64_t n = 0;
  if (!r.u64(&n) || n > 24 * 3600 + 1) return false;
  seconds_.resize(n);
  for (Second& s : seconds_) {
    r.u64(&s.requests);
    r.u64(&s.errors);
    r.u64(&s.admitted);
    r.hist(&s.latency);
  }
  for (uint64_t* v :
       {&visits.planned, &visits.joined, &visits.admitted, &visits.used, &visits.left,
        &visits.abandoned, &visits.expired, &visits.unresolved, &visits.failed, &visits.moved}) {
    r.u64(v);
  }
  uint64_t count = 0;
  if (!r.u64(&count) || r.rest().size() != count * sizeof(VisitorRecord)) return false;
  records.resize(count);
  std::memcpy(records.data(), r.rest().data(), r.rest().size());
  r.skip(r.rest().size());
  return r.ok();
}

TruthChecks check_truth(std::vector<VisitorRecord> records, bool hold) {
  TruthChecks t;
  for (const VisitorRecord& r : records) {
    if (r.position_grew) ++t.positions_grew;
    bool resolved = r.outcome != Outcome::kPending || r.allowed_seen_us != 0;
    if (!hold && r.seq != kNoSeq && !resolved) ++t.unresolved;
  }
  std::erase_if(records, [](const VisitorRecord& r) { return r.seq == kNoSeq; });
  std::sort(records.begin(), records.end(),
            [](const VisitorRecord& a, const VisitorRecord& b) { return a.seq < b.seq; });
  // In seq order, each visitor against everyone who joined before it (by the server's count):
  //  - join order: someone earlier sent their join only after this one's was answered;
  //  - admission order: someone earlier was still answered WAITING to a request sent after
  //    this one had already been seen ALLOWED.
  int64_t latest_join_sent = 0;
  int64_t latest_waiting = 0;
  for (const VisitorRecord& r : records) {
    if (latest_join_sent > r.join_acked_us && r.join_acked_us != 0) ++t.join_order_violations;
    if (r.allowed_seen_us != 0 && latest_waiting > r.allowed_seen_us) ++t.inversions;
    latest_join_sent = std::max(latest_join_sent, r.join_sent_us);
    latest_waiting = std::max(latest_waiting, r.last_waiting_sent_us);
  }
  return t;
}

}  // namespace anteroom::loadgen
