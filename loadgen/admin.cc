#include "loadgen/admin.h"

#include <sys/utsname.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <chrono>
#include <ctime>
#include <fstream>
#include <thread>

#include "loadgen/conn.h"

namespace anteroom::loadgen {

namespace {

Reply call_at(const Config& cfg, const std::string& host, uint16_t port, const std::string& method,
              const std::string& path, const std::string& body, bool admin,
              const std::string& extra_headers) {
  net::io_context io(1);
  Watchdog wd(io);
  Reply reply;
  std::string req = method + " " + path + " HTTP/1.1\r\nHost: " + host + "\r\n";
  if (admin) req += "Authorization: Bearer " + cfg.admin_key + "\r\n";
  req += extra_headers;
  if (!body.empty()) {
    req +=
        "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  }
  req += "Connection: close\r\n\r\n" + body;
  net::co_spawn(
      io,
      [&]() -> net::awaitable<void> {
        Conn c(io, wd, nullptr);
        c.set_timeout(static_cast<int64_t>(cfg.timeout_s * 1e6));
        tcp::endpoint to = resolve_endpoint(host, port);
        Fail f = co_await c.connect(to, net::ip::address());
        HttpResponse resp;
        if (!f) f = co_await c.exchange(req, &resp);
        if (f) {
          reply.error = std::string("request failed: ") + error_kind_name(*f);
        } else {
          reply.status = resp.status;
          reply.body = std::string(resp.body);
        }
        wd.stop();
      },
      net::detached);
  wd.start();
  io.run();
  return reply;
}

// A room made on the first of several targets (the nodes of a cluster) reaches the others
// through Redis a moment later: the visitors start once every target knows it, so none is
// refused a join as room_not_found meanwhile. "" or what went wrong.
std::string wait_for_every_target(const Config& cfg, const std::string& room) {
  using Clock = std::chrono::steady_clock;
  const auto give_up = Clock::now() + std::chrono::seconds(10);
  for (const auto& [host, port] : cfg.targets) {
    for (;;) {
      Reply r = call_at(cfg, host, port, "GET", "/v1/rooms/" + room, "", true, "");
      if (r.status == 200) break;
      if (Clock::now() >= give_up) {
        std::string why = "room " + room + " was made but ";
        why += host + ":" + std::to_string(port);
        why += " does not know it after 10 s (HTTP " + std::to_string(r.status) + " ";
        why += r.error + ")";
        return why;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  return "";
}

}  // namespace

Reply http_call(const Config& cfg, const std::string& method, const std::string& path,
                const std::string& body, bool admin, const std::string& extra_headers) {
  return call_at(cfg, cfg.target_host, cfg.target_port, method, path, body, admin, extra_headers);
}

std::string create_room(const Config& cfg, const std::string& room, const std::string& admission) {
  std::string body = "{\"capacity\":" + std::to_string(cfg.capacity) + ",\"admission\":\"" +
                     admission + "\",\"admit_per_second\":" + std::to_string(cfg.admit_per_second) +
                     ",\"heartbeat_timeout_seconds\":" + std::to_string(cfg.heartbeat_timeout_s) +
                     ",\"allowed_ttl_seconds\":" + std::to_string(cfg.allowed_ttl_s) +
                     ",\"session_ttl_seconds\":" + std::to_string(cfg.session_ttl_s);
  if (cfg.ip_joins_per_minute != 0) {
    body += ",\"ip_joins_per_minute\":" + std::to_string(cfg.ip_joins_per_minute);
  }
  if (cfg.pow_difficulty == Config::kPowAuto) {
    body += ",\"pow_difficulty\":\"auto\"";
  } else if (cfg.pow_difficulty != 0) {
    body += ",\"pow_difficulty\":" + std::to_string(cfg.pow_difficulty);
  }
  body += "}";
  Reply r = http_call(cfg, "PUT", "/v1/rooms/" + room, body, true);
  if (r.status == 200 || r.status == 201) return wait_for_every_target(cfg, room);
  if (r.status == 0)
    return "cannot reach the server at " + cfg.target_host + ":" + std::to_string(cfg.target_port) +
           " (" + r.error + ")";
  return "creating room " + room + " failed: HTTP " + std::to_string(r.status) + " " + r.body;
}

uint64_t rss_bytes(long pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

std::string machine_description() {
  std::string model = "unknown CPU";
  std::ifstream cpu("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpu, line)) {
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  }
  uint64_t mem_kb = 0;
  std::ifstream mem("/proc/meminfo");
  while (std::getline(mem, line)) {
    if (line.rfind("MemTotal:", 0) == 0) mem_kb = std::stoull(line.substr(9));
  }
  utsname u{};
  uname(&u);
  return model + " (" + std::to_string(std::thread::hardware_concurrency()) + " cores), " +
         std::to_string((mem_kb + uint64_t{512} * 1024) / (uint64_t{1024} * 1024)) + " GiB, " +
         u.sysname + " " + u.release;
}

std::string utc_now_iso() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace anteroom::loadgen
