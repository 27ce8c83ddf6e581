#include "loadgen/bots.h"

#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "loadgen/pow_solver.h"

namespace anteroom::loadgen {

const char* bot_kind_name(BotKind kind) {
  switch (kind) {
    case BotKind::kSolver:
      return "solving";
    case BotKind::kForger:
      return "wrong nonce";
    case BotKind::kBare:
      return "no proof";
  }
  return "unknown";
}

BotKind bot_kind(uint32_t k, uint32_t n, double solve_share) {
  const auto solvers = static_cast<uint32_t>(std::lround(n * solve_share));
  if (k < solvers) return BotKind::kSolver;
  return (k - solvers) % 2 == 0 ? BotKind::kForger : BotKind::kBare;
}

net::ip::address bot_address(uint32_t k) {
  return net::ip::make_address_v4("127.3.0." + std::to_string(k + 1));
}

net::ip::address human_address(uint64_t i) {
  return net::ip::make_address_v4("127.1." + std::to_string(i / 250) + "." +
                                  std::to_string(i % 250 + 1));
}

void tally_answer(int status, std::string_view body, BotTally* t) {
  if (status == 201 || status == 200) {
    ++t->created;
  } else if (status == 429) {
    ++t->limited;
  } else if (status == 403 && body.find("pow_required") != std::string_view::npos) {
    ++t->pow_required;
  } else if (status == 403 && body.find("pow_invalid") != std::string_view::npos) {
    ++t->pow_invalid;
  } else {
    ++t->other;
  }
}

namespace {

constexpr auto kTok = net::as_tuple(net::use_awaitable);

struct BotThread {
  net::io_context io{1};
  Watchdog watchdog{io};
  net::steady_timer stopper{io};
};

struct BotCtx {
  const Config& cfg;
  const Plan& plan;
  BotShared& shared;
  int64_t end_us;
  bool stopping() const { return shared.stop.load() != 0 || now_us() >= end_us; }
};

net::awaitable<void> pause_ms(net::io_context& io, int ms) {
  net::steady_timer t(io);
  t.expires_after(std::chrono::milliseconds(ms));
  co_await t.async_wait(kTok);
}

// One bot connection: joins back to back until told to stop. A solver fetches a challenge
// and solves it (yielding between steps) before each join; a forger fetches one and sends a
// wrong nonce; a bare bot sends {} and nothing else.
class Bot {
 public:
  Bot(BotCtx& b, BotThread& th, uint32_t addr, uint32_t conn_no)
      : b_(b),
        th_(th),
        addr_(addr),
        kind_(bot_kind(addr, b.cfg.bots, b.cfg.bot_solve)),
        t_(b.shared.kinds[static_cast<int>(kind_)]),
        c_(th.io, th.watchdog, nullptr),
        host_("\r\nHost: " + b.plan.host + "\r\n"),
        base_("/v1/rooms/" + b.plan.room),
        seed_((uint64_t{addr} << 32) | conn_no) {
    c_.set_timeout(static_cast<int64_t>(b.cfg.timeout_s * 1e6));
  }

  net::awaitable<void> run() {
    const bool pow_on = b_.cfg.pow_difficulty != 0;
    while (!b_.stopping()) {
      if (!c_.is_open()) {
        Fail f = co_await c_.connect(b_.plan.target, bot_address(addr_));
        if (f) {
          ++t_.failed;
          co_await pause_ms(th_.io, 10);
          continue;
        }
      }
      std::string body = "{}";
      if (pow_on && kind_ != BotKind::kBare) {
        bool proved = co_await prove(&body);
        if (!proved) continue;
      }
      const std::string join = join_request(body);
      ++t_.sent;
      HttpResponse resp;
      Fail f = co_await c_.exchange(join, &resp);
      if (f) {
        ++t_.failed;
        c_.close();
        continue;
      }
      tally_answer(resp.status, resp.body, &t_);
      const bool created = resp.status == 201 || resp.status == 200;
      if (created) ++b_.shared.tickets_by_address[addr_];
      if (created && kind_ == BotKind::kSolver && pow_on && !replayed_) {
        replayed_ = true;
        co_await replay(join);
      }
    }
  }

 private:
  std::string join_request(const std::string& body) const {
    std::string join = "POST " + base_;
    join += "/tickets HTTP/1.1";
    join += host_;
    join += "Content-Type: application/json\r\nContent-Length: ";
    join += std::to_string(body.size());
    join += "\r\n\r\n";
    join += body;
    return join;
  }

  // Fetches a challenge and answers it (solved, or with a wrong nonce) into `body`. False
  // when there is no challenge to answer, or the bots are stopping.
  net::awaitable<bool> prove(std::string* body) {
    HttpResponse resp;
    Fail f = co_await c_.exchange("GET " + base_ + "/challenge HTTP/1.1" + host_ + "\r\n", &resp);
    PowChallengeText ch;
    if (f || resp.status != 200 || !parse_challenge(resp.body, &ch)) {
      ++t_.failed;
      c_.close();
      co_await pause_ms(th_.io, 10);
      co_return false;
    }
    ++b_.shared.challenges;
    std::string nonce;
    if (kind_ == BotKind::kSolver) {
      PowSearch search(ch.challenge, ch.difficulty, seed_ << 20);
      while (!search.step(kPowStep)) {
        if (b_.stopping()) co_return false;
        co_await net::post(th_.io, net::use_awaitable);
      }
      b_.shared.hashes += search.hashes();
      ++b_.shared.solved;
      nonce = search.nonce();
    } else {
      nonce = wrong_nonce(ch.challenge, ch.difficulty, seed_ + (forged_++ << 40));
    }
    *body = R"({"pow":{"challenge":")" + ch.challenge + R"(","nonce":")" + nonce + "\"}}";
    co_return true;
  }

  // Each solving connection sends its first accepted solution once more: a challenge is
  // good for one join.
  net::awaitable<void> replay(const std::string& join) {
    ++b_.shared.replays;
    HttpResponse resp;
    Fail f = co_await c_.exchange(join, &resp);
    if (f) {
      c_.close();
      co_return;
    }
    if (resp.status == 201 || resp.status == 200) {
      ++b_.shared.replays_accepted;
      ++b_.shared.tickets_by_address[addr_];
    } else if (resp.status == 403 && resp.body.find("pow_invalid") != std::string_view::npos) {
      ++b_.shared.replays_invalid;
    }
  }

  BotCtx& b_;
  BotThread& th_;
  uint32_t addr_;
  BotKind kind_;
  BotTally& t_;
  Conn c_;
  std::string host_;
  std::string base_;
  uint64_t seed_;
  uint64_t forged_ = 0;
  bool replayed_ = false;
};

net::awaitable<void> bot_loop(BotCtx& b, BotThread& th, uint32_t addr, uint32_t conn_no) {
  Bot bot(b, th, addr, conn_no);
  co_await bot.run();
}

// Stops the thread's io_context, looking every 50 ms, once the bots are to stop.
void stop_when_told(BotThread& th, BotCtx& b) {
  auto check = std::make_shared<std::function<void()>>();
  *check = [&th, &b, check] {
    th.stopper.expires_after(std::chrono::milliseconds(50));
    th.stopper.async_wait([&th, &b, check](const boost::system::error_code&) {
      if (b.stopping()) {
        th.io.stop();
        return;
      }
      (*check)();
    });
  };
  (*check)();
}

[[noreturn]] void bots_main(const Config& cfg, const Plan& plan, BotShared& shared,
                            double max_seconds) {
  BotCtx b{cfg, plan, shared, now_us() + static_cast<int64_t>(max_seconds * 1e6)};
  // Thread 0 hammers (the bots that do not solve: their joins cost them nothing); the solvers'
  // connections share --bot-threads more, so solving never slows the hammering down.
  const int threads = 1 + std::max(1, cfg.bot_threads);
  std::vector<std::unique_ptr<BotThread>> ths;
  ths.reserve(static_cast<size_t>(threads));
  for (int i = 0; i < threads; ++i) ths.push_back(std::make_unique<BotThread>());
  uint64_t n = 0;
  for (uint32_t addr = 0; addr < cfg.bots; ++addr) {
    const bool solver = bot_kind(addr, cfg.bots, cfg.bot_solve) == BotKind::kSolver;
    for (uint32_t k = 0; k < cfg.bot_connections; ++k) {
      BotThread& th = solver ? *ths[1 + n++ % (ths.size() - 1)] : *ths[0];
      net::co_spawn(th.io, bot_loop(b, th, addr, k), net::detached);
    }
  }
  shared.started_us.store(now_us());
  for (auto& th : ths) {
    th->watchdog.start();
    stop_when_told(*th, b);
  }
  std::vector<std::thread> runners;
  for (size_t i = 1; i < ths.size(); ++i) runners.emplace_back([&ths, i] { ths[i]->io.run(); });
  ths[0]->io.run();
  for (auto& r : runners) r.join();
  shared.ended_us.store(now_us());
  std::fflush(nullptr);
  _exit(0);  // the coroutines left suspended are not unwound: the process ends here
}

}  // namespace

pid_t start_bots(const Config& cfg, const Plan& plan, BotShared* shared, double max_seconds) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) bots_main(cfg, plan, *shared, max_seconds);
  return pid;
}

bool stop_bots(pid_t pid, BotShared* shared) {
  shared->stop.store(1);
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace anteroom::loadgen
