#include "server/app/gate_paths.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "engine/model.h"

namespace anteroom {
namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<std::string> plain_path(std::string_view target) {
  target = target.substr(0, std::min(target.find('?'), target.find('#')));
  std::string decoded;
  decoded.reserve(target.size());
  for (size_t i = 0; i < target.size(); ++i) {
    char c = target[i];
    if (c == '%' && i + 2 < target.size()) {
      const int hi = hex_digit(target[i + 1]), lo = hex_digit(target[i + 2]);
      if (hi >= 0 && lo >= 0) {
        c = static_cast<char>(hi * 16 + lo);
        i += 2;
      }
    }
    if (c == '\0') return std::nullopt;
    decoded.push_back(c == '\\' ? '/' : c);
  }
  if (!valid_utf8(decoded)) return std::nullopt;
  // Segments between slashes, each without its parameters; "." and ".." as RFC 3986
  // removes them; the path ends in a slash when its last segment is "", "." or "..".
  std::vector<std::string_view> kept;
  std::string_view last;
  for (std::string_view rest = decoded;;) {
    const size_t slash = rest.find('/');
    std::string_view seg = rest.substr(0, slash);
    seg = seg.substr(0, seg.find(';'));
    last = seg;
    if (seg == "..") {
      if (!kept.empty()) kept.pop_back();
    } else if (!seg.empty() && seg != ".") {
      kept.push_back(seg);
    }
    if (slash == std::string_view::npos) break;
    rest = rest.substr(slash + 1);
  }
  std::string path;
  for (std::string_view seg : kept) {
    path += '/';
    path += seg;
  }
  if (path.empty() || last.empty() || last == "." || last == "..") path += '/';
  return path;
}

bool Network::contains(std::string_view client) const {
  if (client.size() != size) return false;
  const auto* c = reinterpret_cast<const uint8_t*>(client.data());
  uint8_t left = bits;
  for (size_t i = 0; i < size && left != 0; ++i) {
    const uint8_t take = std::min<uint8_t>(left, 8);
    const auto mask = static_cast<uint8_t>(0xff << (8 - take));
    if ((c[i] & mask) != (bytes[i] & mask)) return false;
    left = static_cast<uint8_t>(left - take);
  }
  return true;
}

std::string Network::text() const {
  char buf[INET6_ADDRSTRLEN] = {};
  if (size == 4) {
    inet_ntop(AF_INET, bytes.data(), buf, sizeof buf);
  } else {
    uint8_t full[16] = {};
    std::copy(bytes.begin(), bytes.end(), full);
    inet_ntop(AF_INET6, full, buf, sizeof buf);
  }
  return std::string(buf) + "/" + std::to_string(bits);
}

std::optional<Network> parse_network(std::string_view text, std::string* why) {
  const size_t slash = text.find('/');
  const std::string addr(text.substr(0, slash));
  int bits = -1;
  if (slash != std::string_view::npos) {
    const std::string_view b = text.substr(slash + 1);
    if (b.empty() || b.size() > 3 || !std::all_of(b.begin(), b.end(), ::isdigit)) {
      *why = "'" + std::string(text) + "' has no prefix length after '/'";
      return std::nullopt;
    }
    bits = std::stoi(std::string(b));
  }
  Network n;
  uint8_t v4[4], v6[16];
  if (inet_pton(AF_INET, addr.c_str(), v4) == 1) {
    n.size = 4;
    std::copy(v4, v4 + 4, n.bytes.begin());
    n.bits = static_cast<uint8_t>(bits < 0 ? 32 : bits);
    if (bits > 32) {
      *why = "'" + std::string(text) + "': an IPv4 prefix is at most /32";
      return std::nullopt;
    }
    return n;
  }
  if (inet_pton(AF_INET6, addr.c_str(), v6) == 1) {
    n.size = 8;
    std::copy(v6, v6 + 8, n.bytes.begin());
    n.bits = static_cast<uint8_t>(bits < 0 ? 64 : bits);
    if (bits > 64) {
      *why = "'" + std::string(text) +
             "': an IPv6 prefix is at most /64 (clients are known by their /64)";
      return std::nullopt;
    }
    return n;
  }
  *why = "'" + std::string(text) + "' is not an IPv4 or IPv6 address or network";
  return std::nullopt;
}

}  // namespace anteroom
