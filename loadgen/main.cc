// Placeholder until the loadgen issue lands.
#include <cstdio>

int main() {
  std::printf("anteroom-loadgen is not implemented yet (see the loadgen issue).\n");
  return 2;
}
