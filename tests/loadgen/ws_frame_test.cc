#include "loadgen/ws_frame.h"

#include <gtest/gtest.h>

namespace anteroom::loadgen {
namespace {

std::string server_frame(uint8_t first, std::string_view payload) {
  std::string f;
  f.push_back(static_cast<char>(first));
  if (payload.size() < 126) {
    f.push_back(static_cast<char>(payload.size()));
  } else {
    f.push_back(126);
    f.push_back(static_cast<char>(payload.size() >> 8));
    f.push_back(static_cast<char>(payload.size() & 0xff));
  }
  f += payload;
  return f;
}

TEST(WsFrame, AcceptKeyMatchesTheRfcExample) {
  EXPECT_EQ(ws_accept_for("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
  EXPECT_EQ(ws_new_key().size(), 24u);
  EXPECT_NE(ws_new_key(), ws_new_key());
}

TEST(WsFrame, ClientFramesAreMasked) {
  std::string f = ws_client_frame(WsOpcode::kText, "Hello", {0x37, 0xfa, 0x21, 0x3d});
  // RFC 6455 section 5.7: a masked "Hello".
  const unsigned char want[] = {0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58};
  ASSERT_EQ(f.size(), sizeof want);
  for (size_t i = 0; i < f.size(); ++i) EXPECT_EQ(static_cast<unsigned char>(f[i]), want[i]) << i;
  std::string big(300, 'x');
  std::string g = ws_client_frame(WsOpcode::kText, big, {1, 2, 3, 4});
  EXPECT_EQ(g.size(), 2 + 2 + 4 + 300u);
  EXPECT_EQ(static_cast<unsigned char>(g[1]), 0x80 | 126);
}

TEST(WsFrame, ParsesWholeAndPartialServerFrames) {
  std::string f = server_frame(0x81, R"({"type":"QUEUE"})");
  WsFrame fr;
  EXPECT_EQ(ws_parse_frame(std::string_view(f).substr(0, 1), 1024, &fr), kWsNeedMore);
  EXPECT_EQ(ws_parse_frame(std::string_view(f).substr(0, f.size() - 1), 1024, &fr), kWsNeedMore);
  ASSERT_EQ(ws_parse_frame(f, 1024, &fr), f.size());
  EXPECT_TRUE(fr.fin);
  EXPECT_EQ(fr.opcode, WsOpcode::kText);
  EXPECT_EQ(fr.payload, R"({"type":"QUEUE"})");
  std::string big = server_frame(0x81, std::string(200, 'y'));
  ASSERT_EQ(ws_parse_frame(big, 1024, &fr), big.size());
  EXPECT_EQ(fr.payload.size(), 200u);
}

TEST(WsFrame, RefusesWhatBreaksTheProtocol) {
  WsFrame fr;
  std::string masked = server_frame(0x81, "hi");
  masked[1] = static_cast<char>(masked[1] | 0x80);
  EXPECT_EQ(ws_parse_frame(masked, 1024, &fr), kWsBad);
  EXPECT_EQ(ws_parse_frame(server_frame(0xC1, "hi"), 1024, &fr), kWsBad);  // reserved bit
  EXPECT_EQ(ws_parse_frame(server_frame(0x83, "hi"), 1024, &fr), kWsBad);  // reserved opcode
  EXPECT_EQ(ws_parse_frame(server_frame(0x09, "hi"), 1024, &fr), kWsBad);  // fragmented ping
  EXPECT_EQ(ws_parse_frame(server_frame(0x81, std::string(200, 'z')), 100, &fr), kWsBad);
}

}  // namespace
}  // namespace anteroom::loadgen
