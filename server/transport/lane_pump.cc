#include "server/transport/lane_pump.h"

#include <atomic>
#include <chrono>
#include <mutex>

#include "server/transport/beast.h"

namespace anteroom {

namespace {

using Steady = std::chrono::steady_clock;

// Shared with the engine's wake hook: asleep is announced before the engine is asked when
// next to wake, so that a wake after the look is not lost (the engine's own lock orders the
// two: see Engine::lane_due_ms).
class Alarm final : public LanePump::Wake {
 public:
  Alarm(net::io_context& ioc, net::steady_timer& timer) : ioc_(ioc), timer_(timer) {}
  void ring() override {
    if (!sleeping.load(std::memory_order_seq_cst)) return;
    std::lock_guard lock(mu_);
    if (closed_ || !sleeping.exchange(false)) return;
    net::post(ioc_, [t = &timer_] { t->cancel(); });  // the wait ends early
  }
  void close() {
    std::lock_guard lock(mu_);
    closed_ = true;
  }
  std::atomic<bool> sleeping{false};

 private:
  net::io_context& ioc_;
  net::steady_timer& timer_;  // alive until close(): the pump's
  std::mutex mu_;             // guards closed_, and a ring's post
  bool closed_ = false;
};

}  // namespace

struct LanePump::Impl {
  Impl(net::io_context& c, Engine& e, size_t l, int tick,
       std::function<void(const std::vector<Event>&)> hints)
      : ioc(c),
        engine(e),
        lane(l),
        owner_tick(tick),
        on_events(std::move(hints)),
        timer(c),
        alarm(std::make_shared<Alarm>(c, timer)) {}

  void pass() {
    alarm->sleeping.store(false, std::memory_order_seq_cst);
    engine.run_lane(lane);
    events.clear();
    while (engine.poll_events(events, 4096) != 0) {
      on_events(events);
      events.clear();
    }
    last_pass = Steady::now();
    if (closed.load(std::memory_order_relaxed)) return;
    timer.expires_at(next_wake(last_pass));
    timer.async_wait([this](beast::error_code ec) {
      if (ec && ec != net::error::operation_aborted) return;
      if (closed.load(std::memory_order_relaxed)) return;
      // Cut short by a wake: the pass waits for --owner-tick after the last one.
      const auto batch = last_pass + std::chrono::milliseconds(owner_tick);
      if (ec && Steady::now() < batch) {
        timer.expires_at(batch);
        timer.async_wait([this](beast::error_code again) {
          if ((!again || again == net::error::operation_aborted) &&
              !closed.load(std::memory_order_relaxed)) {
            pass();
          }
        });
        return;
      }
      pass();
    });
  }

  // The lane's next deadline; a wake (the alarm) may come sooner. While one is set, the lane
  // looks again at least each second: the engine's clock may move otherwise than this
  // thread's (a test's manual clock, a host that slept), as the pump before lanes did.
  Steady::time_point next_wake(Steady::time_point now) {
    alarm->sleeping.store(true, std::memory_order_seq_cst);
    const int64_t due = engine.lane_due_ms(lane);  // INT64_MIN for "now" (a woken room)
    const int64_t now_ms = engine.clock().now_ms();
    const int64_t in_ms = due == kNoDeadline ? INT64_MAX : due <= now_ms ? 0 : due - now_ms;
    if (in_ms <= 0) {  // work now: a pass after --owner-tick, which no wake need cut short
      alarm->sleeping.store(false, std::memory_order_seq_cst);
      return now + std::chrono::milliseconds(owner_tick);
    }
    // The engine's ms count whole ms of its clock (CLOCK_MONOTONIC, as steady_clock's): the
    // deadline is in_ms from the start of this ms, not from now.
    const auto into_ms = now.time_since_epoch() % std::chrono::milliseconds(1);
    if (due == kNoDeadline) return now + std::chrono::hours(1);  // until a write rings
    return now - into_ms + std::chrono::milliseconds(std::min<int64_t>(in_ms, 1000));
  }

  net::io_context& ioc;
  Engine& engine;
  const size_t lane;
  const int owner_tick;
  std::function<void(const std::vector<Event>&)> on_events;
  net::steady_timer timer;
  std::shared_ptr<Alarm> alarm;
  std::atomic<bool> closed{false};  // lone flag: relaxed
  std::vector<Event> events;
  Steady::time_point last_pass{};
};

LanePump::LanePump(net::io_context& ioc, Engine& engine, size_t lane, int owner_tick_ms,
                   std::function<void(const std::vector<Event>&)> on_events)
    : impl_(std::make_unique<Impl>(ioc, engine, lane, owner_tick_ms, std::move(on_events))) {}

LanePump::~LanePump() { close(); }

void LanePump::start() {
  net::dispatch(impl_->ioc, [m = impl_.get()] { m->pass(); });
}

std::shared_ptr<LanePump::Wake> LanePump::waker() const { return impl_->alarm; }

void LanePump::close() {
  impl_->closed.store(true, std::memory_order_relaxed);
  impl_->alarm->close();
}

}  // namespace anteroom
