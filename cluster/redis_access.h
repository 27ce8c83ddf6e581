// How a node gets into its Redis: AUTH (a password, or an ACL user and its password) and
// TLS (the server's certificate checked against a CA and the host name connected to, and
// optionally a client certificate). Every connection a node opens (the router's, one per
// master of a Redis Cluster, and the subscriber) uses the same access.
//
// A connection opened with an access says who it is before anything else: AUTH when a
// password is set, then PING, so that a Redis that wants AUTH from a node without one is
// told apart at once ("demands AUTH") rather than after the first command's time-out.
//
// Thread safety: immutable once made; shared by the connections of one io_context.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "engine/status.h"

namespace boost::asio::ssl {
class context;
}

namespace anteroom::cluster {

struct RedisTlsFiles {
  std::string ca;    // PEM CA certificates; empty: the system's
  std::string cert;  // PEM client certificate chain; empty: none
  std::string key;   // PEM private key of `cert`
};

struct RedisAccess {
  std::string user;      // empty: the default user
  std::string password;  // empty: no AUTH
  bool tls = false;
  std::shared_ptr<boost::asio::ssl::context> tls_context;  // set when tls

  // An access with TLS whose context is built from `files`; kInvalidArgument naming the
  // file that cannot be read or does not fit (never the password).
  static Result<std::shared_ptr<const RedisAccess>> make(std::string user, std::string password,
                                                         bool tls, const RedisTlsFiles& files);
};

// Whether a connection's failure is Redis or its certificate refusing this node (a wrong
// password or user, AUTH demanded, a certificate that does not verify): trying again will
// not help, so a node that is starting gives up at once.
bool redis_access_refused(std::string_view why);

}  // namespace anteroom::cluster
