// `anteroom health [HOST:PORT] [PATH]`: the container's health check, with no shell or curl
// in the image. One GET of PATH (default /readyz) from HOST:PORT (default: the port of
// ANTEROOM_LISTEN, else 8080, on 127.0.0.1; a wildcard host means the loopback), at most
// 3 s; prints the answer's status line and exits 0 on 200, 1 on anything else (another
// status, no answer), 2 on bad arguments.
#pragma once

namespace anteroom {

int health_main(int argc, char** argv);

}  // namespace anteroom
