// Which room protects a request the forward-auth gate is asked about: every room's match
// rules in one list, the longest path prefix first (docs/api.md, "The forward-auth gate").
// Built from the rooms' settings (gate_settings.h) and built again when a room's
// configuration changes (RoomService::config_version).
//
// Thread safety: immutable once built; share it.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/model.h"
#include "server/app/gate_settings.h"

namespace anteroom {

// A room as the gate sees it.
struct GateIndexRoom {
  std::string name;
  GateSettings settings;
  std::vector<uint32_t> weights;  // the lanes'
  std::vector<RoomConfig::Pass> passes;
};

class GateIndex {
 public:
  using Room = GateIndexRoom;

  explicit GateIndex(const std::vector<RoomInfo>& rooms);

  // The room whose rule fits `host` (gate_host's form: a port stays) and the plain `path`
  // best: the longest path prefix, then a rule that names the host over one that does not;
  // null when no rule fits. A rule fits when its prefix starts the plain path, the `raw`
  // one (as sent, not decoded: what an origin may route on) or the plain one in any case.
  const Room* find(std::string_view host, std::string_view path, std::string_view raw = {}) const;
  // Whether `room` is the only one any rule for `host` (lower case, no port; a rule's port
  // is not looked at) can pick: then a pass naming the host names the room.
  bool sole_room(std::string_view host, const Room* room) const;
  // A room's settings; null for a room with none set (the defaults) or none at all.
  const Room* room(std::string_view name) const;
  size_t rules() const { return entries_.size(); }

 private:
  struct Entry {
    std::string host;    // empty: any host
    std::string prefix;  // empty: any path
    size_t room;
  };
  std::vector<Entry> entries_;  // longest prefix first, host-naming first among equals
  std::vector<Room> rooms_;
  std::unordered_map<std::string_view, size_t> by_name_;
};

// A host as the gate compares it: lower case, a trailing dot dropped, a port kept.
std::string gate_host(std::string_view host);
// The host a request asked for, lower case; a rule without a port also fits it with one.
bool host_fits(std::string_view rule_host, std::string_view host);

}  // namespace anteroom
