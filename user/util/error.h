// The one error type of the library: a human message naming cause and fix,
// and the errno of the failed call (0 when none).
#pragma once

#include <stdexcept>
#include <string>

namespace jmt {

class Error : public std::runtime_error {
public:
    explicit Error(const std::string &message, int err = 0) : std::runtime_error(message), errno_(err) {}
    int error_number() const { return errno_; }

private:
    int errno_;
};

}  // namespace jmt
