#include "cluster/redis_router.h"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <charconv>

namespace anteroom::cluster {
namespace asio = boost::asio;

uint16_t key_slot(std::string_view key) {
  const auto open = key.find('{');
  if (open != std::string_view::npos) {
    const auto close = key.find('}', open + 1);
    if (close != std::string_view::npos && close > open + 1) {
      key = key.substr(open + 1, close - open - 1);
    }
  }
  uint16_t crc = 0;
  for (char ch : key) {
    crc ^= static_cast<uint16_t>(static_cast<uint8_t>(ch) << 8);
    for (int i = 0; i < 8; ++i) {
      crc = (crc & 0x8000) != 0 ? static_cast<uint16_t>((crc << 1) ^ 0x1021)
                                : static_cast<uint16_t>(crc << 1);
    }
  }
  return crc & 16383;
}

namespace {

// "MOVED 3999 127.0.0.1:6381" -> the endpoint; false if it does not read.
bool parse_redirect(const std::string& error, Endpoint* at) {
  const auto last = error.rfind(' ');
  const auto colon = error.rfind(':');
  if (last == std::string::npos || colon == std::string::npos || colon < last) return false;
  unsigned port = 0;
  const char* end = error.data() + error.size();
  if (std::from_chars(error.data() + colon + 1, end, port).ptr != end || port == 0 ||
      port > 65535) {
    return false;
  }
  at->first = error.substr(last + 1, colon - last - 1);
  at->second = static_cast<uint16_t>(port);
  return !at->first.empty();
}

}  // namespace

RedisRouter::RedisRouter(asio::io_context& io, std::vector<Endpoint> seeds, int64_t timeout_ms,
                         std::shared_ptr<const RedisAccess> access)
    : io_(io), seeds_(std::move(seeds)), timeout_ms_(timeout_ms), access_(std::move(access)) {}

RedisRouter::~RedisRouter() {
  for (auto& s : shards_) {
    if (s.conn) {
      s.conn->on_close = nullptr;
      s.conn->close("router gone");
    }
  }
}

std::shared_ptr<RedisConnection> RedisRouter::open(const Endpoint& at) {
  auto c = std::make_shared<RedisConnection>(io_, at.first, at.second, timeout_ms_, access_);
  std::weak_ptr<RedisRouter> weak = weak_from_this();
  c->on_close = [weak](const std::string& why) {
    if (auto self = weak.lock()) self->close(why);
  };
  return c;
}

void RedisRouter::connect(const std::function<void(const std::string&)>& done) {
  try_seed(0, done);
}

void RedisRouter::try_seed(size_t i, const std::function<void(const std::string&)>& done) {
  if (i >= seeds_.size()) return done("no Redis answered");
  seed_ = seeds_[i];
  auto c = std::make_shared<RedisConnection>(io_, seed_.first, seed_.second, timeout_ms_, access_);
  auto self = shared_from_this();
  c->connect([this, self, c, i, done](const std::string& error) {
    if (closed_) return done("closed");
    if (!error.empty()) {
      if (i + 1 < seeds_.size()) return try_seed(i + 1, done);
      return done(error);
    }
    shards_.clear();
    shards_.push_back({seed_, nullptr});
    std::weak_ptr<RedisRouter> weak = weak_from_this();
    c->on_close = [weak](const std::string& why) {
      if (auto r = weak.lock()) r->close(why);
    };
    shards_[0].conn = c;
    learn_slots(done);
  });
}

// CLUSTER SLOTS: [[from, to, [host, port, id], replicas...], ...]; an error means a single
// Redis (cluster support disabled).
void RedisRouter::learn_slots(const std::function<void(const std::string&)>& done) {
  auto self = shared_from_this();
  shards_[0].conn->command({"CLUSTER", "SLOTS"}, [this, self, done](const RedisReply& r) {
    if (closed_) return done("closed");
    if (r.is_error()) {
      if (r.str.starts_with("connection lost")) return done(r.str);
      clustered_ = false;  // "ERR This instance has cluster support disabled"
      slots_.fill(0);
      for (const auto& cmd : on_each_connection)
        shards_[0].conn->command(cmd, [](const RedisReply&) {});
      return done("");
    }
    clustered_ = true;
    for (const RedisReply& range : r.elements) {
      if (range.elements.size() < 3 || range.elements[2].elements.size() < 2) continue;
      const auto& master = range.elements[2].elements;
      Endpoint at{master[0].str, static_cast<uint16_t>(master[1].integer)};
      if (at.first.empty()) at.first = seed_.first;  // Redis may leave its own host out
      const size_t shard = shard_at(at);
      for (int64_t s = range.elements[0].integer; s <= range.elements[1].integer && s < 16384;
           ++s) {
        slots_[static_cast<size_t>(s)] = static_cast<uint16_t>(shard);
      }
    }
    open_shards(done);
  });
}

size_t RedisRouter::shard_at(const Endpoint& at) {
  for (size_t i = 0; i < shards_.size(); ++i) {
    if (shards_[i].at == at) return i;
  }
  shards_.push_back({at, nullptr});
  return shards_.size() - 1;
}

// Connects to every master not connected yet; done once all answered (or one failed).
void RedisRouter::open_shards(const std::function<void(const std::string&)>& done) {
  auto left = std::make_shared<size_t>(1);
  auto failed = std::make_shared<std::string>();
  auto one = [left, failed, done](const std::string& error) {
    if (!error.empty() && failed->empty()) *failed = error;
    if (--*left == 0) done(*failed);
  };
  for (auto& s : shards_) {
    if (s.conn) {
      for (const auto& cmd : on_each_connection) s.conn->command(cmd, [](const RedisReply&) {});
      continue;
    }
    ++*left;
    s.conn = open(s.at);
    auto conn = s.conn;
    conn->connect([this, conn, one](const std::string& error) {
      if (error.empty()) {
        for (const auto& cmd : on_each_connection) conn->command(cmd, [](const RedisReply&) {});
      }
      one(error);
    });
  }
  one("");
}

void RedisRouter::command(const std::vector<std::string>& args, Handler handler) {
  if (closed_ || shards_.empty()) return handler(RedisReply::error("connection lost: closed"));
  size_t shard = 0;
  if (clustered_) {
    if (args[0] == "WAIT") {
      shard = last_shard_;
    } else if ((args[0] == "EVAL" || args[0] == "EVALSHA") && args.size() > 3 && args[2] != "0") {
      shard = slots_[key_slot(args[3])];
    } else if (args.size() > 1) {
      shard = slots_[key_slot(args[1])];
    }
  }
  last_shard_ = shard;
  send(shard, args, std::move(handler), 0, false);
}

void RedisRouter::send(size_t shard, std::vector<std::string> args, Handler handler, int tries,
                       bool asking) {
  auto conn = shards_[shard].conn;
  if (!conn || !conn->is_open()) {
    // A master met through MOVED or ASK that is not connected yet: learn the topology again.
    close("Redis Cluster topology changed");
    return handler(RedisReply::error("connection lost: Redis Cluster topology changed"));
  }
  if (asking) conn->command({"ASKING"}, [](const RedisReply&) {});
  auto self = shared_from_this();
  conn->command(args, [this, self, args, handler = std::move(handler), tries,
                       shard](const RedisReply& r) mutable {
    if (!r.is_error() || closed_ || tries >= 20) return handler(r);
    Endpoint at;
    if (r.str.starts_with("MOVED ") && parse_redirect(r.str, &at)) {
      uint16_t slot = 0;
      std::from_chars(r.str.data() + 6, r.str.data() + r.str.size(), slot);
      const size_t to = shard_at(at);
      slots_[slot & 16383] = static_cast<uint16_t>(to);
      return send(to, std::move(args), std::move(handler), tries + 1, false);
    }
    if (r.str.starts_with("ASK ") && parse_redirect(r.str, &at)) {
      return send(shard_at(at), std::move(args), std::move(handler), tries + 1, true);
    }
    if (r.str.starts_with("TRYAGAIN") || r.str.starts_with("CLUSTERDOWN")) {
      auto timer = std::make_shared<asio::steady_timer>(io_, std::chrono::milliseconds(100));
      const size_t shard_now = shard;
      return timer->async_wait([this, self, timer, shard_now, args = std::move(args),
                                handler = std::move(handler),
                                tries](boost::system::error_code) mutable {
        if (closed_) return handler(RedisReply::error("connection lost: closed"));
        send(shard_now, std::move(args), std::move(handler), tries + 1, false);
      });
    }
    handler(r);
  });
}

void RedisRouter::close(const std::string& why) {
  if (closed_) return;
  closed_ = true;
  auto shards = std::move(shards_);
  shards_.clear();
  for (auto& s : shards) {
    if (s.conn) {
      s.conn->on_close = nullptr;
      s.conn->close(why);
    }
  }
  if (on_close) {
    auto call = std::move(on_close);
    on_close = nullptr;
    call(why);
  }
}

}  // namespace anteroom::cluster
