// Seed 000's WebSocket protocol (docs/seeds.md, docs/api.md) for one socket of one room,
// without the socket: the transport hands over each text message and each push, and sends
// what comes back.
//   client: {"type":"ENTER"|"CHECK_QUEUE_STATUS"|"LEAVE","userId":"u"} (ENTER may carry
//           "key", "userToken", "pow" and, in a room that asks for one, "invite")
//   server: ALLOWED / QUEUE on ENTER, QUEUE_STATUS on CHECK (with "inReplyTo"), VISITOR_COUNT
//           to every socket of the room when counts change, ALLOWED pushed the moment a
//           waiting user is admitted, QUEUE_STATUS pushed when the user's position moves,
//           ERROR on anything malformed (the socket stays open).
// Messages carry extra fields where they help: position, ticket, seq, status, token.
//
// Thread safety: one socket's calls come one at a time (its strand); the Api is shared.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/app/api.h"

namespace anteroom {

class WsProtocol {
 public:
  WsProtocol(const Api& api, std::string room) : api_(api), room_(std::move(room)) {}

  // The second half of an answer that waited for the engine: run on the socket's strand,
  // it returns the messages to send.
  using Step = std::function<std::vector<std::string>(WsProtocol&)>;
  // What a client message asks the transport to do.
  struct Reply {
    std::vector<std::string> now;  // send these at once, in order
    // Set when the answer waits for the engine (ENTER until its join is durable or, on a
    // cluster node, applied; LEAVE likewise): the transport calls later(resume) once;
    // resume(step) comes on any thread; the transport runs step on the socket's strand.
    std::function<void(std::function<void(Step)>)> later;
    bool understood = false;  // a well-formed ENTER, CHECK_QUEUE_STATUS or LEAVE
  };
  Reply on_message(std::string_view text);
  // The VISITOR_COUNT greeting for a new socket (empty if the room is gone).
  std::string greeting() const;
  // The watched ticket may have changed: the push to send, if it did.
  std::optional<std::string> on_change();

  const std::string& room() const { return room_; }
  // The client's address (ApiRequest::client): ENTER is a join, held to the room's
  // ip_joins_per_minute and pow_difficulty like one over HTTP (ENTER may carry
  // "pow": {"challenge", "nonce"}).
  void set_client(std::string client) { client_ = std::move(client); }
  // The ticket this socket entered with (empty before ENTER): the transport watches it and
  // heartbeats it while the socket is open.
  const std::string& ticket() const { return ticket_; }

 private:
  Reply enter(const std::string& uid, const UserProof& proof, const Api::PowSolution* pow,
              const std::optional<std::string>& invite);
  std::string client_;
  std::vector<std::string> entered(const Result<JoinResult>& j, const std::string& uid,
                                   const UserProof& proof);
  static std::string user_in_line_message();
  std::string check(const std::string& uid);
  Reply leave(const std::string& uid);
  // ENTER's answer (entering) or a push after a change.
  std::string ticket_message(const TicketView& v, bool entering);
  static std::string error(std::string_view message);
  static Reply say(std::string message);

  const Api& api_;
  const std::string room_;
  std::string user_, ticket_;
  TicketState last_state_ = TicketState::kWaiting;
  uint64_t last_position_ = 0;
};

}  // namespace anteroom
