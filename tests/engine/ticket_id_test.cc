#include "engine/ticket_id.h"

#include <gtest/gtest.h>

#include <bit>
#include <set>

namespace anteroom {
namespace {

TEST(TicketId, RoundTripsSequenceAndTag) {
  IdCodec codec;
  for (uint64_t seq : {uint64_t{0}, uint64_t{1}, uint64_t{123456789}, ~uint64_t{0}}) {
    Tag tag = random_tag();
    TicketId id = codec.encode(seq, tag);
    uint64_t got = 0;
    Tag got_tag{};
    ASSERT_TRUE(codec.decode(id_view(id), &got, &got_tag));
    EXPECT_EQ(got, seq);
    EXPECT_EQ(got_tag, tag);
  }
}

TEST(TicketId, RejectsWrongLengthForeignCharactersAndNonCanonicalEndings) {
  IdCodec codec;
  TicketId id = codec.encode(7, random_tag());
  std::string s(id_view(id));
  uint64_t seq = 0;
  Tag tag{};
  EXPECT_FALSE(codec.decode(s.substr(1), &seq, &tag));
  EXPECT_FALSE(codec.decode(s + "A", &seq, &tag));
  std::string plus = s;
  plus[3] = '+';
  EXPECT_FALSE(codec.decode(plus, &seq, &tag));
  // The last character carries 4 bits; one with the low 2 bits set is not an encoding.
  std::string tail = s;
  tail.back() = 'B';  // value 1
  EXPECT_FALSE(codec.decode(tail, &seq, &tag));
}

TEST(TicketId, ConsecutiveSequenceNumbersLookUnrelated) {
  IdCodec codec;
  Tag tag = random_tag();
  TicketId a = codec.encode(1000, tag);
  TicketId b = codec.encode(1001, random_tag());
  int same = 0;
  for (size_t i = 0; i < a.size(); ++i) same += a[i] == b[i];
  EXPECT_LT(same, 8);  // about 27/64 expected by chance
}

TEST(TicketId, TagsAreDistinctDraws) {
  std::set<Tag> tags;
  int ones = 0;
  for (int i = 0; i < 10000; ++i) {
    Tag t = random_tag();
    tags.insert(t);
    for (uint32_t w : t) ones += std::popcount(w);
  }
  EXPECT_EQ(tags.size(), 10000u);
  EXPECT_NEAR(ones / (10000.0 * 96), 0.5, 0.01);
}

}  // namespace
}  // namespace anteroom
