// A value that is known, absent, or unreadable (with path and errno); unknown is never 0
// (ARCHITECTURE.md, principle 3).
#pragma once

#include <string>
#include <utility>

namespace rmcp {

enum class FactState { absent, known, unreadable };

template <class T>
class Fact {
public:
    Fact() = default;
    static Fact known(T v, std::string source = {}) {
        Fact f;
        f.m_state = FactState::known;
        f.m_value = std::move(v);
        f.m_source = std::move(source);
        return f;
    }
    static Fact absent(std::string source = {}) {
        Fact f;
        f.m_source = std::move(source);
        return f;
    }
    static Fact unreadable(std::string source, int err) {
        Fact f;
        f.m_state = FactState::unreadable;
        f.m_source = std::move(source);
        f.m_errno = err;
        return f;
    }

    [[nodiscard]] FactState state() const { return m_state; }
    [[nodiscard]] bool is_known() const { return m_state == FactState::known; }
    explicit operator bool() const { return is_known(); }
    // Only valid when known.
    [[nodiscard]] const T& value() const { return m_value; }
    const T& operator*() const { return m_value; }
    const T* operator->() const { return &m_value; }
    [[nodiscard]] T value_or(T fallback) const { return is_known() ? m_value : std::move(fallback); }
    // Where the value was, or would have been, read (a host path); may be empty.
    [[nodiscard]] const std::string& source() const { return m_source; }
    [[nodiscard]] int error() const { return m_errno; }

private:
    FactState m_state = FactState::absent;
    T m_value{};
    std::string m_source;
    int m_errno = 0;
};

}  // namespace rmcp
