// Errors are values at module boundaries (ARCHITECTURE.md, principle 11).
#pragma once

#include <cassert>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace rmcp {

// The one exit-code table (docs/exit-codes.md); README and docs/exit-codes.md
// document the same numbers.
enum class ExitCode : int {
    success = 0,
    findings = 1,           // doctor: findings at/above --fail-on; explain: nothing recognised
    usage = 2,              // bad flag, malformed input file, unreadable log
    environment = 3,        // cannot read what must be read, missing interpreter
    apply_rolled_back = 4,  // patch apply failed and was rolled back
    apply_incomplete = 5,   // patch apply failed and rollback is incomplete
};

// "<doing what> <path>: <cause>" — the parts of every rmcp message.
struct Error {
    std::string doing;  // "reading", "parsing knowledge-base file", ...
    std::string path;   // may be empty; for parse errors "file:line"
    std::string cause;  // strerror text or a parser's explanation
    ExitCode code = ExitCode::environment;
    int os_error = 0;  // errno when the failure came from the OS, else 0

    [[nodiscard]] std::string message() const {
        std::string out = doing;
        if (!path.empty()) {
            out += ' ';
            out += path;
        }
        if (!cause.empty()) {
            out += ": ";
            out += cause;
        }
        return out;
    }
};

// A minimal expected<T, Error>; std::expected is C++23 and we build as C++20.
// The one errno -> Error conversion: "<doing> <path>: <strerror(err)>", with errno kept.
inline Error os_error(std::string_view doing, std::string_view path, int err, ExitCode code = ExitCode::environment) {
    return Error{std::string(doing), std::string(path), std::strerror(err), code, err};
}

template <class T>
class [[nodiscard]] Result {
public:
    Result(T value) : m_v(std::in_place_index<0>, std::move(value)) {}      // NOLINT(google-explicit-constructor)
    Result(Error error) : m_v(std::in_place_index<1>, std::move(error)) {}  // NOLINT(google-explicit-constructor)

    [[nodiscard]] bool ok() const { return m_v.index() == 0; }
    explicit operator bool() const { return ok(); }

    T& value() & {
        assert(ok());
        return std::get<0>(m_v);
    }
    const T& value() const& {
        assert(ok());
        return std::get<0>(m_v);
    }
    T&& value() && {
        assert(ok());
        return std::get<0>(std::move(m_v));
    }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }

    [[nodiscard]] const Error& error() const {
        assert(!ok());
        return std::get<1>(m_v);
    }

private:
    std::variant<T, Error> m_v;
};

struct Unit {};
using Status = Result<Unit>;
inline Status ok_status() { return Unit{}; }

}  // namespace rmcp
