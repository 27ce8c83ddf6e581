// A node's Redis found through Sentinel (ClusterOptions::sentinel_master): before each
// connection the Sentinels are asked, in order, for the master's address; the first that
// names one is believed. A failover is followed without a subscription: the old master's
// connection is lost (it died) or answers a write READONLY (it was demoted; the connection
// closes, redis_connection.cc), and the reconnection asks the Sentinels again.
#include "cluster/node.h"

namespace anteroom::cluster {

void Node::ask_sentinel(size_t i) {
  std::vector<Endpoint> sentinels{{options_.redis_host, options_.redis_port}};
  sentinels.insert(sentinels.end(), options_.more_redis.begin(), options_.more_redis.end());
  if (i >= sentinels.size()) {
    return lost("no Sentinel named a master " + options_.sentinel_master);
  }
  // The Sentinels take the same TLS and password; one without a password takes AUTH too.
  auto c = std::make_shared<RedisConnection>(io_, sentinels[i].first, sentinels[i].second,
                                             options_.timeout_ms, options_.access);
  sentinel_ = c;
  c->connect([this, c, i](const std::string& error) {
    if (sentinel_ != c || stopping_) return;
    if (!error.empty()) return ask_sentinel(i + 1);
    c->command({"SENTINEL", "get-master-addr-by-name", options_.sentinel_master},
               [this, c, i](const RedisReply& r) {
                 if (sentinel_ != c) return;
                 c->on_close = nullptr;
                 c->close("asked");
                 sentinel_ = nullptr;
                 if (!r.is_array() || r.elements.size() != 2) return ask_sentinel(i + 1);
                 const std::string& port = r.elements[1].str;
                 if (port.empty() || port.size() > 5 ||
                     port.find_first_not_of("0123456789") != std::string::npos ||
                     std::stoul(port) > 65535) {
                   return ask_sentinel(i + 1);
                 }
                 connect_to({{r.elements[0].str, static_cast<uint16_t>(std::stoul(port))}});
               });
  });
}

}  // namespace anteroom::cluster
