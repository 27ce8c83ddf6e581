// The loadgen's proof-of-work solver: the bit counting (at byte boundaries) and a search that
// must find a nonce whose SHA-256 really starts with the zero bits asked for, checked against
// the hex digest computed separately.
#include <gtest/gtest.h>

#include <string>

#include "loadgen/draw_check.h"
#include "loadgen/pow_solver.h"

namespace anteroom::loadgen {
namespace {

unsigned bits_of(std::initializer_list<unsigned char> bytes) {
  return leading_zero_bits(std::data(bytes), bytes.size());
}

TEST(PowSolver, CountsLeadingZeroBitsAcrossByteBoundaries) {
  EXPECT_EQ(bits_of({0xff}), 0u);
  EXPECT_EQ(bits_of({0x80, 0x00}), 0u);
  EXPECT_EQ(bits_of({0x7f}), 1u);
  EXPECT_EQ(bits_of({0x01}), 7u);
  EXPECT_EQ(bits_of({0x00, 0xff}), 8u);  // the boundary: a whole zero byte, then a one
  EXPECT_EQ(bits_of({0x00, 0x80}), 8u);
  EXPECT_EQ(bits_of({0x00, 0x7f}), 9u);
  EXPECT_EQ(bits_of({0x00, 0x01}), 15u);
  EXPECT_EQ(bits_of({0x00, 0x00, 0x80}), 16u);
  EXPECT_EQ(bits_of({0x00, 0x00, 0x01, 0xff}), 23u);
  EXPECT_EQ(bits_of({0x00}), 8u);  // all zero: every bit
  unsigned char zero[32] = {};
  EXPECT_EQ(leading_zero_bits(zero, sizeof zero), 256u);
  EXPECT_EQ(leading_zero_bits(zero, 0), 0u);
}

// Leading zero hex digits of the digest as draw_check computes it: bits / 4 must match.
size_t zero_hex_digits(const std::string& challenge, const std::string& nonce) {
  const std::string hex = sha256_hex(challenge + ":" + nonce);
  return hex.find_first_not_of('0');
}

TEST(PowSolver, WorkBitsAgreeWithTheHexDigest) {
  EXPECT_EQ(sha256_hex("abc:1").size(), 64u);
  for (int n = 0; n < 2000; ++n) {
    const std::string nonce = std::to_string(n);
    const unsigned bits = pow_work_bits("abc", nonce);
    EXPECT_EQ(bits / 4, zero_hex_digits("abc", nonce)) << nonce;
  }
}

TEST(PowSolver, SolvesAndTheSolutionHasTheBits) {
  const std::string challenge = "1767225600.12.AbCdEfGhIjKlMnOp.q-_rstuvwxyz0123456789";
  uint64_t hashes = 0;
  const std::string nonce = solve_pow(challenge, 12, &hashes);
  ASSERT_FALSE(nonce.empty());
  EXPECT_LE(nonce.size(), 64u);
  EXPECT_EQ(nonce.find_first_not_of("0123456789"), std::string::npos);
  EXPECT_GE(pow_work_bits(challenge, nonce), 12u);
  EXPECT_GE(zero_hex_digits(challenge, nonce), 3u);  // 12 bits: three zero hex digits
  // The first counter that solves it: every one before fails, and each was hashed once.
  const uint64_t n = std::stoull(nonce);
  EXPECT_EQ(hashes, n + 1);
  for (uint64_t k = 0; k < n; ++k) {
    ASSERT_LT(pow_work_bits(challenge, std::to_string(k)), 12u) << k;
  }
}

TEST(PowSolver, SearchesInStepsAndStopsOnceFound) {
  PowSearch s("steps", 10, 500);
  uint64_t steps = 0;
  while (!s.step(7)) ++steps;
  EXPECT_GT(steps, 0u);  // 2^10 expected tries in steps of 7
  const std::string nonce = s.nonce();
  EXPECT_GE(std::stoull(nonce), 500u);  // counted from the start given
  EXPECT_GE(pow_work_bits("steps", nonce), 10u);
  const uint64_t hashes = s.hashes();
  EXPECT_TRUE(s.step(100));  // found: nothing more is hashed
  EXPECT_EQ(s.hashes(), hashes);
  EXPECT_EQ(s.nonce(), nonce);
}

TEST(PowSolver, DifficultyZeroTakesTheFirstNonce) { EXPECT_EQ(solve_pow("c", 0), "0"); }

TEST(PowSolver, AWrongNonceIsWrong) {
  for (uint64_t seed = 0; seed < 50; ++seed) {
    const std::string nonce = wrong_nonce("challenge", 4, seed);
    EXPECT_LT(pow_work_bits("challenge", nonce), 4u) << nonce;
  }
}

TEST(PowSolver, ReadsAChallengeAndRefusesBadOnes) {
  PowChallengeText c;
  ASSERT_TRUE(parse_challenge(
      R"({"challenge":"1767.20.AbC_-9.xyz","difficulty":20,"expires_in":225})", &c));
  EXPECT_EQ(c.challenge, "1767.20.AbC_-9.xyz");
  EXPECT_EQ(c.difficulty, 20u);
  EXPECT_EQ(c.expires_in_s, 225);
  for (const char* bad : {R"({"challenge":"a b","difficulty":1,"expires_in":1})",
                          R"({"challenge":"a\"b","difficulty":1,"expires_in":1})",
                          R"({"challenge":"","difficulty":1,"expires_in":1})",
                          R"({"challenge":"ab","difficulty":-1,"expires_in":1})",
                          R"({"challenge":"ab","difficulty":65,"expires_in":1})",
                          R"({"challenge":"ab","difficulty":"8","expires_in":1})",
                          R"({"challenge":"ab","difficulty":8})", R"(["ab",8,1])", "nope"}) {
    EXPECT_FALSE(parse_challenge(bad, &c)) << bad;
  }
}

}  // namespace
}  // namespace anteroom::loadgen
