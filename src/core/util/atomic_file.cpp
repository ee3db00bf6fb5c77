#include "util/atomic_file.hpp"

#include "util/strings.hpp"
#include "util/test_delay.hpp"
#include "util/unique_fd.hpp"

#include <array>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <random>
#include <sys/stat.h>
#include <unistd.h>

namespace rmcp {

namespace {

std::string random_suffix() {
    static constexpr std::string_view k_chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    thread_local std::mt19937_64 engine{std::random_device{}()};
    std::string out(6, 'X');
    for (auto& c : out) c = k_chars[engine() % k_chars.size()];
    return out;
}
}  // namespace

Status write_file_atomic_at(int dirfd, std::string_view name, std::string_view content, mode_t mode,
                            const std::string& shown) {
    std::string temp;
    UniqueFd fd;
    for (int attempt = 0; attempt < 100 && !fd; ++attempt) {
        temp = std::string(name) + std::string(k_temp_infix) + random_suffix();
        fd.reset(::openat(dirfd, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
        if (!fd && errno != EEXIST) return os_error("creating temporary file for", shown, errno);
    }
    if (!fd) return os_error("creating temporary file for", shown, EEXIST);
    const auto fail = [&](std::string_view doing, int err) {
        fd.reset();
        ::unlinkat(dirfd, temp.c_str(), 0);
        return os_error(doing, shown, err);
    };
    std::size_t written = 0;
    while (written < content.size()) {
        const ssize_t n = ::write(fd.get(), content.data() + written, content.size() - written);
        if (n < 0) {
            if (errno == EINTR) continue;
            return fail("writing", errno);
        }
        written += static_cast<std::size_t>(n);
    }
    if (::fchmod(fd.get(), mode) != 0) return fail("setting mode of", errno);
    if (::fsync(fd.get()) != 0) return fail("syncing", errno);
    if (::close(fd.release()) != 0) return fail("closing", errno);
    test_hooks::delay_at("rename");  // test-only (util/test_delay.hpp); off by default
    if (::renameat(dirfd, temp.c_str(), dirfd, std::string(name).c_str()) != 0)
        return fail("renaming into place", errno);
    ::fsync(dirfd);  // the rename itself; a failure here cannot be undone any more
    return ok_status();
}

Status write_file_atomic(const std::string& path, std::string_view content, mode_t mode) {
    UniqueFd dir(::open(std::string(dirname(path)).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dir) return os_error("creating temporary file for", path, errno);
    const auto slash = path.rfind('/');
    return write_file_atomic_at(dir.get(), slash == std::string::npos ? path : path.substr(slash + 1), content, mode,
                                path);
}

}  // namespace rmcp
