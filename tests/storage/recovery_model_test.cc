// Recovery as a model: a log cut anywhere recovers to what its whole records say; and
// `always` acknowledges only what is on disk.
#include "storage/persistent_engine.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <random>
#include <sstream>
#include <thread>

#include "engine/ticket_id.h"
#include "storage/log_records.h"
#include "storage/recovery.h"
#include "tests/storage/storage_fixture.h"

namespace anteroom {
namespace {

// Random operations; then the log is cut at every record boundary and inside every record.
// Each cut recovers to exactly what the records before the cut say (replayed into the
// simple Recovery model): same states, positions 1..N in join order, nothing else.
TEST(PersistenceModel, EveryCutRecoversToTheWholeRecordsBeforeIt) {
  fs::path dir = fs::temp_directory_path() / ("anteroom-model-" + std::to_string(getpid()));
  fs::remove_all(dir);
  {
    auto e = open_persistent_engine({dir.string(), LogWriter::Sync::kNo}, EngineOptions{}, nullptr)
                 .value();
    e->put_room("a", manual(3));
    e->put_room("b", manual(0));
    std::mt19937 rng(7);
    std::vector<std::pair<std::string, std::string>> live;
    for (int op = 0; op < 150; ++op) {
      const std::string room = rng() % 2 ? "a" : "b";
      switch (rng() % 6) {
        case 0:
        case 1:
        case 2:
          live.emplace_back(
              room,
              std::string(id_view(
                  e->join(room, rng() % 3 ? "" : "u" + std::to_string(rng() % 10))->ticket.id)));
          break;
        case 3:
          e->admit(room, 1 + rng() % 2);
          break;
        case 4:
          if (!live.empty())
            e->leave(live[rng() % live.size()].first, live[rng() % live.size()].second);
          break;
        case 5:
          if (!live.empty())
            e->activate(live[rng() % live.size()].first, live[rng() % live.size()].second);
          break;
      }
    }
  }
  std::string log;
  {
    std::ifstream in(dir / "anteroom.log", std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    log = s.str();
  }
  std::vector<size_t> cuts;
  logfmt::Reader reader(log);
  logfmt::Record rec;
  while (reader.next(&rec)) {
    cuts.push_back(rec.offset);
    cuts.push_back(rec.offset + logfmt::kHeaderSize + rec.payload.size() / 2);
  }
  cuts.push_back(log.size());
  fs::path cut_dir = fs::temp_directory_path() / ("anteroom-model-cut-" + std::to_string(getpid()));
  IdCodec* codec = nullptr;
  for (size_t cut : cuts) {
    fs::remove_all(cut_dir);
    fs::create_directories(cut_dir);
    std::ofstream(cut_dir / "anteroom.log", std::ios::binary) << log.substr(0, cut);
    // The model: the whole records before the cut.
    logrec::Recovery model;
    logfmt::Reader r(std::string_view(log).substr(0, cut));
    while (r.next(&rec)) model.apply(logrec::decode(rec).value());
    auto e =
        open_persistent_engine({cut_dir.string(), LogWriter::Sync::kNo}, EngineOptions{}, nullptr);
    ASSERT_TRUE(e.is_ok()) << "cut at " << cut << ": " << e.status().message();
    ASSERT_EQ(e.value()->rooms().size(), model.rooms().size()) << "cut at " << cut;
    if (!model.id_key()) continue;
    IdCodec c(*model.id_key());
    codec = &c;
    for (const auto& [name, room] : model.rooms()) {
      uint64_t waiting_ahead = 0;
      for (const auto& [seq, t] : room.tickets) {
        std::string id(id_view(c.encode(seq, t.tag)));
        auto v = e.value()->peek(name, id);
        ASSERT_TRUE(v.is_ok()) << "cut at " << cut << " seq " << seq;
        ASSERT_EQ(v->state, t.state) << "cut at " << cut << " seq " << seq;
        if (t.state == TicketState::kWaiting) {
          ASSERT_EQ(v->position, ++waiting_ahead) << "cut at " << cut;
        }
      }
      ASSERT_EQ(e.value()->room_info(name)->counters.waiting, waiting_ahead);
    }
  }
  EXPECT_NE(codec, nullptr);
  EXPECT_GT(cuts.size(), 200u);
  fs::remove_all(dir);
  fs::remove_all(cut_dir);
}

TEST(PersistenceAlways, JoinsAreOnDiskWhenAcknowledgedWithGroupCommit) {
  fs::path dir = fs::temp_directory_path() / ("anteroom-always-" + std::to_string(getpid()));
  fs::remove_all(dir);
  auto e =
      open_persistent_engine({dir.string(), LogWriter::Sync::kAlways}, EngineOptions{}, nullptr)
          .value();
  e->put_room("r", manual(0));
  std::vector<std::string> acked[4];
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        auto j = e->join("r", "").value();
        ASSERT_NE(j.durable_at, 0u);
        std::promise<Status> stored;
        e->when_durable(j.durable_at, [&](Status st) { stored.set_value(st); });
        ASSERT_TRUE(stored.get_future().get().is_ok());  // the acknowledgement
        acked[t].emplace_back(id_view(j.ticket.id));
      }
    });
  }
  for (auto& t : threads) t.join();
  // Read the file behind the engine's back: every acknowledged join is in it.
  std::ifstream in(dir / "anteroom.log", std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  std::string log = s.str();
  logrec::Recovery model;
  logfmt::Reader r(log);
  logfmt::Record rec;
  while (r.next(&rec)) model.apply(logrec::decode(rec).value());
  IdCodec codec(*model.id_key());
  size_t found = 0;
  for (auto& ids : acked) {
    for (auto& id : ids) {
      uint64_t seq = 0;
      Tag tag{};
      codec.decode(id, &seq, &tag);
      found += model.rooms().at("r").tickets.count(seq);
    }
  }
  EXPECT_EQ(found, 800u);
  e.reset();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace anteroom
