// A fresh directory for one test, under GoogleTest's temporary directory (TEST_TMPDIR or
// /tmp), removed with everything in it when the object goes away: the one way the unit tests
// make scratch space.
#pragma once

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

namespace rmcp::testing_support {

class ScratchDir {
public:
    // `prefix` names the directory (rmcp-<prefix>-XXXXXX), so a leftover tells whose it was.
    explicit ScratchDir(std::string_view prefix) {
        std::string tmpl =
            (std::filesystem::path(::testing::TempDir()) / ("rmcp-" + std::string(prefix) + "-XXXXXX")).string();
        if (::mkdtemp(tmpl.data()) == nullptr)
            throw std::runtime_error("mkdtemp " + tmpl + ": " + std::strerror(errno));
        m_path = tmpl;
    }
    ~ScratchDir() {
        std::error_code ignored;
        std::filesystem::remove_all(m_path, ignored);
    }
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;

    const std::filesystem::path& path() const { return m_path; }
    std::filesystem::path operator/(const std::filesystem::path& rest) const { return m_path / rest; }

private:
    std::filesystem::path m_path;
};

}  // namespace rmcp::testing_support
