// What the unit tests need around a call that prints diagnostics or reads the environment:
// the printed text read back (CapturedStream), and environment variables put back as they
// were when the test ends (SavedEnvironment).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rmcp::testing_support {

// A FILE* that writes into memory (open_memstream), read back by text(); give file() to a
// Diagnostics. file() is null when the stream could not be opened: check it in the test.
class CapturedStream {
public:
    CapturedStream() : m_file(::open_memstream(&m_buffer, &m_size)) {}
    ~CapturedStream() {
        if (m_file) std::fclose(m_file);
        std::free(m_buffer);
    }
    CapturedStream(const CapturedStream&) = delete;
    CapturedStream& operator=(const CapturedStream&) = delete;

    [[nodiscard]] std::FILE* file() const { return m_file; }
    std::string text() {
        std::fflush(m_file);
        return {m_buffer, m_size};
    }

private:
    char* m_buffer = nullptr;
    std::size_t m_size = 0;
    std::FILE* m_file;
};

// The named variables' values (or their absence) when constructed, restored when destroyed:
// a test may set or unset them freely.
class SavedEnvironment {
public:
    SavedEnvironment(std::initializer_list<const char*> names) {
        for (const char* name : names) {
            const char* value = std::getenv(name);
            m_saved.emplace_back(name, value ? std::optional<std::string>(value) : std::nullopt);
        }
    }
    ~SavedEnvironment() {
        for (const auto& [name, value] : m_saved)
            if (value) ::setenv(name.c_str(), value->c_str(), 1);
            else ::unsetenv(name.c_str());
    }
    SavedEnvironment(const SavedEnvironment&) = delete;
    SavedEnvironment& operator=(const SavedEnvironment&) = delete;

private:
    std::vector<std::pair<std::string, std::optional<std::string>>> m_saved;
};

}  // namespace rmcp::testing_support
