#include "snapshot/libarchive.hpp"

#include <dlfcn.h>

#include <string>
#include <type_traits>

#ifndef RMCP_LIBARCHIVE_SONAME
#error "RMCP_LIBARCHIVE_SONAME must name libarchive's shared object (set by src/core/CMakeLists.txt)"
#endif

namespace rmcp {

namespace {

Result<const LibArchive*> load() {
    const std::string soname = RMCP_LIBARCHIVE_SONAME;
    // Never unloaded: the pointers live as long as the process.
    void* handle = ::dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char* why = ::dlerror();
        return Error{"loading", soname, why ? why : "dlopen failed", ExitCode::environment};
    }
    static LibArchive api{};
    std::string missing;
    const auto bind = [&](auto& fn, const char* name) {
        void* sym = ::dlsym(handle, name);
        if (!sym) missing += missing.empty() ? name : std::string(", ") + name;
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(sym);
    };
    bind(api.write_new, "archive_write_new");
    bind(api.write_add_filter_gzip, "archive_write_add_filter_gzip");
    bind(api.write_set_format_pax_restricted, "archive_write_set_format_pax_restricted");
    bind(api.write_open, "archive_write_open");
    bind(api.write_header, "archive_write_header");
    bind(api.write_data, "archive_write_data");
    bind(api.write_close, "archive_write_close");
    bind(api.write_free, "archive_write_free");
    bind(api.error_string, "archive_error_string");
    bind(api.entry_new, "archive_entry_new");
    bind(api.entry_free, "archive_entry_free");
    bind(api.entry_set_pathname, "archive_entry_set_pathname");
    bind(api.entry_set_filetype, "archive_entry_set_filetype");
    bind(api.entry_set_perm, "archive_entry_set_perm");
    bind(api.entry_set_size, "archive_entry_set_size");
    bind(api.entry_set_symlink, "archive_entry_set_symlink");
    if (!missing.empty()) return Error{"loading", soname, "missing functions: " + missing, ExitCode::environment};
    return &api;
}

}  // namespace

Result<const LibArchive*> libarchive() {
    static const Result<const LibArchive*> loaded = load();
    return loaded;
}

}  // namespace rmcp
