#include "kb/content_hash.hpp"

#include "util/sha256.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <vector>

namespace rmcp::kb {

Result<std::string> content_hash(const std::filesystem::path& dir) {
    std::error_code ec;
    std::vector<std::string> names;
    for (auto it = std::filesystem::directory_iterator(dir, ec); !ec && it != std::filesystem::directory_iterator();
         it.increment(ec))
        if (it->path().extension() == ".toml" && it->is_regular_file(ec))
            names.push_back(it->path().filename().string());
    if (ec) return Error{"hashing knowledge base", dir.string(), ec.message(), ExitCode::environment, ec.value()};
    std::sort(names.begin(), names.end());  // std::string compares bytes, as LC_ALL=C sorts
    Sha256 listing;
    for (const auto& name : names) {
        std::ifstream in(dir / name, std::ios::binary);
        if (!in)
            return Error{"hashing knowledge-base file", (dir / name).string(), "cannot open", ExitCode::environment};
        std::ostringstream text;
        text << in.rdbuf();
        listing.update(sha256_hex(text.str()) + "  " + name + "\n");
    }
    return listing.hex().substr(0, 16);
}

}  // namespace rmcp::kb
