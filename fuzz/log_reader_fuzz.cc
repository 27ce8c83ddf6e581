// The append-only log as start-up reads it (storage/recovery.h): the input's bytes as a log
// file through scan_log (framing, payload decoding, validate(), snapshot checksums, the
// version), and then the same bytes with every frame's CRC32C made right, so the fuzzer's
// changes reach the payload decoders and the checks behind them instead of stopping at a
// checksum. A log the scan accepts is restored into a fresh engine as
// open_persistent_engine does, which must then accept it too: `anteroom check-log` says ok
// exactly when start-up would.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/clock.h"
#include "engine/sharded_engine.h"
#include "storage/log_format.h"
#include "storage/recovery.h"

namespace anteroom::fuzz {
namespace {

uint32_t load_u32(const char* p) {
  uint32_t v = 0;
  std::memcpy(&v, p, 4);  // little-endian, as the log stores it (x86 only, like the log)
  return v;
}

// The records of `log` framed as written, with the checksums recomputed (what a writer that
// meant every byte would have written). Stops at the first frame that runs past the end.
std::string with_good_crcs(std::string log) {
  size_t pos = 0;
  while (pos + logfmt::kHeaderSize <= log.size()) {
    const uint32_t length = load_u32(log.data() + pos + 4);
    if (length > log.size() - pos - logfmt::kHeaderSize) break;
    const uint32_t crc = logfmt::mask_crc(logfmt::crc32c(log.data() + pos + 8, size_t{length} + 1));
    std::memcpy(log.data() + pos, &crc, 4);
    pos += logfmt::kHeaderSize + length;
  }
  return log;
}

// What open_persistent_engine does with the rooms recovery found.
void restore(const logrec::Recovery& recovery) {
  EngineOptions o;
  o.shards = 1;
  o.clock = std::make_shared<ManualClock>();
  o.id_key = recovery.id_key().value_or(std::array<uint64_t, 2>{1, 2});
  const int64_t wall_ms = 1'767'225'600'000;  // 2026-01-01
  o.wall_minus_engine_ms = wall_ms - o.clock->now_ms();
  auto engine = make_sharded_engine(o);
  const int64_t engine_minus_wall = -*o.wall_minus_engine_ms;
  for (const auto& [name, room] : recovery.rooms()) {
    Status st = engine->restore_room(
        name, room.config, logrec::Recovery::tickets_for_restore(room, engine_minus_wall));
    if (st.is_ok() && room.draw) st = engine->restore_draw(name, *room.draw);
    if (!st.is_ok()) __builtin_trap();  // the scan passed a log start-up refuses
    (void)engine->export_tickets(name);
  }
  engine->run_all();
}

}  // namespace
}  // namespace anteroom::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace anteroom;
  using namespace anteroom::fuzz;
  std::string log(reinterpret_cast<const char*>(data), size);
  (void)logrec::scan_log(log, nullptr);  // as `anteroom check-log` reads it
  logrec::Recovery recovery;
  const logrec::LogScan scan = logrec::scan_log(with_good_crcs(std::move(log)), &recovery);
  if (scan.end != logfmt::Reader::End::kCorrupt && !recovery.rooms().empty()) restore(recovery);
  return 0;
}
