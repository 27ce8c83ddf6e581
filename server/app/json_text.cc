#include "server/app/json_text.h"

#include <boost/json.hpp>
#include <charconv>
#include <cmath>

namespace anteroom {
namespace json = boost::json;

std::string json_number(double d) {
  if (!std::isfinite(d)) return "null";  // JSON has no NaN or infinity
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, d);
  return std::string(buf, r.ptr);
}

namespace {

void write(const json::value& v, std::string* out) {
  switch (v.kind()) {
    case json::kind::double_:
      *out += json_number(v.get_double());
      return;
    case json::kind::object: {
      *out += '{';
      bool first = true;
      for (const auto& kv : v.get_object()) {
        if (!first) *out += ',';
        first = false;
        *out += json::serialize(json::string(kv.key()));
        *out += ':';
        write(kv.value(), out);
      }
      *out += '}';
      return;
    }
    case json::kind::array: {
      *out += '[';
      bool first = true;
      for (const auto& e : v.get_array()) {
        if (!first) *out += ',';
        first = false;
        write(e, out);
      }
      *out += ']';
      return;
    }
    default:  // strings, integers, booleans and null print as people write them already
      *out += json::serialize(v);
  }
}

}  // namespace

std::string to_json(const json::value& v) {
  std::string out;
  write(v, &out);
  return out;
}

}  // namespace anteroom
