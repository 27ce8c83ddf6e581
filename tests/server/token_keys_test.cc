// ES256 keys on disk (made once in the data dir, mode 0600; given ones and their errors) and
// on a real server: the JWKS, bad tokens refused at verify and the gate, and rotation.
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "server/app/api.h"
#include "server/app/token.h"
#include "tests/server/harness.h"
#include "tests/server/token_helpers.h"

namespace anteroom::testing {
namespace {

class TokenKeyFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("anteroom-token-keys-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    std::filesystem::create_directories(dir_);
    std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  std::filesystem::path dir_;
};

TEST_F(TokenKeyFiles, DataDirKeyIsCreatedOnceWithMode0600) {
  bool created = false;
  auto first = load_token_signer("ES256", dir_.string(), "", "", kSecret, &created);
  ASSERT_TRUE(first.is_ok()) << first.status().message();
  EXPECT_TRUE(created);
  struct stat st {};
  ASSERT_EQ(::stat((dir_ / "token-key.pem").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto again = load_token_signer("ES256", dir_.string(), "", "", kSecret, &created);
  ASSERT_TRUE(again.is_ok());
  EXPECT_FALSE(created);
  EXPECT_EQ(again->kid(), first->kid());
  // What one signs the other verifies: the same key.
  EXPECT_TRUE(again->verify(first->sign(claims(10)), "r", 11));
}

TEST_F(TokenKeyFiles, GivenKeysAndTheirErrors) {
  EcKey key = fresh_key();
  const std::string good = write("good.pem", key.private_pem());
  auto s = load_token_signer("ES256", dir_.string(), good, "", kSecret);
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  EXPECT_EQ(s->kid(), key.kid());
  EXPECT_FALSE(std::filesystem::exists(dir_ / "token-key.pem"));  // a given key: none made

  auto error_of = [&](const std::string& alg, const std::string& k, const std::string& prev) {
    auto r = load_token_signer(alg, dir_.string(), k, prev, kSecret);
    EXPECT_FALSE(r.is_ok()) << alg << " " << k << " " << prev;
    return r.is_ok() ? std::string() : r.status().message();
  };
  EXPECT_NE(error_of("ES256", (dir_ / "missing.pem").string(), "").find("cannot read"),
            std::string::npos);
  EXPECT_NE(error_of("ES256", write("junk.pem", "not a key\n"), "").find("not a PEM"),
            std::string::npos);
  // A P-384 key: the wrong curve, named.
  EVP_PKEY* p384 = EVP_EC_gen("P-384");
  ASSERT_NE(p384, nullptr);
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, p384, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);  // NOLINT(google-runtime-int)
  const std::string p384_path = write("p384.pem", std::string(data, static_cast<size_t>(n)));
  BIO_free(bio);
  EVP_PKEY_free(p384);
  EXPECT_NE(error_of("ES256", p384_path, "").find("secp384r1"), std::string::npos);
  EXPECT_NE(error_of("ES256", good, p384_path).find("--token-key-previous"), std::string::npos);
  // A public key cannot sign.
  EXPECT_NE(error_of("ES256", write("pub.pem", key.public_pem()), "").find("private"),
            std::string::npos);
  EXPECT_NE(error_of("ES256", good, good).find("current key itself"), std::string::npos);
  EXPECT_NE(error_of("HS256", good, "").find("--token-alg ES256"), std::string::npos);
  EXPECT_NE(error_of("RS256", "", "").find("HS256 or ES256"), std::string::npos);
}

// A server signing with ES256: the JWKS, and every refusal as a 401 at verify and the gate.
class Es256Server {
 public:
  explicit Es256Server(TokenSigner tokens)
      : server_(test_options(), kAdminKey, kSecret, std::move(tokens)) {
    auto p = server_.start();
    if (!p.is_ok()) throw std::runtime_error(p.status().message());
    port_ = p.value();
  }
  ~Es256Server() { server_.stop(500); }
  uint16_t port() const { return port_; }

 private:
  Server server_;
  uint16_t port_ = 0;
};

TEST(TokenEs256Http, JwksAndBadTokensAre401AtVerifyAndGate) {
  EcKey key = fresh_key();
  Es256Server server{TokenSigner(key)};
  HttpClient c(server.port());
  Reply jwks = c.request("GET", "/.well-known/jwks.json");
  EXPECT_EQ(jwks.status, 200u);
  EXPECT_EQ(jwks.header("content-type"), "application/jwk-set+json");
  auto keys = boost::json::parse(jwks.body).as_object().at("keys").as_array();
  ASSERT_EQ(keys.size(), 1u);
  EXPECT_EQ(keys[0].as_object().at("kid").as_string(), key.kid());
  EXPECT_EQ(c.request("POST", "/.well-known/jwks.json").status, 405u);

  c.admin("PUT", "/v1/rooms/r", R"({"capacity":5})");
  c.admin("PUT", "/v1/rooms/other", R"({"capacity":5})");
  std::string good =
      field(c.request("POST", "/v1/rooms/r/tickets", R"({"user":"u"})").body, "token");
  ASSERT_FALSE(good.empty());
  EXPECT_EQ(header_of(good).at("alg").as_string(), "ES256");
  std::string elsewhere = field(c.request("POST", "/v1/rooms/other/tickets").body, "token");
  auto p = parts(good);
  auto header = header_of(good);
  auto body = boost::json::parse(*base64url_decode(p[1])).as_object();
  auto with_key = [&](const EcKey& k) {
    return [&k](const std::string& in) { return k.sign(in); };
  };

  auto forged_body = body;
  forged_body["usr"] = "admin";
  std::string forged = forge(header, forged_body, with_key(key));
  forged = parts(forged)[0] + "." + parts(forged)[1] + "." + p[2];  // our signature, other claims
  TokenClaims old;
  old.ticket = field(c.request("POST", "/v1/rooms/r/tickets").body, "ticket");
  old.room = "r";
  old.issued_at = unix_now_s() - 100;
  old.expires_at = unix_now_s() - 10;
  std::string expired = TokenSigner(key).sign(old);
  EcKey other = fresh_key();
  std::string other_key = forge(header, body, with_key(other));
  std::string other_signer = TokenSigner(other).sign(old);
  auto none_header = header;
  none_header["alg"] = "none";
  std::string none = base64url_encode(boost::json::serialize(none_header)) + "." + p[1] + ".";
  auto hs_header = header;
  hs_header["alg"] = "HS256";
  const std::string pub = key.public_pem();
  std::string confusion =
      forge(hs_header, body, [&](const std::string& in) { return hmac_sha256(pub, in); });
  auto unknown_header = header;
  unknown_header["kid"] = other.kid();
  std::string unknown_kid = forge(unknown_header, body, with_key(key));

  for (const std::string& bad :
       {forged, expired, elsewhere, other_key, other_signer, none, confusion, unknown_kid}) {
    Reply v = c.admin("POST", "/v1/rooms/r/verify", R"({"token":")" + bad + "\"}");
    EXPECT_EQ(v.status, 401u) << bad;
    EXPECT_EQ(c.request("GET", "/v1/gate/r", "", {{"Cookie", "anteroom_r=" + bad}}).status, 401u)
        << bad;
  }
  Reply ok = c.admin("POST", "/v1/rooms/r/verify", R"({"token":")" + good + "\"}");
  EXPECT_EQ(ok.status, 200u);
  std::string fresh = field(ok.body, "token");
  EXPECT_EQ(header_of(fresh).at("kid").as_string(), key.kid());
  Reply gate = c.request("GET", "/v1/gate/r", "", {{"Cookie", "anteroom_r=" + fresh}});
  EXPECT_EQ(gate.status, 204u);
}

// A token signed with the previous key counts while --token-key-previous names it, and is
// 401 once it does not.
TEST(TokenEs256Http, PreviousKeyAcceptedWhileRotating) {
  EcKey old_key = fresh_key();
  EcKey new_key = fresh_key();
  for (bool rotating : {true, false}) {
    Es256Server server{rotating ? TokenSigner(new_key, old_key) : TokenSigner(new_key)};
    HttpClient c(server.port());
    c.admin("PUT", "/v1/rooms/r", R"({"capacity":5})");
    TokenClaims t;
    t.ticket = field(c.request("POST", "/v1/rooms/r/tickets").body, "ticket");
    t.room = "r";
    t.issued_at = unix_now_s();
    t.expires_at = unix_now_s() + 60;
    std::string old_token = TokenSigner(old_key).sign(t);
    auto keys = boost::json::parse(c.request("GET", "/.well-known/jwks.json").body)
                    .as_object()
                    .at("keys")
                    .as_array();
    EXPECT_EQ(keys.size(), rotating ? 2u : 1u);
    EXPECT_EQ(c.admin("POST", "/v1/rooms/r/verify", R"({"token":")" + old_token + "\"}").status,
              rotating ? 200u : 401u);
  }
}

}  // namespace
}  // namespace anteroom::testing
