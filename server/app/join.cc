// Api: joining, and the rule that a user's place goes back only to the visitor who holds it.
#include <boost/json.hpp>

#include "server/app/api.h"
#include "server/app/gate_index.h"
#include "server/app/keys.h"
#include "server/app/token.h"

namespace anteroom {
namespace json = boost::json;

namespace {

// The body of a join: {"user"?, "key"?, "key_sha256"?, "user_token"?, "pow"?}, every field
// optional.
struct JoinBody {
  std::string user;
  std::optional<KeyHash> key_hash;
  UserProof proof;
  std::optional<Api::PowSolution> pow;
  std::optional<std::string> invite;
  uint8_t lane = JoinRequest::kLastLane;
};

bool read_string(const json::object& o, const char* key, size_t max,
                 std::optional<std::string>* out, ApiResponse* err) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr) return true;
  if (!v->is_string() || v->as_string().empty() || v->as_string().size() > max) {
    *err = error_response(
        400, "invalid_field",
        std::string(key) + " must be a string of 1-" + std::to_string(max) + " bytes");
    return false;
  }
  *out = std::string(v->as_string());
  return true;
}

bool read_join_body(const json::object& o, JoinBody* b, ApiResponse* err) {
  static constexpr std::string_view kFields[] = {"user",       "key", "key_sha256",
                                                 "user_token", "pow", "invite"};
  for (const auto& kv : o) {
    if (std::find(std::begin(kFields), std::end(kFields), kv.key()) == std::end(kFields)) {
      *err = error_response(400, "invalid_field", "unknown field '" + std::string(kv.key()) + "'");
      return false;
    }
  }
  std::optional<std::string> user, key_sha256;
  if (!read_string(o, "user", 512, &user, err) || !read_string(o, "key", 256, &b->proof.key, err) ||
      !read_string(o, "key_sha256", 64, &key_sha256, err) ||
      !read_string(o, "user_token", 4096, &b->proof.user_token, err) ||
      !read_string(o, "invite", 4096, &b->invite, err)) {
    return false;
  }
  if (user && !valid_user(*user)) {
    *err = error_response(400, "invalid_field", kUserRule);
    return false;
  }
  if (user) b->user = *user;
  if (const json::value* pow = o.if_contains("pow")) {
    std::optional<std::string> challenge, nonce;
    const bool shape = pow->is_object() && pow->as_object().size() == 2 &&
                       read_string(pow->as_object(), "challenge", 80, &challenge, err) &&
                       read_string(pow->as_object(), "nonce", ProofOfWork::kMaxNonce, &nonce, err);
    if (!shape || !challenge || !nonce) {
      *err = error_response(400, "invalid_field",
                            "pow must be {\"challenge\": \"...\", \"nonce\": \"...\"} "
                            "(a challenge of up to 80 bytes, a nonce of 1-64)");
      return false;
    }
    b->pow = Api::PowSolution{std::move(*challenge), std::move(*nonce)};
  }
  if (key_sha256) {
    b->key_hash = parse_key_hash(*key_sha256);
    if (!b->key_hash) {
      *err = error_response(400, "invalid_field", "key_sha256 must be 64 lowercase hex characters");
      return false;
    }
  }
  if (b->proof.key) {
    const KeyHash h = hash_key(*b->proof.key);
    if (b->key_hash && !same_hash(*b->key_hash, h)) {
      *err = error_response(400, "invalid_field", "key_sha256 is not the SHA-256 of key");
      return false;
    }
    b->key_hash = h;
  }
  return true;
}

}  // namespace

ApiResponse user_in_line() {
  // Says nothing of the ticket: not its id, its place or its state.
  return error_response(409, "user_in_line",
                        "this user already holds a place in this room; rejoin from the same "
                        "browser (with its key) or with a user_token from the service");
}

std::optional<Api::JoinRefusal> Api::invite_terms(std::string_view room,
                                                  const std::optional<std::string>& invite,
                                                  std::string* user, uint8_t* lane,
                                                  UserProof* proof) const {
  const GateIndexRoom* settings = gate_index()->room(room);
  const bool required = settings != nullptr && settings->settings.invite_only;
  if (!invite) {
    if (!required) return std::nullopt;
    return JoinRefusal{403, "invite_invalid",
                       "this room takes invited visitors only: join with \"invite\", the JWT "
                       "the service gave you"};
  }
  std::string why;
  auto got = read_invite(*invite, options_.user_secret, room, now_ms() / 1000, &why);
  if (!got) return JoinRefusal{403, "invite_invalid", why};
  if (!user->empty() && *user != got->sub) {
    return JoinRefusal{403, "invite_invalid", "the invite is for another user"};
  }
  *user = got->sub;
  proof->invited = true;
  // A lane the room has not (or a room without lanes) is the service's mistake: refused the
  // same way whatever else the room sets, never a place in some other lane.
  if (!got->lane.empty()) {
    *lane = settings != nullptr ? settings->settings.lane_index(got->lane) : JoinRequest::kLastLane;
    if (*lane == JoinRequest::kLastLane) {
      return JoinRefusal{403, "invite_invalid", "the invite names a lane the room has not"};
    }
  }
  return std::nullopt;
}

bool Api::proves_user(std::string_view room, const std::string& user, const UserProof& proof,
                      const JoinResult& r) const {
  if (proof.invited) return true;  // the service signed an invite for this user
  if (proof.key && r.key_hash && same_hash(hash_key(*proof.key), *r.key_hash)) return true;
  if (proof.user_token &&
      user_token_names(*proof.user_token, options_.user_secret, user, room, now_ms() / 1000)) {
    return true;
  }
  auto info = engine_.room_info(room);
  return info.is_ok() && info->config.trust_user;  // names are authenticated upstream
}

void Api::join(std::string_view room, const JoinRequest& request,
               RoomService::Then<JoinResult> then) const {
  engine_.join_async(room, request, [this, then = std::move(then)](Result<JoinResult> r) {
    if (r.is_ok()) metrics_.joined(r->created);
    then(std::move(r));
  });
}

namespace {

const char* pow_problem(PowVerdict v) {
  switch (v) {
    case PowVerdict::kExpired:
      return "the challenge has expired; fetch a new one";
    case PowVerdict::kUsed:
      return Api::kPowUsed;
    case PowVerdict::kTooEasy:
      return "the challenge is easier than the room now asks; fetch a new one";
    default:
      return "the nonce does not solve a challenge this room gave";
  }
}

}  // namespace

std::optional<Api::JoinRefusal> Api::refuse_join(std::string_view room, std::string_view client,
                                                 const PowSolution* pow, const std::string& user,
                                                 const UserProof& proof, ClusterSpend* once) const {
  auto rules = engine_.join_rules(room);
  if (!rules.is_ok()) return std::nullopt;  // the join says why
  // Names are the protected service's to vouch for: with --user-secret, a join that names a
  // user (a new ticket or a return) carries the service's assertion for that user, so a
  // name is never squatted by whoever joins with it first.
  if (!user.empty() && !options_.user_secret.empty() && !rules->trust_user && !proof.invited &&
      !(proof.user_token &&
        user_token_names(*proof.user_token, options_.user_secret, user, room, now_ms() / 1000))) {
    return JoinRefusal{403, "user_token_required",
                       "a join that names a user needs that user's user_token from the service "
                       "(an HS256 JWT, sub = the user, signed with the --user-secret)"};
  }
  PowSolved solved;
  if (const uint8_t setting = rules->pow_difficulty; setting != 0) {
    if (pow == nullptr) {
      return JoinRefusal{403, "pow_required",
                         "this room asks for a proof of work: GET /v1/rooms/" + std::string(room) +
                             "/challenge, then join with \"pow\": {\"challenge\", \"nonce\"}"};
    }
    // Auto: a challenge up to two bits easier than the rate asks now still counts (the rate
    // may have risen while the visitor solved it).
    unsigned required = pow_->difficulty(room, setting, now_ms(), false);
    if (setting == RoomConfig::kPowAuto) required = required > 2 ? required - 2 : 0;
    const PowVerdict v =
        pow_->check(room, pow->challenge, pow->nonce, required, now_ms() / 1000, &solved);
    if (v != PowVerdict::kOk) return JoinRefusal{403, "pow_invalid", pow_problem(v)};
  }
  // Per address: counted before the join, so a refused address costs the room nothing. A
  // bad body or proof is answered first, and not counted; a limited address's proof is not
  // spent, so it cannot fill the record of spent challenges.
  uint32_t retry_after = 0;
  if (!client.empty() && rules->ip_joins_per_minute != 0 &&
      !join_limiter_->allow(room, client, rules->ip_joins_per_minute, now_ms(), &retry_after)) {
    return JoinRefusal{429, "rate_limited", "too many joins from your address; try again later",
                       retry_after};
  }
  if (rules->pow_difficulty != 0) {
    const PowVerdict v = pow_->spend(room, solved, now_ms());
    if (v == PowVerdict::kBusy) {
      return JoinRefusal{503, "overloaded",
                         "too many proofs of work in flight in this room; try again soon", 5};
    }
    if (v != PowVerdict::kOk) return JoinRefusal{403, "pow_invalid", pow_problem(v)};
    if (once != nullptr && engine_.cluster_view() != nullptr) {
      once->key = "pow:" + std::string(room) + ":" + std::to_string(solved.id);
      once->ttl_ms = std::max<int64_t>(solved.expiry * 1000 - now_ms(), 0) + 60'000;
    }
  }
  return std::nullopt;
}

void Api::spend_once(const ClusterSpend& once, std::function<void(bool)> then) const {
  if (once.key.empty()) return then(true);
  engine_.spend(once.key, 1, once.ttl_ms, std::move(then));
}

ApiResponse Api::challenge_route(std::string_view room) const {
  auto rules = engine_.join_rules(room);
  if (!rules.is_ok()) return engine_error(rules.status());
  const unsigned bits = pow_->difficulty(room, rules->pow_difficulty, now_ms(), false);
  const PowChallenge c = pow_->issue(room, bits, now_ms() / 1000);
  json::object o;
  o["challenge"] = c.text;
  o["difficulty"] = c.difficulty;
  o["expires_in"] = c.expires_in_s;
  ApiResponse res;
  res.body = json::serialize(o);
  res.headers.emplace_back("Cache-Control", "no-store");
  return res;
}

ApiResponse Api::join_route(std::string_view room, std::string_view body,
                            std::string_view client) const {
  ApiResponse err;
  auto o = parse_object(body, &err, true);
  if (!o) return err;
  auto b = std::make_shared<JoinBody>();
  if (!read_join_body(*o, b.get(), &err)) return err;
  auto no = invite_terms(room, b->invite, &b->user, &b->lane, &b->proof);
  ClusterSpend once;
  if (!no) no = refuse_join(room, client, b->pow ? &*b->pow : nullptr, b->user, b->proof, &once);
  if (no) {
    ApiResponse res = error_response(no->status, no->code, no->message);
    if (no->status == 429)
      res.headers.emplace_back("Retry-After", std::to_string(no->retry_after_s));
    return res;
  }
  return answer_when([&](const Respond& respond) {
    spend_once(once, [this, room = std::string(room), b, respond](bool first) {
      if (!first) return respond(error_response(403, "pow_invalid", kPowUsed));
      JoinRequest req{b->user, b->key_hash};
      req.lane = b->lane;
      join(room, req, [this, room, b, respond](Result<JoinResult> r) {
        if (!r.is_ok()) return respond(engine_error(r.status()));
        if (!r->created && !proves_user(room, b->user, b->proof, r.value())) {
          return respond(user_in_line());
        }
        ApiResponse res;
        res.status = r->created ? 201 : 200;
        res.body = status_json(room, r->ticket);
        respond(std::move(res));
      });
    });
  });
}

}  // namespace anteroom
