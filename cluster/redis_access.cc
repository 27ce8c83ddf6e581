#include "cluster/redis_access.h"

#include <openssl/ssl.h>

#include <boost/asio/ssl/context.hpp>
#include <fstream>

namespace anteroom::cluster {
namespace ssl = boost::asio::ssl;

namespace {

Status bad(std::string why) { return Status(Code::kInvalidArgument, std::move(why)); }

// OpenSSL's reasons read "no such file" as "system lib"; say first whether the file opens.
Status readable(const char* flag, const std::string& path) {
  std::ifstream in(path);
  if (!in) return bad(std::string(flag) + " " + path + ": cannot be read");
  return Status::ok();
}

}  // namespace

Result<std::shared_ptr<const RedisAccess>> RedisAccess::make(std::string user, std::string password,
                                                             bool tls, const RedisTlsFiles& files) {
  auto access = std::make_shared<RedisAccess>();
  access->user = std::move(user);
  access->password = std::move(password);
  access->tls = tls;
  const bool any_file = !files.ca.empty() || !files.cert.empty() || !files.key.empty();
  if (!tls) {
    if (any_file) return bad("--redis-tls-ca, --redis-tls-cert and --redis-tls-key need rediss://");
    return std::shared_ptr<const RedisAccess>(std::move(access));
  }
  if (files.cert.empty() != files.key.empty()) {
    return bad("--redis-tls-cert and --redis-tls-key go together");
  }
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
  SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION);
  boost::system::error_code ec;
  if (files.ca.empty()) {
    ctx->set_default_verify_paths(ec);
    if (ec) return bad("the system's CA certificates cannot be loaded: " + ec.message());
  } else {
    if (Status st = readable("--redis-tls-ca", files.ca); !st.is_ok()) return st;
    ctx->load_verify_file(files.ca, ec);
    if (ec)
      return bad("--redis-tls-ca " + files.ca + ": not PEM certificates (" + ec.message() + ")");
  }
  if (!files.cert.empty()) {
    if (Status st = readable("--redis-tls-cert", files.cert); !st.is_ok()) return st;
    if (Status st = readable("--redis-tls-key", files.key); !st.is_ok()) return st;
    ctx->use_certificate_chain_file(files.cert, ec);
    if (ec)
      return bad("--redis-tls-cert " + files.cert + ": not a PEM certificate (" + ec.message() +
                 ")");
    ctx->use_private_key_file(files.key, ssl::context::pem, ec);
    if (ec)
      return bad("--redis-tls-key " + files.key + ": not a PEM key of the certificate (" +
                 ec.message() + ")");
  }
  ctx->set_verify_mode(ssl::verify_peer);
  access->tls_context = std::move(ctx);
  return std::shared_ptr<const RedisAccess>(std::move(access));
}

bool redis_access_refused(std::string_view why) {
  return why.find("refused AUTH") != std::string_view::npos ||
         why.find("demands AUTH") != std::string_view::npos ||
         why.find("does not verify") != std::string_view::npos;
}

}  // namespace anteroom::cluster
