#include "server/transport/server.h"

#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

#include "server/app/declared_rooms.h"
#include "server/app/token.h"
#include "server/transport/beast.h"
#include "server/transport/context.h"
#include "server/transport/listener.h"
#include "server/transport/sessions.h"

namespace anteroom {

struct Server::Impl {
  Impl(Options o, std::string admin_key, const std::string& secret, TokenSigner signer,
       std::unique_ptr<Engine> given)
      : options(std::move(o)),
        engine(given ? std::move(given) : make_sharded_engine()),
        tokens(std::move(signer)),
        api(*engine, tokens, metrics, options, std::move(admin_key), &hub),
        ctx{options, api, hub, metrics},
        contexts(make_contexts(thread_count(options))),
        listener(*contexts[0], ctx, [this]() -> net::io_context& { return next_context(); }),
        pump_timer(*contexts[0]) {
    // Every node of a cluster has the same secret, so each accepts the others' challenges.
    api.set_pow_key(hmac_sha256(secret, "anteroom proof-of-work key"));
    api.set_dashboard(&dashboard);
    metrics.count_signatures_of(&tokens);
    ctx.dashboard = &dashboard;
    engine->set_wake_hook([alarm = alarm, this] {
      if (!alarm->sleeping.load(std::memory_order_seq_cst)) return;
      std::lock_guard lock(alarm->mu);
      if (alarm->closed || !alarm->sleeping.exchange(false)) return;
      net::post(*contexts[0], [this] { pump_timer.cancel(); });  // the wait ends early
    });
  }
  ~Impl() { close_alarm(); }
  // After this no wake reaches the contexts (a cluster node's thread may still apply records
  // until the engine is gone).
  void close_alarm() {
    std::lock_guard lock(alarm->mu);
    alarm->closed = true;
  }

  // One io_context per thread, each told it is single-threaded (concurrency hint 1: no
  // locking in its scheduler, no cross-thread wake-ups). A connection lives on exactly one
  // of them, so its handlers never run concurrently: that context is its strand.
  static std::vector<std::unique_ptr<net::io_context>> make_contexts(unsigned n) {
    std::vector<std::unique_ptr<net::io_context>> v;
    for (unsigned i = 0; i < n; ++i) v.push_back(std::make_unique<net::io_context>(1));
    return v;
  }
  net::io_context& next_context() { return *contexts[next_context_index++ % contexts.size()]; }

  static unsigned thread_count(const Options& o) {
    return o.threads != 0 ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  }

  // Admission, expiry and events when the engine says they are due (Engine::next_due_ms),
  // pushes every --push-interval, the dashboards' sample each second. Between those the
  // pump sleeps; a write that gives the engine work now (its wake hook) ends the sleep, and
  // the pass it calls for runs --owner-tick after the last one, so that a busy room's writes
  // are served together.
  void pump() {
    alarm->sleeping.store(false, std::memory_order_seq_cst);
    engine->run_all();
    events.clear();
    while (engine->poll_events(events, 4096) != 0) {
      hub.on_events(events);
      events.clear();
      push_waits = true;
    }
    auto now = std::chrono::steady_clock::now();
    last_pass = now;
    if (now >= next_flush) {
      hub.flush(*engine);
      push_waits = false;
      next_flush = now + std::chrono::milliseconds(options.push_interval_ms);
    }
    if (now >= next_sample) {  // the dashboards' frame and the rooms' history, each second
      const std::string streams(kDashboardStreams);
      const bool watched = hub.streams_in(streams) != 0;
      dashboard.sample(api.now_ms(), *engine, watched);
      if (watched) hub.broadcast(streams, dashboard.frame());
      next_sample = now + std::chrono::seconds(1);
    }
    if (ctx.stopping.load(std::memory_order_relaxed)) return;
    pump_timer.expires_at(next_wake(now));
    pump_timer.async_wait([this](beast::error_code ec) {
      if (ec && ec != net::error::operation_aborted) return;  // the stop
      // Cut short by a wake: the pass waits for --owner-tick after the last one.
      const auto batch = last_pass + std::chrono::milliseconds(options.owner_tick_ms);
      if (ec && std::chrono::steady_clock::now() < batch) {
        pump_timer.expires_at(batch);
        pump_timer.async_wait([this](beast::error_code again) {
          if (!again || again == net::error::operation_aborted) pump();
        });
        return;
      }
      pump();
    });
  }
  // When the pump wakes next: the engine's next deadline, the next sample, the next flush
  // while a push waits. Asleep is announced before the engine is asked, so that a wake after
  // the look is not lost (the engine's own lock orders the two: see Engine::next_due_ms).
  std::chrono::steady_clock::time_point next_wake(std::chrono::steady_clock::time_point now) {
    auto wake = push_waits ? std::min(next_sample, next_flush) : next_sample;
    alarm->sleeping.store(true, std::memory_order_seq_cst);
    const int64_t due = engine->next_due_ms();  // INT64_MIN for "now" (a woken room)
    const int64_t now_ms = engine->clock().now_ms();
    const int64_t in_ms = due == kNoDeadline ? INT64_MAX : due <= now_ms ? 0 : due - now_ms;
    if (in_ms <= 0) {  // work now: a pass after --owner-tick, which no wake need cut short
      alarm->sleeping.store(false, std::memory_order_seq_cst);
      return std::min(wake, now + std::chrono::milliseconds(options.owner_tick_ms));
    }
    // The engine's ms count whole ms of its clock (CLOCK_MONOTONIC, as steady_clock's): the
    // deadline is in_ms from the start of this ms, not from now.
    const auto into_ms = now.time_since_epoch() % std::chrono::milliseconds(1);
    if (in_ms < 3'600'000) wake = std::min(wake, now - into_ms + std::chrono::milliseconds(in_ms));
    return wake;
  }
  struct Alarm {
    std::atomic<bool> sleeping{false};  // the pump waits for a deadline, a flush or a sample
    std::mutex mu;                      // guards closed, and a wake's post
    bool closed = false;
  };

  Options options;
  std::unique_ptr<Engine> engine;
  TokenSigner tokens;
  Metrics metrics;
  PushHub hub;
  Api api;
  ServerContext ctx;
  std::vector<std::unique_ptr<net::io_context>> contexts;
  size_t next_context_index = 0;  // the listener's handler only (one thread)
  Listener listener;
  std::unique_ptr<Listener> admin_listener;  // --admin-listen
  uint16_t admin_port = 0;
  net::steady_timer pump_timer;           // on contexts[0], like the listener
  std::unique_ptr<AccessLog> access_log;  // --access-log; opened by start()
  std::vector<Event> events;
  bool push_waits = false;  // events the hub has not flushed yet
  // Shared with the engine's wake hook, which may outlive this (a cluster node's thread).
  std::shared_ptr<Alarm> alarm = std::make_shared<Alarm>();
  std::chrono::steady_clock::time_point next_flush{};
  std::chrono::steady_clock::time_point last_pass{};
  std::chrono::steady_clock::time_point next_sample{};
  DashboardFeed dashboard;  // the rooms' last 15 minutes and the dashboards' frame
  std::vector<std::thread> threads;
  std::mutex mu;
  std::condition_variable stopped_cv;
  bool started = false, stopped = false;
};

Server::Server(Options options, std::string admin_key, const std::string& token_secret,
               std::unique_ptr<Engine> engine)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(admin_key), token_secret,
                                   TokenSigner(token_secret), std::move(engine))) {}

Server::Server(Options options, std::string admin_key, const std::string& token_secret,
               TokenSigner tokens, std::unique_ptr<Engine> engine)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(admin_key), token_secret,
                                   std::move(tokens), std::move(engine))) {}

Server::~Server() {
  try {
    stop(0);
  } catch (...) {  // NOLINT(bugprone-empty-catch): nothing useful to do while destroying
  }
}

Engine& Server::engine() { return *impl_->engine; }

uint16_t Server::admin_port() const { return impl_->admin_port; }

Result<uint16_t> Server::start() {
  Impl& m = *impl_;
  // The demo room is created if absent; a recovered one keeps the config it had.
  if (!m.options.demo_room.empty() && !m.engine->room_info(m.options.demo_room).is_ok()) {
    if (Status st = m.engine->put_room(m.options.demo_room, m.options.room); !st.is_ok()) return st;
  }
  // The --config file's rooms: created, or brought to the file's settings, as a PUT would.
  for (const DeclaredRoom& room : m.options.rooms) {
    if (Status st = put_declared_room(*m.engine, m.options.room, room); !st.is_ok()) return st;
  }
  if (!m.options.access_log.empty()) {
    auto log = AccessLog::open(m.options.access_log, m.metrics);
    if (!log.is_ok()) return log.status();
    m.access_log = std::move(log).value();
    m.ctx.access_log = m.access_log.get();
  }
  auto port = m.listener.listen(m.options.host(), m.options.port());
  if (!port.is_ok()) return port.status();
  if (!m.options.admin_listen.empty()) {
    m.admin_listener = std::make_unique<Listener>(
        *m.contexts[0], m.ctx, [&m]() -> net::io_context& { return m.next_context(); }, true);
    auto admin = m.admin_listener->listen(m.options.admin_host(), m.options.admin_port());
    if (!admin.is_ok()) return admin.status();
    m.admin_port = admin.value();
    m.admin_listener->start();
  }
  m.listener.start();
  net::dispatch(m.pump_timer.get_executor(), [&m] { m.pump(); });
  for (auto& c : m.contexts) {
    m.threads.emplace_back([ioc = c.get()] {
      auto guard = net::make_work_guard(*ioc);  // keep running while idle
      ioc->run();
    });
  }
  m.started = true;
  return port.value();
}

void Server::stop(int grace_ms) {
  Impl& m = *impl_;
  {
    std::lock_guard lock(m.mu);
    if (!m.started || m.stopped) return;
    m.stopped = true;
  }
  m.api.set_ready(false);
  m.ctx.stopping.store(true, std::memory_order_relaxed);
  m.close_alarm();
  m.listener.stop();
  if (m.admin_listener) m.admin_listener->stop();
  m.hub.shutdown_all();
  // In-flight requests finish (their responses say Connection: close); idle keep-alive
  // connections end at their idle timeout or when the threads stop below.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(grace_ms);
  while (m.ctx.connections.load(std::memory_order_relaxed) > 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (auto& c : m.contexts) c->stop();
  for (auto& t : m.threads) t.join();
  m.threads.clear();
  if (m.access_log) m.access_log->stop();  // writes every line still queued
  {
    std::lock_guard lock(m.mu);
    m.stopped_cv.notify_all();
  }
}

bool Server::reopen_access_log() {
  const std::unique_ptr<AccessLog>& log = impl_->access_log;  // set by start()
  return log != nullptr && log->reopen();
}

void Server::wait() {
  std::unique_lock lock(impl_->mu);
  impl_->stopped_cv.wait(lock, [this] { return impl_->stopped && impl_->threads.empty(); });
}

}  // namespace anteroom
