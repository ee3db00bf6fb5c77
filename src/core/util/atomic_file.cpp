#include "util/atomic_file.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace rmcp {

namespace {
Error os_error(std::string_view doing, const std::string& path, int err) {
    return Error{std::string(doing), path, std::strerror(err), ExitCode::environment, err};
}

std::string directory_of(const std::string& path) {
    const auto slash = path.rfind('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}
}  // namespace

Status write_file_atomic(const std::string& path, std::string_view content, mode_t mode) {
    std::string temp = path + ".rmcp-tmp-XXXXXX";
    const int fd = ::mkstemp(temp.data());
    if (fd < 0) return os_error("creating temporary file for", path, errno);
    const auto fail = [&](std::string_view doing, int err) {
        ::close(fd);
        ::unlink(temp.c_str());
        return os_error(doing, path, err);
    };
    std::size_t written = 0;
    while (written < content.size()) {
        const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
        if (n < 0) {
            if (errno == EINTR) continue;
            return fail("writing", errno);
        }
        written += static_cast<std::size_t>(n);
    }
    if (::fchmod(fd, mode) != 0) return fail("setting mode of", errno);
    if (::fsync(fd) != 0) return fail("syncing", errno);
    if (::close(fd) != 0) {
        const int err = errno;
        ::unlink(temp.c_str());
        return os_error("closing", path, err);
    }
    if (::rename(temp.c_str(), path.c_str()) != 0) {
        const int err = errno;
        ::unlink(temp.c_str());
        return os_error("renaming into place", path, err);
    }
    const int dfd = ::open(directory_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        ::fsync(dfd);
        ::close(dfd);
    }
    return ok_status();
}

}  // namespace rmcp
