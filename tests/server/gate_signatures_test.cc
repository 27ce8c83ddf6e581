// What a forged cookie costs the ES256 gate: at most one signature check per request (the
// first cookie whose signature fails ends the search; eight forged cookies cost eight checks
// before), none for the same forgery sent again (failures are remembered), and none for a
// token that says it expired. Counted by anteroom_token_signature_checks_total.
#include <boost/json.hpp>

#include "server/app/api.h"
#include "server/app/token.h"
#include "tests/server/harness.h"

namespace anteroom::testing {
namespace {

class GateSignatures : public ::testing::Test {
 protected:
  void SetUp() override {
    auto key = EcKey::generate();
    ASSERT_TRUE(key.is_ok());
    server_ = std::make_unique<Server>(test_options(), kAdminKey, kSecret,
                                       TokenSigner(std::move(key).value()));
    auto p = server_->start();
    ASSERT_TRUE(p.is_ok());
    port_ = p.value();
    HttpClient c(port_);
    ASSERT_EQ(c.admin("PUT", "/v1/rooms/r", R"({"capacity":5})").status, 201u);
  }
  void TearDown() override { server_->stop(500); }

  uint64_t checks() {
    HttpClient c(port_);
    const std::string m = c.admin("GET", "/metrics").body;
    const std::string key = "\nanteroom_token_signature_checks_total ";
    const size_t at = m.find(key);
    EXPECT_NE(at, std::string::npos) << m.substr(0, 300);
    return at == std::string::npos ? 0 : std::stoull(m.substr(at + key.size()));
  }
  unsigned gate(const std::string& cookies) {
    HttpClient c(port_);
    return c.request("GET", "/v1/gate/r", "", {{"Cookie", cookies}}).status;
  }
  // A token of this server's shape (header, claims) with a signature that is not its own.
  std::string forged(int n, int64_t exp) {
    HttpClient c(port_);
    const std::string real = json_field(c.request("POST", "/v1/rooms/r/tickets").body, "token");
    const std::string header = real.substr(0, real.find('.'));
    const std::string claims =
        base64url_encode(R"({"iss":"anteroom","sub":"forged-)" + std::to_string(n) +
                         R"(","room":"r","exp":)" + std::to_string(exp) + R"(,"iat":1})");
    return header + "." + claims + "." + base64url_encode(std::string(64, static_cast<char>(n)));
  }

  std::unique_ptr<Server> server_;
  uint16_t port_ = 0;
};

TEST_F(GateSignatures, EightForgedCookiesCostOneCheck) {
  const int64_t later = unix_now_s() + 3600;
  std::string cookies;
  for (int i = 1; i <= 8; ++i) cookies += (i > 1 ? "; " : "") + ("anteroom_r=" + forged(i, later));
  const uint64_t before = checks();
  EXPECT_EQ(gate(cookies), 401u);
  EXPECT_EQ(checks() - before, 1u) << "one check per request, whatever the number of cookies";
  EXPECT_EQ(gate(cookies), 401u);
  EXPECT_EQ(checks() - before, 1u) << "a forgery sent again is remembered";
}

TEST_F(GateSignatures, ATokenThatSaysItExpiredCostsNoCheck) {
  const std::string stale = forged(9, unix_now_s() - 10);
  const uint64_t before = checks();
  EXPECT_EQ(gate("anteroom_r=" + stale), 401u);
  EXPECT_EQ(checks() - before, 0u);
}

// A stale cookie before a good one still lets the visitor in: only a failed signature ends
// the search.
TEST_F(GateSignatures, AnExpiredCookieBeforeAGoodOneIsPassedOver) {
  HttpClient c(port_);
  const std::string good = json_field(c.request("POST", "/v1/rooms/r/tickets").body, "token");
  ASSERT_FALSE(good.empty());
  EXPECT_EQ(gate("anteroom_r=" + forged(10, unix_now_s() - 10) + "; anteroom_r=" + good), 204u);
}

}  // namespace
}  // namespace anteroom::testing
