// Admission tokens (docs/security.md): signing and verifying HS256 and ES256 side by side in
// the same run, ES256 with and without its caches, and the gate as nginx calls it (verify,
// activate, a fresh token in Set-Cookie) through Api::handle, without sockets.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "server/app/api.h"
#include "server/app/token.h"

namespace anteroom {
namespace {

const char* kBenchSecret = "bench-token-secret-0123456789abcdef";

const EcKey& bench_key() {
  static const EcKey key = EcKey::generate().value();
  return key;
}

// 0: HS256, 1: ES256 with caches, 2: ES256 without.
TokenSigner signer(int64_t kind) {
  if (kind == 0) return TokenSigner(kBenchSecret);
  return TokenSigner(bench_key(), std::nullopt, kind == 1);
}
const char* kind_name(int64_t kind) {
  return kind == 0 ? "HS256" : kind == 1 ? "ES256 cached" : "ES256 uncached";
}

TokenClaims claims_for(int64_t i) {
  TokenClaims c;
  c.ticket = "AAAAAAAAAAAAAAAAAAAAAA" + std::to_string(i);
  c.room = "sale";
  c.user = "user-" + std::to_string(i % 1000);
  c.issued_at = 1'800'000'000;
  c.expires_at = 1'800'000'300 + i;
  return c;
}

// Signing a token for new claims each time (a new exp: what the cache cannot save).
void BM_TokenSign(benchmark::State& state) {
  TokenSigner s = signer(state.range(0));
  int64_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(s.sign(claims_for(i++)));
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(kind_name(state.range(0)));
}
BENCHMARK(BM_TokenSign)->DenseRange(0, 2);

// Signing for the same claims again (a status read of an admitted ticket in the same second).
void BM_TokenSignSameClaims(benchmark::State& state) {
  TokenSigner s = signer(state.range(0));
  const TokenClaims c = claims_for(1);
  for (auto _ : state) benchmark::DoNotOptimize(s.sign(c));
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(kind_name(state.range(0)));
}
BENCHMARK(BM_TokenSignSameClaims)->DenseRange(0, 2);

// Verifying 1,000 different tokens in turn, each seen before (a cached signer: hits).
void BM_TokenVerify(benchmark::State& state) {
  TokenSigner s = signer(state.range(0));
  std::vector<std::string> tokens;
  for (int64_t i = 0; i < 1000; ++i) tokens.push_back(s.sign(claims_for(i)));
  size_t i = 0;
  for (auto _ : state) {
    auto c = s.verify(tokens[i], "sale", 1'800'000'000);
    if (!c) state.SkipWithError("a good token did not verify");
    benchmark::DoNotOptimize(c);
    i = (i + 1) % tokens.size();
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(kind_name(state.range(0)));
}
BENCHMARK(BM_TokenVerify)->DenseRange(0, 2);

// Verifying a token never seen before (a cached signer: a miss, then stored).
void BM_TokenVerifyFirstSight(benchmark::State& state) {
  TokenSigner s = signer(state.range(0));
  TokenSigner issuer = signer(state.range(0) == 0 ? 0 : 2);
  std::vector<std::string> tokens;
  for (int64_t i = 0; i < 20'000; ++i) tokens.push_back(issuer.sign(claims_for(i)));
  size_t i = 0;
  for (auto _ : state) {
    if (i == tokens.size()) {
      state.PauseTiming();
      s = signer(state.range(0));  // empty caches again
      i = 0;
      state.ResumeTiming();
    }
    benchmark::DoNotOptimize(s.verify(tokens[i++], "sale", 1'800'000'000));
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(kind_name(state.range(0)));
}
BENCHMARK(BM_TokenVerifyFirstSight)->DenseRange(0, 2);

// The gate: 1,000 admitted visitors, each request with the cookie the previous answer set
// (as a browser does). Every answer is 204 with a fresh token. range(1) = 1: the clock moves a
// second after every round of the 1,000, so each answer's exp is new and its token must be
// signed (the worst case for ES256: no request within the same second as its visitor's last);
// 0: real time, where a visitor's requests within one second share a token.
void BM_Gate(benchmark::State& state) {
  auto clock = std::make_shared<ManualClock>();
  EngineOptions eo;
  if (state.range(1) == 1) eo.clock = clock;
  auto engine = make_sharded_engine(eo);
  RoomConfig room;
  room.capacity = 1000;
  room.session_ttl_seconds = 600;
  if (!engine->put_room("sale", room).is_ok()) return state.SkipWithError("put_room");
  TokenSigner tokens = signer(state.range(0));
  Metrics metrics;
  Options options;
  Api api(*engine, tokens, metrics, options, "bench-admin-key-0123456789");
  std::vector<std::string> ids;
  for (int i = 0; i < 1000; ++i) {
    auto j = engine->join("sale", "");
    if (!j.is_ok()) return state.SkipWithError("join");
    ids.emplace_back(id_view(j->ticket.id));
  }
  engine->run_all();  // admission
  std::vector<std::string> cookies;
  for (const std::string& id : ids) {
    auto v = engine->peek("sale", id);
    if (!v.is_ok()) return state.SkipWithError("peek");
    cookies.push_back("anteroom_sale=" + api.token_for("sale", v.value()));
  }
  size_t i = 0;
  for (auto _ : state) {
    ApiRequest req;
    req.method = "GET";
    req.target = "/v1/gate/sale";
    req.cookie = cookies[i];
    ApiResponse res = api.handle(req);
    if (res.status != 204) return state.SkipWithError("the gate refused a good token");
    for (const auto& [name, value] : res.headers) {
      if (name == "Set-Cookie") cookies[i] = value.substr(0, value.find(';'));
    }
    if (++i == cookies.size()) {
      i = 0;
      clock->advance_s(1);
    }
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(std::string(kind_name(state.range(0))) +
                 (state.range(1) == 1 ? ", every answer signed" : ", real time"));
}
BENCHMARK(BM_Gate)->ArgsProduct({{0, 1, 2}, {0, 1}});

}  // namespace
}  // namespace anteroom
