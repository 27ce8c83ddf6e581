// anteroom: parse flags, load secrets, start the server, stop gracefully on SIGINT/SIGTERM.
#include <csignal>
#include <cstdio>
#include <thread>

#include "server/options.h"
#include "server/secrets.h"
#include "server/server.h"

int main(int argc, char** argv) {
  using namespace anteroom;
  std::string exit_now;
  auto options = parse_options(argc, argv, &exit_now);
  if (!exit_now.empty()) {
    std::fputs(exit_now.c_str(), stdout);
    return 0;
  }
  if (!options.is_ok()) {
    std::fprintf(stderr, "anteroom: %s (see --help)\n", options.status().message().c_str());
    return 2;
  }
  Options o = options.value();
  auto secrets = load_secrets(o.data_dir, o.token_secret, o.admin_key);
  if (!secrets.is_ok()) {
    std::fprintf(stderr, "anteroom: %s\n", secrets.status().message().c_str());
    return 1;
  }
  if (o.persistence) {
    std::fprintf(stderr,
                 "anteroom: note: persistence is not implemented yet; the line lives in memory "
                 "only (pass --no-persistence to silence this)\n");
  }

  // Block the stop signals in every thread; one thread waits for them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  Server server(o, secrets->admin_key, secrets->token_secret);
  auto port = server.start();
  if (!port.is_ok()) {
    std::fprintf(stderr, "anteroom: %s\n", port.status().message().c_str());
    return 1;
  }
  std::printf("anteroom listening on http://%s:%u\n", o.host().c_str(),
              static_cast<unsigned>(port.value()));
  if (o.admin_key.empty()) std::printf("admin key: %s\n", secrets->admin_key.c_str());
  if (!o.demo_room.empty()) {
    std::printf("demo room: open http://%s:%u/wait/%s in a browser\n", o.host().c_str(),
                static_cast<unsigned>(port.value()), o.demo_room.c_str());
  }
  std::fflush(stdout);

  int sig = 0;
  sigwait(&stop_signals, &sig);
  std::fprintf(stderr, "anteroom: %s received, shutting down\n",
               sig == SIGINT ? "SIGINT" : "SIGTERM");
  server.stop();
  return 0;
}
