// The fast pass (--fast-pass-secret): a cookie nginx checks by itself, with its secure_link
// module, so that a visitor admitted a moment ago is let through without nginx asking the
// gate again (deploy/nginx/anteroom-fast-pass.conf, docs/integrations.md "nginx's fast
// pass"). Its value is "HASH.EXPIRES": EXPIRES in Unix seconds, HASH the unpadded base64url
// MD5 of EXPIRES, a space, the host (nginx's $host: lower case, no port), a space and the
// secret (the first space keeps digits from moving between the expiry and the host),
// exactly what that config's secure_link_md5 line computes. MD5 is what secure_link offers;
// the secret makes it a keyed check nginx can do without a subrequest.
//
// The trade-off, said in the docs: for up to --fast-pass-seconds the gate is not asked, so
// a ticket that ends (left, evicted, idle) still passes nginx that long, and a host whose
// addresses more than one room protects gets no fast pass (it names the host, not a room).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace anteroom {

constexpr std::string_view kFastPassCookie = "anteroom_fast";

// The cookie's value for `host` until `expires_at`.
std::string fast_pass_value(std::string_view secret, std::string_view host, int64_t expires_at);

// A host as nginx's $host gives it (lower case, no port, at most 255 of A-Z a-z 0-9 . -), or
// empty if `host` is not one.
std::string fast_pass_host(std::string_view host);

}  // namespace anteroom
