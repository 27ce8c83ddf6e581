// Proof of work (server/app/proof_of_work.h): a challenge is good once, in its own room,
// until it expires, at its difficulty; the auto curve; and over HTTP and WebSocket: 403
// pow_required without a proof, pow_invalid for a wrong, used or foreign one, 201 with a
// right one, and a refused proof not counted against the address.
#include "server/app/proof_of_work.h"

#include <boost/json.hpp>
#include <string>

#include "engine/fair_draw.h"
#include "tests/server/harness.h"

namespace anteroom::testing {
namespace {

// The first nonce (as decimal) that gives `bits` zero bits.
std::string solve(const std::string& challenge, unsigned bits) {
  for (uint64_t n = 0;; ++n) {
    if (ProofOfWork::work_bits(challenge, std::to_string(n)) >= bits) return std::to_string(n);
  }
}

// A nonce that does not give `bits` zero bits.
std::string miss(const std::string& challenge, unsigned bits) {
  for (uint64_t n = 0;; ++n) {
    if (ProofOfWork::work_bits(challenge, std::to_string(n)) < bits) return std::to_string(n);
  }
}

constexpr int64_t kNow = 1'800'000'000;

// Checks a difficulty-0 challenge (any nonce solves it) at now_ms and spends it.
PowVerdict check_and_spend(ProofOfWork& pow, const std::string& room, const std::string& text,
                           int64_t now_ms) {
  PowSolved s;
  const PowVerdict v = pow.check(room, text, "x", 0, now_ms / 1000, &s);
  return v == PowVerdict::kOk ? pow.spend(room, s, now_ms) : v;
}

TEST(ProofOfWork, ARightNonceIsAcceptedOnce) {
  ProofOfWork pow("key");
  const PowChallenge c = pow.issue("r", 8, kNow);
  EXPECT_EQ(c.difficulty, 8u);
  EXPECT_EQ(c.expires_in_s, 120);
  const std::string n = solve(c.text, 8);
  EXPECT_EQ(pow.check("r", c.text, miss(c.text, 8), 8, kNow), PowVerdict::kInvalid);
  EXPECT_EQ(pow.check("r", c.text, n, 8, kNow), PowVerdict::kOk);
  EXPECT_EQ(pow.check("r", c.text, n, 8, kNow), PowVerdict::kOk) << "checking spends nothing";
  EXPECT_EQ(pow.used_count(), 0u);
  PowSolved solved;
  ASSERT_EQ(pow.check("r", c.text, n, 8, kNow, &solved), PowVerdict::kOk);
  EXPECT_EQ(pow.spend("r", solved, kNow * 1000), PowVerdict::kOk);
  EXPECT_EQ(pow.check("r", c.text, n, 8, kNow + 1), PowVerdict::kUsed);
  // A spent challenge with a wrong nonce is invalid before it is used. (This took a nonce
  // solved for another text, which solves this one too once in 256 runs: a flaky test.)
  EXPECT_EQ(pow.check("r", c.text, miss(c.text, 8), 8, kNow + 1), PowVerdict::kInvalid);
  EXPECT_EQ(pow.spend("r", solved, kNow * 1000), PowVerdict::kUsed) << "spent twice";
  EXPECT_EQ(pow.used_count(), 1u);
}

TEST(ProofOfWork, AChallengeIsGoodOnlyInItsRoomWithItsKeyUntilItExpires) {
  ProofOfWork pow("key"), other("another key");
  const PowChallenge c = pow.issue("r", 4, kNow);
  const std::string n = solve(c.text, 4);
  EXPECT_EQ(pow.check("s", c.text, n, 4, kNow), PowVerdict::kInvalid) << "another room";
  EXPECT_EQ(other.check("r", c.text, n, 4, kNow), PowVerdict::kInvalid) << "another key";
  EXPECT_EQ(pow.check("r", c.text, n, 4, kNow + 121), PowVerdict::kExpired);
  EXPECT_EQ(pow.check("r", c.text, n, 4, kNow + 120), PowVerdict::kOk) << "the last second";
}

TEST(ProofOfWork, TamperedChallengesAndBadNoncesAreInvalid) {
  ProofOfWork pow("key");
  const PowChallenge c = pow.issue("r", 4, kNow);
  const std::string n = solve(c.text, 4);
  // A lower difficulty or a later expiry written into the challenge breaks its MAC.
  std::string easier = c.text;
  easier.replace(easier.find(".4."), 3, ".0.");
  EXPECT_EQ(pow.check("r", easier, "0", 0, kNow), PowVerdict::kInvalid);
  std::string later = c.text;
  later[0] = later[0] == '9' ? '8' : static_cast<char>(later[0] + 1);
  EXPECT_EQ(pow.check("r", later, n, 4, kNow), PowVerdict::kInvalid);
  for (const std::string& bad : {std::string(), std::string("a b"), std::string("\xff"),
                                 std::string(ProofOfWork::kMaxNonce + 1, '1')}) {
    EXPECT_EQ(pow.check("r", c.text, bad, 4, kNow), PowVerdict::kInvalid) << bad;
  }
  for (const std::string& bad : {std::string(), std::string("."), std::string("1.2.3"),
                                 c.text + "A", c.text.substr(0, c.text.size() - 1),
                                 std::string("-1.4.") + c.text.substr(c.text.find('.', 11))}) {
    EXPECT_EQ(pow.check("r", bad, n, 0, kNow), PowVerdict::kInvalid) << bad;
  }
  EXPECT_EQ(pow.check("r", c.text, n, 4, kNow), PowVerdict::kOk) << "after all that, untouched";
}

TEST(ProofOfWork, AnEasierChallengeThanAskedIsRefused) {
  ProofOfWork pow("key");
  const PowChallenge c = pow.issue("r", 4, kNow);
  EXPECT_EQ(pow.check("r", c.text, solve(c.text, 4), 5, kNow), PowVerdict::kTooEasy);
}

TEST(ProofOfWork, UsedChallengesAreForgottenOnceExpired) {
  ProofOfWork pow("key");
  for (int i = 0; i < 50; ++i) {
    const PowChallenge c = pow.issue("r", 0, kNow);
    ASSERT_EQ(check_and_spend(pow, "r", c.text, kNow * 1000), PowVerdict::kOk);
  }
  EXPECT_EQ(pow.used_count(), 50u);
  const PowChallenge c = pow.issue("r", 0, kNow + 300);
  ASSERT_EQ(check_and_spend(pow, "r", c.text, (kNow + 300) * 1000), PowVerdict::kOk);
  EXPECT_EQ(pow.used_count(), 1u) << "the 50 expired at kNow + 120";
}

TEST(ProofOfWork, WorkBitsCountAcrossBytes) {
  // Against SHA-256 from elsewhere (fair_draw.h's), bits counted one at a time.
  for (uint64_t n = 0; n < 5'000; ++n) {
    const std::string nonce = std::to_string(n);
    const unsigned bits = ProofOfWork::work_bits("c", nonce);
    const std::string input = "c:" + nonce;
    const auto d = sha256(reinterpret_cast<const uint8_t*>(input.data()), input.size());
    unsigned want = 0;
    for (uint8_t byte : d) {
      int k = 7;
      while (k >= 0 && (byte >> k & 1) == 0) {
        ++want;
        --k;
      }
      if (k >= 0) break;
    }
    ASSERT_EQ(bits, want) << nonce;
  }
}

TEST(ProofOfWork, TheAutoCurve) {
  EXPECT_EQ(ProofOfWork::auto_bits(0), 10u);
  EXPECT_EQ(ProofOfWork::auto_bits(50), 10u);
  EXPECT_EQ(ProofOfWork::auto_bits(51), 11u);
  EXPECT_EQ(ProofOfWork::auto_bits(100), 11u);
  EXPECT_EQ(ProofOfWork::auto_bits(800), 14u);
  EXPECT_EQ(ProofOfWork::auto_bits(3'200), 16u);
  EXPECT_EQ(ProofOfWork::auto_bits(51'200), 20u);
  EXPECT_EQ(ProofOfWork::auto_bits(1e9), 22u);
  // The rate is counted per room from the solutions spent (spend() counts one).
  ProofOfWork pow("key");
  const int64_t t = kNow * 1000;
  EXPECT_EQ(pow.difficulty("r", 12, t, true), 12u) << "a fixed setting is itself";
  for (int i = 0; i < 400; ++i) pow.difficulty("r", RoomConfig::kPowAuto, t, true);
  EXPECT_EQ(pow.difficulty("r", RoomConfig::kPowAuto, t, false), 13u) << "400 this second";
  EXPECT_EQ(pow.difficulty("s", RoomConfig::kPowAuto, t, false), 10u) << "another room";
  // Quiet seconds bring it back down.
  EXPECT_EQ(pow.difficulty("r", RoomConfig::kPowAuto, t + 30'000, false), 10u);
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ(check_and_spend(pow, "s", pow.issue("s", 0, kNow).text, t), PowVerdict::kOk);
  }
  EXPECT_EQ(pow.difficulty("s", RoomConfig::kPowAuto, t, false), 11u) << "100 spent this second";
}

class PowHttp : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<TestServer>();
    client_ = std::make_unique<HttpClient>(server_->port());
    ASSERT_EQ(client_
                  ->admin("PUT", "/v1/rooms/r",
                          R"({"capacity":0,"pow_difficulty":8,"ip_joins_per_minute":3})")
                  .status,
              201u);
  }
  boost::json::object challenge(const std::string& room = "r") {
    Reply r = client_->request("GET", "/v1/rooms/" + room + "/challenge");
    EXPECT_EQ(r.status, 200u) << r.body;
    return boost::json::parse(r.body).as_object();
  }
  Reply join(const std::string& c, const std::string& nonce) {
    boost::json::object pow{{"challenge", c}, {"nonce", nonce}};
    return client_->request("POST", "/v1/rooms/r/tickets",
                            boost::json::serialize(boost::json::object{{"pow", pow}}));
  }
  std::unique_ptr<TestServer> server_;
  std::unique_ptr<HttpClient> client_;
};

TEST_F(PowHttp, AJoinNeedsASolvedChallenge) {
  Reply none = client_->request("POST", "/v1/rooms/r/tickets", "{}");
  EXPECT_EQ(none.status, 403u);
  EXPECT_NE(none.body.find("pow_required"), std::string::npos) << none.body;
  auto c = challenge();
  EXPECT_EQ(c.at("difficulty").as_int64(), 8);
  EXPECT_EQ(c.at("expires_in").as_int64(), 120);
  const std::string text(c.at("challenge").as_string());
  Reply wrong = join(text, miss(text, 8));
  EXPECT_EQ(wrong.status, 403u);
  EXPECT_NE(wrong.body.find("pow_invalid"), std::string::npos) << wrong.body;
  const std::string n = solve(text, 8);
  EXPECT_EQ(join(text, n).status, 201u);
  Reply again = join(text, n);
  EXPECT_EQ(again.status, 403u);
  EXPECT_NE(again.body.find("already used"), std::string::npos) << again.body;
  // Bad shapes are 400, not 403.
  for (const char* body :
       {R"({"pow":"x"})", R"({"pow":{"challenge":"a"}})", R"({"pow":{"challenge":"a","nonce":5}})",
        R"({"pow":{"challenge":"a","nonce":"1","extra":1}})"}) {
    EXPECT_EQ(client_->request("POST", "/v1/rooms/r/tickets", body).status, 400u) << body;
  }
  auto info = boost::json::parse(client_->admin("GET", "/v1/rooms/r").body).as_object();
  EXPECT_EQ(info.at("totals").as_object().at("joined").as_int64(), 1);
  EXPECT_EQ(info.at("pow_difficulty").as_int64(), 8);
}

// Refused proofs are not counted against the address; solved ones are.
TEST_F(PowHttp, ProofsComeBeforeTheAddressLimit) {
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(client_->request("POST", "/v1/rooms/r/tickets", "{}").status, 403u);
  }
  for (int i = 0; i < 3; ++i) {
    const std::string text(challenge().at("challenge").as_string());
    EXPECT_EQ(join(text, solve(text, 8)).status, 201u) << i;
  }
  const std::string text(challenge().at("challenge").as_string());
  EXPECT_EQ(join(text, solve(text, 8)).status, 429u);
}

TEST_F(PowHttp, AnotherRoomsChallengeOrAnUnknownRoom) {
  ASSERT_EQ(client_->admin("PUT", "/v1/rooms/s", R"({"pow_difficulty":"auto"})").status, 201u);
  // Fetching challenges costs nothing, so it does not raise "auto": only spent proofs do.
  for (int i = 0; i < 300; ++i) challenge("s");
  auto c = challenge("s");
  EXPECT_EQ(c.at("difficulty").as_int64(), 10);
  const std::string text(c.at("challenge").as_string());
  EXPECT_EQ(join(text, solve(text, 10)).status, 403u) << "s's challenge in r";
  EXPECT_EQ(client_->request("GET", "/v1/rooms/nope/challenge").status, 404u);
  EXPECT_EQ(client_->request("POST", "/v1/rooms/r/challenge").status, 405u);
  EXPECT_EQ(client_->admin("PUT", "/v1/rooms/s", R"({"pow_difficulty":33})").status, 400u);
  EXPECT_EQ(client_->admin("PUT", "/v1/rooms/s", R"({"pow_difficulty":"hard"})").status, 400u);
  auto info = boost::json::parse(client_->admin("GET", "/v1/rooms/s").body).as_object();
  EXPECT_EQ(info.at("pow_difficulty").as_string(), "auto");
}

TEST_F(PowHttp, WebSocketEntersCarryTheProofToo) {
  WsClient ws(server_->port(), "/v1/rooms/r/ws");
  ws.send(R"({"type":"ENTER","userId":"u1"})");
  auto refused = ws.next_of("ERROR");
  ASSERT_TRUE(refused.has_value());
  EXPECT_NE(refused->find("pow_required"), std::string::npos) << *refused;
  const std::string text(challenge().at("challenge").as_string());
  ws.send(R"({"type":"ENTER","userId":"u1","pow":{"challenge":")" + text + R"(","nonce":")" +
          solve(text, 8) + R"("}})");
  EXPECT_TRUE(ws.next_of("ALLOWED").has_value());
}

}  // namespace
}  // namespace anteroom::testing
