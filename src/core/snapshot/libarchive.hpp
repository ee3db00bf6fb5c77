// libarchive, loaded when the first snapshot is written rather than when rmcp starts.
//
// Only `rmcp snapshot` writes archives. Linked normally, libarchive brings libxml2, ICU,
// nettle, liblzma, libbz2, liblz4 and libacl into every start of every command — about
// 1 ms of dynamic loading that `rmcp run -- CMD` would pay before starting CMD
// (docs/PERFORMANCE.md, "Start-up"). Its static archive cannot help: the pax writer pulls
// in libarchive's format table and with it every writer's dependencies.
//
// The declarations still come from <archive.h>, so every pointer has the library's own type.
#pragma once

#include "util/error.hpp"

#include <archive.h>
#include <archive_entry.h>

namespace rmcp {

struct LibArchive {
    decltype(&::archive_write_new) write_new;
    decltype(&::archive_write_add_filter_gzip) write_add_filter_gzip;
    decltype(&::archive_write_set_format_pax_restricted) write_set_format_pax_restricted;
    decltype(&::archive_write_open) write_open;
    decltype(&::archive_write_header) write_header;
    decltype(&::archive_write_data) write_data;
    decltype(&::archive_write_close) write_close;
    decltype(&::archive_write_free) write_free;
    decltype(&::archive_error_string) error_string;
    decltype(&::archive_entry_new) entry_new;
    decltype(&::archive_entry_free) entry_free;
    decltype(&::archive_entry_set_pathname) entry_set_pathname;
    decltype(&::archive_entry_set_filetype) entry_set_filetype;
    decltype(&::archive_entry_set_perm) entry_set_perm;
    decltype(&::archive_entry_set_size) entry_set_size;
    decltype(&::archive_entry_set_symlink) entry_set_symlink;
};

// The library, loaded once per process (thread-safe); or why it could not be:
// "loading libarchive.so.13: <dlerror>" (exit code 3, environment).
Result<const LibArchive*> libarchive();

}  // namespace rmcp
