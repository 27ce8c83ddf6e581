// What cookies cost the ES256 gate: at most one signature check per request, whatever they
// are. A forged one ends the search (eight cost eight checks before); the same forgery sent
// again costs none (failures are remembered); a token that says it expired, or names a ticket
// that holds no slot, or is bound to a key the request lacks, costs none (genuine tokens of
// tickets that left cost a check each before, and the search went on). Counted by
// anteroom_token_signature_checks_total.
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
    // The same key outside the server: its tokens are genuine, but not in the server's cache
    // (as after a restart, or from another node).
    auto copy = EcKey::from_pem(key->private_pem(), "the test key", true);
    ASSERT_TRUE(copy.is_ok());
    outside_.emplace(std::move(copy).value());
    server_ = std::make_unique<Server>(test_options(), kAdminKey, kSecret,
                                       TokenSigner(std::move(key).value()));
    auto p = server_->start();
    ASSERT_TRUE(p.is_ok());
    port_ = p.value();
    HttpClient c(port_);
    ASSERT_EQ(c.admin("PUT", "/v1/rooms/r", R"({"capacity":20})").status, 201u);
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
  // A new admitted ticket's id.
  std::string join() {
    HttpClient c(port_);
    const std::string ticket = json_field(c.request("POST", "/v1/rooms/r/tickets").body, "ticket");
    EXPECT_FALSE(ticket.empty());
    return ticket;
  }
  // A token of this server's shape (header, claims) for `ticket` (a made-up one by default)
  // with a signature that is not its own.
  std::string forged(int n, int64_t exp, const std::string& ticket = "") {
    HttpClient c(port_);
    const std::string real = json_field(c.request("POST", "/v1/rooms/r/tickets").body, "token");
    const std::string header = real.substr(0, real.find('.'));
    const std::string sub = ticket.empty() ? "forged-" + std::to_string(n) : ticket;
    const std::string claims =
        base64url_encode(R"({"iss":"anteroom","sub":")" + sub + R"(","room":"r","exp":)" +
                         std::to_string(exp) + R"(,"iat":1})");
    return header + "." + claims + "." + base64url_encode(std::string(64, static_cast<char>(n)));
  }
  // A genuine token for `ticket`, signed outside the server.
  std::string genuine(const std::string& ticket, const std::string& key_hash = "") {
    TokenClaims c;
    c.ticket = ticket;
    c.room = "r";
    c.key_hash = key_hash;
    c.issued_at = unix_now_s();
    c.expires_at = unix_now_s() + 3600;
    return outside_->sign(c);
  }

  std::optional<TokenSigner> outside_;
  std::unique_ptr<Server> server_;
  uint16_t port_ = 0;
};

TEST_F(GateSignatures, EightForgedCookiesCostOneCheck) {
  const int64_t later = unix_now_s() + 3600;
  std::string cookies;
  for (int i = 1; i <= 8; ++i) {
    cookies += (i > 1 ? "; " : "") + ("anteroom_r=" + forged(i, later, join()));  // live tickets
  }
  const uint64_t before = checks();
  EXPECT_EQ(gate(cookies), 401u);
  EXPECT_EQ(checks() - before, 1u) << "one check per request, whatever the number of cookies";
  EXPECT_EQ(gate(cookies.substr(0, cookies.find(';'))), 401u);
  EXPECT_EQ(checks() - before, 1u) << "a forgery sent again is remembered";
}

// The second review's finding: genuine tokens the server had not cached (after a restart)
// for tickets that left, or bound to a key not sent, cost a check each, and the search went
// on past each. Now what they state refuses them before any check, and the visitor's own
// cookie after them still admits, for one check.
TEST_F(GateSignatures, GenuineButUnusableCookiesCostNoCheck) {
  std::string cookies;
  for (int i = 0; i < 4; ++i) {
    const std::string gone = join();
    HttpClient c(port_);
    ASSERT_EQ(c.request("DELETE", "/v1/rooms/r/tickets/" + gone).status, 204u);
    cookies += "anteroom_r=" + genuine(gone) + "; ";
  }
  const std::string some_hash(64, 'a');
  for (int i = 0; i < 4; ++i) cookies += "anteroom_r=" + genuine(join(), some_hash) + "; ";
  const uint64_t before = checks();
  EXPECT_EQ(gate(cookies), 401u);
  EXPECT_EQ(checks() - before, 0u) << "nothing the cookies state could admit";
  EXPECT_EQ(gate(cookies + "anteroom_r=" + genuine(join())), 204u) << "the visitor's own";
  EXPECT_EQ(checks() - before, 1u);
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

// The third review's finding: the gate read 32 cookies of the name, so 40 junk ones planted
// before the visitor's own (a sibling subdomain can) locked the visitor out.
TEST_F(GateSignatures, JunkCookiesNeverHideTheVisitorsOwn) {
  std::string cookies;
  for (int i = 0; i < 40; ++i) cookies += "anteroom_r=junk" + std::to_string(i) + "; ";
  const uint64_t before = checks();
  EXPECT_EQ(gate(cookies + "anteroom_r=" + genuine(join())), 204u);
  EXPECT_EQ(checks() - before, 1u);
}

}  // namespace
}  // namespace anteroom::testing
