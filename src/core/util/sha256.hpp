// SHA-256 (FIPS 180-4), for content hashes the user can reproduce with sha256sum: the
// knowledge base's `kb_version` (docs/install.md, "Versions"). Not for anything secret.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace rmcp {

class Sha256 {
public:
    Sha256();
    void update(std::string_view bytes);
    // The digest; the object is spent afterwards.
    std::array<std::uint8_t, 32> finish();
    // Lower-case hex of finish().
    std::string hex();

private:
    void block(const std::uint8_t* p);

    std::array<std::uint32_t, 8> m_state;
    std::array<std::uint8_t, 64> m_buffer{};
    std::size_t m_buffered = 0;
    std::uint64_t m_length = 0;  // bytes
};

std::string sha256_hex(std::string_view bytes);

}  // namespace rmcp
