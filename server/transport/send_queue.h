// The outgoing messages of one stream (SSE or WebSocket), oldest first. Streams hold a
// message or two at a time and are bounded by --stream-queue, so a vector is enough, and
// unlike std::deque (which allocates a 512-byte block as soon as it exists) an idle queue
// costs nothing: it matters with 19,000 held streams.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace anteroom {

class SendQueue {
 public:
  using Message = std::shared_ptr<const std::string>;
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  const Message& front() const { return items_.front(); }
  void push_back(Message m) { items_.push_back(std::move(m)); }
  void pop_front() {
    items_.erase(items_.begin());
    if (items_.empty() && items_.capacity() > 4) items_.shrink_to_fit();
  }

 private:
  std::vector<Message> items_;
};

}  // namespace anteroom
