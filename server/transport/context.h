// What every session shares: the API, the push hub, metrics, options, and the count of open
// connections that enforces --max-connections.
#pragma once

#include <atomic>

#include "server/app/access_log.h"
#include "server/app/api.h"
#include "server/app/dashboard_feed.h"
#include "server/app/metrics.h"
#include "server/app/options.h"
#include "server/app/push_hub.h"
#include "server/transport/address_counts.h"
#include "server/transport/trusted_proxies.h"

namespace anteroom {

struct ServerContext {
  ServerContext(const Options& o, Api& a, PushHub& h, Metrics& m)
      : options(o), api(a), hub(h), metrics(m) {}

  const Options& options;
  Api& api;
  PushHub& hub;
  Metrics& metrics;
  // Open connections of every kind; the listener refuses past options.max_connections.
  // Relaxed: a count, ordering nothing.
  std::atomic<int64_t> connections{0};
  std::atomic<bool> stopping{false};  // lone flag: relaxed
  std::atomic<bool> draining{false};  // answers close their connection; lone flag: relaxed
  AddressCounts addresses;            // open connections per client address
  AccessLog* access_log = nullptr;    // --access-log; set before serving, null when off
  const TrustedProxies proxies{options.trusted_proxies};
  const DashboardFeed* dashboard = nullptr;  // set by the server before it starts
};

// Held by a session for as long as its connection is open, moved along when an HTTP
// session becomes an SSE or WebSocket stream.
class ConnectionSlot {
 public:
  // The connection was counted in ctx.connections and for `address` (ctx.addresses).
  ConnectionSlot(ServerContext& ctx, ConnKind kind, const AddressKey& address)
      : ctx_(&ctx), kind_(kind), address_(address) {
    ctx.metrics.opened(kind);
  }
  ConnectionSlot(ConnectionSlot&& o) noexcept : ctx_(o.ctx_), kind_(o.kind_), address_(o.address_) {
    o.ctx_ = nullptr;
  }
  ConnectionSlot& operator=(ConnectionSlot&&) = delete;
  ConnectionSlot(const ConnectionSlot&) = delete;
  ~ConnectionSlot() {
    if (ctx_ == nullptr) return;
    ctx_->metrics.closed(kind_);
    ctx_->connections.fetch_sub(1, std::memory_order_relaxed);
    ctx_->addresses.remove(address_);
  }
  // Counts the same connection as another kind from now on.
  void become(ConnKind kind) {
    ctx_->metrics.closed(kind_);
    kind_ = kind;
    ctx_->metrics.opened(kind_);
  }

 private:
  ServerContext* ctx_;
  ConnKind kind_;
  AddressKey address_;
};

}  // namespace anteroom
