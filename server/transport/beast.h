// Boost.Beast and Asio for the few files that speak the protocols. Heavy to compile: include
// it only from session and listener sources, never from a header that many files include.
#pragma once

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

namespace anteroom {
namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace websocket = boost::beast::websocket;
namespace net = boost::asio;
using tcp = boost::asio::ip::tcp;
}  // namespace anteroom
