// Admission cookies a thread has read through already: the gate's hot path. A visitor's
// browser sends the same cookie with every request until the gate renews it, and reading one
// costs two base64url decodes, a JSON parse, a signature check and a SHA-256 of its key; a
// cookie whose every byte is one that verified before verifies again (the signer's keys are
// fixed for the process's life), so the gate keeps, per thread, the claims of the last
// cookies that verified and whose key matched their cnf, keyed by the room and the cookie's
// exact bytes. What may have changed since is checked on every use as before: the token's
// exp, and the ticket itself (it must still hold a slot).
//
// A fixed-size, direct-mapped table (a new entry replaces whatever held its slot): memory is
// bounded whatever the traffic, and a forged cookie never enters it.
//
// Thread safety: each thread has its own table (thread_local); no locks.
#pragma once

#include <string_view>

#include "server/app/token.h"

namespace anteroom {

struct MemoAdmission {
  TokenClaims claims;  // verified
  std::string key;     // the cookie's key (its hash is claims.key_hash), or empty
};

// The remembered admission for exactly this room and cookie value, or nullptr. Valid until
// the thread's next memo_store.
const MemoAdmission* memo_find(std::string_view room, std::string_view cookie_value);
// Remembers a cookie value whose token verified for `room` with these claims and whose key
// (if the token states cnf) hashes to it.
void memo_store(std::string_view room, std::string_view cookie_value, const MemoAdmission& a);

}  // namespace anteroom
