// How Conn reads an HTTP/1.1 response head, or a whole response, from its buffer: Beast's
// parser (boost/beast/http), fed the bytes already read and more as they come. Chunked
// bodies, bodies to the end of the connection and Content-Length bodies alike. For conn.cc
// and conn_streams.cc only: it brings Beast in, which the loadgen's headers keep out.
#pragma once

#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include "loadgen/conn.h"

namespace anteroom::loadgen {

namespace http = boost::beast::http;

struct ConnParse {
  // Parses from the connection's buffer into `p` until its head (`head_only`) or the whole
  // message is done; the bytes it took are consumed, what follows stays buffered.
  static net::awaitable<Fail> feed(Conn& c, http::basic_parser<false>& p, bool head_only);
};

}  // namespace anteroom::loadgen
