#include "engine/user_index.h"

#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>

namespace anteroom {

UserIndex::UserIndex(uint32_t bucket_bits) : bucket_bits_(bucket_bits) {}

UserIndex::~UserIndex() {
  std::atomic<UserNode*>* b = buckets_.load(std::memory_order_acquire);
  if (b == nullptr) return;
  for (size_t i = 0; i < (size_t{1} << bucket_bits_); ++i) {
    UserNode* n = b[i].load(std::memory_order_relaxed);
    while (n != nullptr) {
      UserNode* next = n->next_;
      n->~UserNode();
      std::free(n);
      n = next;
    }
  }
  delete[] b;
}

std::atomic<UserNode*>* UserIndex::buckets() {
  std::atomic<UserNode*>* b = buckets_.load(std::memory_order_acquire);
  if (b != nullptr) return b;
  size_t n = size_t{1} << bucket_bits_;
  auto* fresh = new std::atomic<UserNode*>[n];
  for (size_t i = 0; i < n; ++i) fresh[i].store(nullptr, std::memory_order_relaxed);
  if (buckets_.compare_exchange_strong(b, fresh, std::memory_order_acq_rel)) {
    bytes_.fetch_add(n * sizeof(fresh[0]), std::memory_order_relaxed);
    return fresh;
  }
  delete[] fresh;
  return b;
}

UserNode* UserIndex::make_node(std::string_view user) {
  void* mem = std::malloc(sizeof(UserNode) + user.size());
  if (mem == nullptr) throw std::bad_alloc();
  auto* node = new (mem) UserNode();
  node->len_ = static_cast<uint32_t>(user.size());
  std::memcpy(reinterpret_cast<char*>(node + 1), user.data(), user.size());
  return node;
}

UserNode* UserIndex::find_or_insert(std::string_view user, bool* inserted) {
  *inserted = false;
  std::atomic<UserNode*>& head =
      buckets()[std::hash<std::string_view>{}(user) & ((size_t{1} << bucket_bits_) - 1)];
  UserNode* fresh = nullptr;
  // acquire: a node seen through the list has its name and next_ visible.
  UserNode* seen = head.load(std::memory_order_acquire);
  UserNode* stop = nullptr;  // nodes from here on were already searched
  for (;;) {
    for (UserNode* n = seen; n != stop; n = n->next_) {
      if (n->name() == user) {
        if (fresh != nullptr) {
          fresh->~UserNode();
          std::free(fresh);
        }
        return n;
      }
    }
    if (fresh == nullptr) fresh = make_node(user);
    fresh->next_ = seen;
    // release: publishes the node's fields to readers who load the head.
    if (head.compare_exchange_weak(seen, fresh, std::memory_order_acq_rel,
                                   std::memory_order_acquire)) {
      bytes_.fetch_add(sizeof(UserNode) + user.size(), std::memory_order_relaxed);
      *inserted = true;
      return fresh;
    }
    // Someone linked ahead of us: search only the new nodes, then try again.
    stop = fresh->next_;
  }
}

}  // namespace anteroom
