#include "server/app/ws_protocol.h"

#include <boost/json.hpp>

#include "server/app/push_hub.h"

namespace anteroom {
namespace {
namespace json = boost::json;

// Seed 000's texts, kept in Korean so its client shows what it always showed.
constexpr const char* kAllowedText = "입장이 허용되었습니다!";  // "You may enter!"
constexpr const char* kQueuedText =
    "대기열에 추가되었습니다. 순서를 기다려 주세요.";          // "Added to the line. Please wait."
constexpr const char* kAllowedNow = "입장이 허용되었습니다.";  // "Entry allowed."
constexpr const char* kNotInLine = "대기열에서 찾을 수 없습니다.";  // "Not found in the line."
std::string place_text(uint64_t position) {
  return "현재 대기 순번: " + std::to_string(position);  // "Your place now: N"
}
std::string ended_text(TicketState s) {
  return std::string("대기 순번이 만료되었습니다 (") + state_name(s) + ")";  // "Your place ended"
}

}  // namespace

std::string WsProtocol::error(std::string_view message) {
  json::object o;
  o["type"] = "ERROR";
  o["message"] = message;
  return json::serialize(o);
}

std::string WsProtocol::user_in_line_message() {
  json::object o;
  o["type"] = "ERROR";
  o["code"] = "user_in_line";
  o["message"] = "this user already holds a place in this room on another connection";
  return json::serialize(o);
}

std::string WsProtocol::greeting() const {
  auto info = api_.engine().room_info(room_);
  if (!info.is_ok()) return {};
  return PushHub::visitor_count(info->counters.active, info->counters.waiting,
                                info->config.capacity);
}

WsProtocol::Reply WsProtocol::say(std::string message) {
  Reply r;
  r.now.push_back(std::move(message));
  return r;
}

WsProtocol::Reply WsProtocol::on_message(std::string_view text) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) return say(error("messages must be JSON objects"));
  const json::object& o = v.as_object();
  const json::value* type = o.if_contains("type");
  const json::value* user = o.if_contains("userId");
  if (type == nullptr || !type->is_string()) return say(error("type must be a string"));
  if (user == nullptr || !user->is_string() || !valid_user(user->as_string())) {
    return say(error("userId must be a string of 1-128 characters"));
  }
  const std::string uid(user->as_string());
  Reply r;
  if (*type == "ENTER") {
    // Beyond seed 000: a client may bind its ticket to a key, and prove a returning user.
    UserProof proof;
    if (const json::value* k = o.if_contains("key"); k != nullptr && k->is_string())
      proof.key = std::string(k->as_string());
    if (const json::value* t = o.if_contains("userToken"); t != nullptr && t->is_string())
      proof.user_token = std::string(t->as_string());
    std::optional<std::string> invite;
    if (const json::value* i = o.if_contains("invite"); i != nullptr && i->is_string())
      invite = std::string(i->as_string());
    std::optional<Api::PowSolution> pow;
    if (const json::value* w = o.if_contains("pow"); w != nullptr && w->is_object()) {
      const json::value* c = w->as_object().if_contains("challenge");
      const json::value* n = w->as_object().if_contains("nonce");
      if (c != nullptr && c->is_string() && n != nullptr && n->is_string()) {
        pow = Api::PowSolution{std::string(c->as_string()), std::string(n->as_string())};
      }
    }
    r = enter(uid, proof, pow ? &*pow : nullptr, invite);
  } else if (*type == "CHECK_QUEUE_STATUS") {
    r = say(check(uid));
  } else if (*type == "LEAVE") {
    r = leave(uid);
  } else {
    return say(error("unknown type; expected ENTER, CHECK_QUEUE_STATUS or LEAVE"));
  }
  r.understood = true;
  return r;
}

WsProtocol::Reply WsProtocol::enter(const std::string& given_uid, const UserProof& given_proof,
                                    const Api::PowSolution* pow,
                                    const std::optional<std::string>& invite) {
  std::string uid = given_uid;
  UserProof proof = given_proof;
  uint8_t lane = JoinRequest::kLastLane;
  auto no = api_.invite_terms(room_, invite, &uid, &lane, &proof);
  Api::ClusterSpend once;
  if (!no) no = api_.refuse_join(room_, client_, pow, uid, proof, &once);
  if (no) {
    std::string why = std::string(no->code) + ": ";
    why += no->status == 429 ? "too many joins from your address; try again in " +
                                   std::to_string(no->retry_after_s) + " s"
                             : no->message;
    return say(error(why));
  }
  std::optional<KeyHash> key;
  if (proof.key) key = hash_key(*proof.key);
  Reply r;
  r.later = [api = &api_, room = room_, uid, proof, key, lane,
             once = std::move(once)](const std::function<void(Step)>& resume) {
    api->spend_once(once, [api, room, uid, proof, key, lane, resume](bool first) {
      if (!first) {
        return resume([](WsProtocol&) {
          return std::vector<std::string>{error(std::string("pow_invalid: ") + Api::kPowUsed)};
        });
      }
      JoinRequest req{uid, key};
      req.lane = lane;
      api->join(room, req, [uid, proof, resume](Result<JoinResult> j) {
        resume([j = std::move(j), uid, proof](WsProtocol& p) { return p.entered(j, uid, proof); });
      });
    });
  };
  return r;
}

std::vector<std::string> WsProtocol::entered(const Result<JoinResult>& j, const std::string& uid,
                                             const UserProof& proof) {
  if (!j.is_ok()) return {error(j.status().message())};
  // A user's place goes back only to its own visitor: this socket, or one with proof.
  const bool same_socket = uid == user_ && ticket_ == id_view(j->ticket.id);
  if (!j->created && !same_socket && !api_.proves_user(room_, uid, proof, j.value())) {
    return {user_in_line_message()};
  }
  if (!same_socket && !api_.stream_allowed(room_, id_view(j->ticket.id))) {
    return {error("this ticket already has its most open streams; close one")};
  }
  user_ = uid;
  ticket_ = std::string(id_view(j->ticket.id));
  return {ticket_message(j->ticket, true)};
}

std::string WsProtocol::check(const std::string& uid) {
  json::object o;
  o["type"] = "QUEUE_STATUS";
  o["inReplyTo"] = "CHECK_QUEUE_STATUS";  // tells the answer from a push of the same type
  auto info = api_.engine().room_info(room_);
  if (!info.is_ok()) return error(info.status().message());
  if (uid != user_ || ticket_.empty()) {
    o["allowed"] = false;
    o["message"] = kNotInLine;
  } else {
    auto v = api_.engine().status(room_, ticket_);
    if (!v.is_ok()) return error(v.status().message());
    last_state_ = v->state;
    last_position_ = v->position;
    bool allowed = holds_slot(v->state);
    o["allowed"] = allowed;
    o["message"] = allowed ? std::string(kAllowedNow) : place_text(v->position);
    o["position"] = v->position;
    o["ticket"] = ticket_;
    o["seq"] = v->seq;
    o["status"] = state_name(v->state);
    if (allowed) o["token"] = api_.token_for(room_, v.value());
  }
  o["visitorCount"] = info->counters.active;
  o["queueCount"] = info->counters.waiting;
  o["maxCount"] = info->config.capacity;
  return json::serialize(o);
}

WsProtocol::Reply WsProtocol::leave(const std::string& uid) {
  if (uid != user_ || ticket_.empty())
    return say(error("this user has not entered on this socket"));
  Reply r;
  r.later = [api = &api_, room = room_, ticket = ticket_](std::function<void(Step)> resume) {
    api->engine().leave_async(room, ticket, [resume = std::move(resume)](Result<TicketView> v) {
      resume([v = std::move(v)](WsProtocol& p) {
        if (!v.is_ok()) return std::vector{error(v.status().message())};
        p.last_state_ = v->state;
        return std::vector<std::string>{};
      });
    });
  };
  return r;
}

std::string WsProtocol::ticket_message(const TicketView& v, bool entering) {
  last_state_ = v.state;
  last_position_ = v.position;
  json::object o;
  if (holds_slot(v.state)) {
    o["type"] = "ALLOWED";
    o["message"] = kAllowedText;
    o["token"] = api_.token_for(room_, v);
  } else if (v.state == TicketState::kWaiting) {
    o["type"] = entering ? "QUEUE" : "QUEUE_STATUS";
    o["message"] = entering ? std::string(kQueuedText) : place_text(v.position);
    if (!entering) o["allowed"] = false;
    o["position"] = v.position;
    o["visitorCount"] = v.active;
    o["queueCount"] = v.waiting;
    o["maxCount"] = v.capacity;
  } else {
    o["type"] = "QUEUE_STATUS";
    o["allowed"] = false;
    o["message"] = ended_text(v.state);
  }
  o["status"] = state_name(v.state);
  o["ticket"] = std::string(id_view(v.id));
  o["seq"] = v.seq;
  return json::serialize(o);
}

std::optional<std::string> WsProtocol::on_change() {
  if (ticket_.empty()) return std::nullopt;
  auto v = api_.engine().peek(room_, ticket_);
  if (!v.is_ok() || (v->state == last_state_ && v->position == last_position_)) {
    return std::nullopt;
  }
  return ticket_message(v.value(), false);
}

}  // namespace anteroom
