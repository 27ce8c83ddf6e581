// `anteroom check-log [--fix] DIR`: reads DIR/anteroom.log, says how it ends, and with
// --fix cuts it at the first bad byte (like redis-check-aof --fix). Exit status: 0 clean
// or fixed, 1 damaged and not fixed, 2 usage or I/O error.
#pragma once

namespace anteroom {

int check_log_main(int argc, char** argv);

}  // namespace anteroom
