// Starting the real anteroom executable from a test: spawn with a pipe on stdout, read its
// lines, wait (bounded) for it to exit.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <regex>
#include <string>
#include <vector>

#include "tests/server/harness.h"

namespace anteroom::testing {

struct Child {
  pid_t pid = -1;
  FILE* out = nullptr;
};

inline Child spawn(const std::vector<std::string>& args) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  Child c;
  c.pid = fork();
  if (c.pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(fds[1]);
  c.out = fdopen(fds[0], "r");
  return c;
}

inline std::string line(FILE* f) {
  char buf[512];
  return fgets(buf, sizeof buf, f) != nullptr ? std::string(buf) : std::string();
}

// The exit status, -1 if it had to be killed after `timeout`, -2 if killed by a signal.
inline int wait_exit(pid_t pid, std::chrono::seconds timeout) {
  int status = 0;
  bool exited = eventually([&] { return waitpid(pid, &status, WNOHANG) == pid; }, timeout);
  if (!exited) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -2;
}

// The port from the first line, "anteroom listening on http://127.0.0.1:PORT"; 0 if not.
inline uint16_t listening_port(FILE* out) {
  std::smatch m;
  std::string first = line(out);
  if (!std::regex_search(first, m,
                         std::regex("^anteroom listening on http://127\\.0\\.0\\.1:(\\d+)\n$")))
    return 0;
  return static_cast<uint16_t>(std::stoi(m[1]));
}

}  // namespace anteroom::testing
