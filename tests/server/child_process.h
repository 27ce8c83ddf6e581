// Starting the real anteroom executable from a test: spawn with a pipe on stdout, read its
// lines, wait (bounded) for it to exit.
#pragma once

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <regex>
#include <string>
#include <vector>

#include "tests/server/harness.h"

namespace anteroom::testing {

struct Child {
  pid_t pid = -1;
  FILE* out = nullptr;
};

// Runs args[0] with stdout (and, with `merge_stderr`, stderr) on a pipe. `max_files`, if
// set, is the child's descriptor limit, soft and hard. The child stops at once on SIGTERM
// (ANTEROOM_DRAIN_SECONDS=0) unless its arguments give --drain-seconds.
inline Child spawn(const std::vector<std::string>& args, rlim_t max_files = 0,
                   bool merge_stderr = false) {
  // Everything the child needs is made before fork: between fork and exec a child of a
  // process with threads may only make async-signal-safe calls.
  std::vector<std::string> env_lines;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "ANTEROOM_DRAIN_SECONDS=", 23) != 0) env_lines.emplace_back(*e);
  }
  env_lines.emplace_back("ANTEROOM_DRAIN_SECONDS=0");
  std::vector<char*> envp, argv;
  for (auto& e : env_lines) envp.push_back(e.data());
  envp.push_back(nullptr);
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  Child c;
  c.pid = fork();
  if (c.pid == 0) {
    if (max_files != 0) {
      rlimit lim{max_files, max_files};
      setrlimit(RLIMIT_NOFILE, &lim);
    }
    dup2(fds[1], 1);
    if (merge_stderr) dup2(fds[1], 2);
    close(fds[0]);
    execve(argv[0], argv.data(), envp.data());
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

// Everything the child writes until it closes its end.
inline std::string all_output(FILE* f) {
  std::string out, l;
  while (!(l = line(f)).empty()) out += l;
  return out;
}

// CPU seconds (user + system) the process has used so far.
inline double cpu_seconds(pid_t pid) {
  FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r");
  if (f == nullptr) return -1;
  char buf[1024];
  size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = 0;
  // Fields after the command name (which may hold spaces) start after the last ')'.
  const char* p = std::strrchr(buf, ')');
  unsigned long utime = 0, stime = 0;
  if (p == nullptr || std::sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
                                  &utime, &stime) != 2)
    return -1;
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
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
