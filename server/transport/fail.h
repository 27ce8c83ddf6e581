// Transport errors, said once: every async step that fails calls fail(ec, what) and stops
// (the Beast examples' shape). The ordinary ends of a connection (the peer closed or reset
// it, a timeout or shutdown cancelled it) are expected and not logged; anything else is
// written to stderr with what failed, at most a few lines a second so a flood cannot fill
// the log (the lines left out are counted in the next one).
#pragma once

#include <boost/system/error_code.hpp>

namespace anteroom {

// True for the errors that end connections every day: eof, reset, aborted, closed.
bool ordinary_end(const boost::system::error_code& ec);

// Logs `ec` with `what` ("http read", "ws write", ...) unless it is an ordinary end.
void fail(const boost::system::error_code& ec, const char* what);

}  // namespace anteroom
