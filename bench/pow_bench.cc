// Proof-of-work verification (server/app/proof_of_work.h): what a join with a proof costs the
// server. BM_PowCheck is the whole check of a fresh solution (MAC, expiry, SHA-256 of the
// solution, a look in the spent set) and spending it (MAC again, the spent set); BM_PowWorkBits the
// solution's hash alone, as an anchor; a client solving 20 bits does about a million of those.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "server/app/proof_of_work.h"

namespace anteroom {
namespace {

constexpr int64_t kNow = 1'800'000'000;

void BM_PowCheck(benchmark::State& state) {
  ProofOfWork pow("bench key");
  // Difficulty 0: every nonce solves it, so the loop measures verification, not search; a
  // fresh challenge each time goes through the used set like a real join.
  std::vector<std::string> challenges;
  for (int i = 0; i < 1 << 16; ++i) challenges.push_back(pow.issue("room", 0, kNow).text);
  size_t i = 0;
  int64_t now = kNow;
  for (auto _ : state) {
    if (i == challenges.size()) {  // all used: move past their expiry and issue new ones
      state.PauseTiming();
      now += 200;
      for (auto& c : challenges) c = pow.issue("room", 0, now).text;
      i = 0;
      state.ResumeTiming();
    }
    PowSolved solved;
    benchmark::DoNotOptimize(pow.check("room", challenges[i++], "123456789", 0, now, &solved));
    benchmark::DoNotOptimize(pow.spend("room", solved, now * 1000));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PowCheck);

void BM_PowWorkBits(benchmark::State& state) {
  const std::string c = ProofOfWork("k").issue("room", 20, kNow).text;
  uint64_t n = 0;
  for (auto _ : state) benchmark::DoNotOptimize(ProofOfWork::work_bits(c, std::to_string(n++)));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PowWorkBits);

}  // namespace
}  // namespace anteroom
