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
#include "server/transport/lane_pump.h"
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
        push_timer(*contexts[0]) {
    // Every node of a cluster has the same secret, so each accepts the others' challenges.
    api.set_pow_key(hmac_sha256(secret, "anteroom proof-of-work key"));
    api.set_link_key(hmac_sha256(secret, "anteroom gate link key"));
    api.set_dashboard(&dashboard);
    metrics.count_signatures_of(&tokens);
    metrics.read_engine(engine.get());
    ctx.dashboard = &dashboard;
    // Lane i on thread i (mod threads): the lanes' passes run side by side.
    std::vector<std::shared_ptr<LanePump::Wake>> wakes;
    for (size_t lane = 0; lane < engine->lanes(); ++lane) {
      lanes.push_back(std::make_unique<LanePump>(
          *contexts[lane % contexts.size()], *engine, lane, options.owner_tick_ms,
          [this](const std::vector<Event>& found) { on_hints(found); }));
      wakes.push_back(lanes.back()->waker());
    }
    engine->set_wake_hook([wakes = std::move(wakes)](size_t lane) {
      if (lane < wakes.size()) wakes[lane]->ring();
    });
  }
  ~Impl() { close_lanes(); }
  // After this no wake reaches the contexts (a cluster node's thread may still apply records
  // until the engine is gone).
  void close_lanes() {
    for (auto& lane : lanes) lane->close();
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

  // A lane's pass found push hints (on that lane's thread): the hub has them, and the push
  // pump, asleep until the next sample, wakes to flush them at the next --push-interval.
  void on_hints(const std::vector<Event>& found) {
    hub.on_events(found);
    if (!push_waits.exchange(true, std::memory_order_acq_rel)) {
      net::post(*contexts[0], [this] { push_timer.cancel(); });
    }
  }

  // The push pump, on contexts[0]: pushes every --push-interval while hints wait, the
  // dashboards' sample each second; asleep in between. The lanes' pumps do the engine's
  // timed work (LanePump).
  void push() {
    // Hints no lane's pass took yet (a write that woke no room: a room deleted).
    while (engine->poll_events(hints, 4096) != 0) {
      hub.on_events(hints);
      hints.clear();
      push_waits.store(true, std::memory_order_release);
    }
    auto now = std::chrono::steady_clock::now();
    if (now >= next_flush && push_waits.exchange(false, std::memory_order_acq_rel)) {
      hub.flush(*engine);  // hints that come meanwhile wait for the next flush
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
    const bool waits = push_waits.load(std::memory_order_acquire);
    push_timer.expires_at(waits ? std::min(next_sample, next_flush) : next_sample);
    push_timer.async_wait([this](beast::error_code ec) {
      if (!ec || ec == net::error::operation_aborted) push();  // (aborted: hints came)
    });
  }

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
  net::steady_timer push_timer;                  // on contexts[0], like the listener
  std::vector<std::unique_ptr<LanePump>> lanes;  // one per lane of the engine's timed work
  std::unique_ptr<AccessLog> access_log;         // --access-log; opened by start()
  std::atomic<bool> push_waits{false};           // hints the hub has not flushed yet
  std::vector<Event> hints;                      // push()'s
  std::chrono::steady_clock::time_point next_flush{};
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
  net::dispatch(m.push_timer.get_executor(), [&m] { m.push(); });
  for (auto& lane : m.lanes) lane->start();
  for (auto& c : m.contexts) {
    m.threads.emplace_back([ioc = c.get()] {
      auto guard = net::make_work_guard(*ioc);  // keep running while idle
      ioc->run();
    });
  }
  m.started = true;
  return port.value();
}

void Server::drain() {
  impl_->api.set_ready(false);
  impl_->ctx.draining.store(true, std::memory_order_relaxed);
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
  m.close_lanes();
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
