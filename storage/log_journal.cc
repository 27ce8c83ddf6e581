#include "storage/log_journal.h"

#include <string>

#include "storage/log_records.h"

namespace anteroom {

uint64_t LogJournal::record(const Change& change) {
  thread_local std::string framed;  // reused: a join should not allocate here
  framed.clear();
  logrec::encode_change(change, wall_minus_engine_ms_, &framed);
  auto pos = log_.append(framed);
  if (next_ != nullptr) next_->record(change);
  if (log_.sync() != LogWriter::Sync::kAlways) return 0;
  // A failed log stays failed, so waiting for the last position reports the error.
  return pos.is_ok() ? pos.value() : ~uint64_t{0};
}

}  // namespace anteroom
