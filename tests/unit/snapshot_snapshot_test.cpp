// The snapshot (docs/security.md, "snapshot"): the selection of what detect read, the archive,
// and the reductions: what of passwd, group and the
// dpkg status goes into a support bundle, and what counts as a binary.
#include "snapshot/snapshot.hpp"

#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

using namespace rmcp;
namespace fs = std::filesystem;

namespace {

Root fixture(const std::string& name) {
    auto root = Root::open(fs::path(RMCP_SOURCE_DIR) / "tests/fixtures" / name);
    if (!root.ok()) throw std::runtime_error(root.error().message());
    return std::move(*root);
}

const SnapshotEntry* find_entry(const SnapshotSummary& s, std::string_view path) {
    for (const auto& e : s.entries)
        if (e.path == path) return &e;
    return nullptr;
}

}  // namespace

TEST(SnapshotReduction, PasswdKeepsOnlyTheUsersLine) {
    const std::string passwd = "root:x:0:0:root:/root:/bin/bash\n"
                               "alice:x:1000:1000:Alice,,,:/home/alice:/bin/bash\n"
                               "bob:x:1001:1001:Bob:/home/bob:/bin/zsh\n"
                               "broken line\n"
                               "eve:x:10000:1000::/home/eve:/bin/sh\n";
    EXPECT_EQ(reduce_passwd(passwd, 1000), "alice:x:1000:1000:Alice,,,:/home/alice:/bin/bash\n");
    EXPECT_EQ(reduce_passwd(passwd, 0), "root:x:0:0:root:/root:/bin/bash\n");
    EXPECT_EQ(reduce_passwd(passwd, std::nullopt), "");
    EXPECT_EQ(reduce_passwd(passwd, 4242), "");
}

TEST(SnapshotReduction, GroupKeepsDeviceGroupsAndOnlyTheUsersMembership) {
    const std::string group = "root:x:0:\nvideo:x:44:alice,bob\nrender:x:105:bob\nsudo:x:27:alice\n";
    EXPECT_EQ(reduce_group(group, {44, 105}, "alice"), "video:x:44:alice\nrender:x:105:\n");
    EXPECT_EQ(reduce_group(group, {}, "alice"), "");
}

TEST(SnapshotReduction, DpkgStatusKeepsRocmHipAndTorch) {
    const std::string status = "Package: bash\nVersion: 5.2\n\n"
                               "Package: libamdhip64-5\nStatus: install ok installed\nVersion: 5.2.3-8\n\n"
                               "Package: procps\nVersion: 4\n\n"
                               "Package: hipcc\nVersion: 5.2.3-12\n\n"
                               "Package: python3-torch\nVersion: 1.13.1\n\n"
                               "Package: librocrand1\nVersion: 5.2.3\n";
    const auto out = reduce_dpkg_status(status);
    EXPECT_EQ(out, "Package: libamdhip64-5\nStatus: install ok installed\nVersion: 5.2.3-8\n\n"
                   "Package: hipcc\nVersion: 5.2.3-12\n\n"
                   "Package: python3-torch\nVersion: 1.13.1\n\n"
                   "Package: librocrand1\nVersion: 5.2.3\n");
}

TEST(SnapshotReduction, BinariesAreElfOrHaveNulBytes) {
    EXPECT_TRUE(looks_binary(std::string("\x7f"
                                         "ELF\x02\x01",
                                         6)));
    EXPECT_TRUE(looks_binary(std::string("abc\0def", 7)));
    EXPECT_FALSE(looks_binary("ID=debian\nVERSION_ID=12\n"));
    EXPECT_FALSE(looks_binary(std::string(5000, 'x') + std::string(1, '\0')));  // only the first 4 KiB decide
}

TEST(SnapshotByValue, EachPathDetectReadsHasItsKind) {
    EXPECT_EQ(snapshot_kind("/home/u/.local/lib/python3.11/site-packages/torch/version.py"),
              SnapshotKind::torch_version);
    EXPECT_EQ(snapshot_kind("/etc/os-release"), SnapshotKind::os_release);
    EXPECT_EQ(snapshot_kind("/usr/lib/os-release"), SnapshotKind::os_release);
    EXPECT_EQ(snapshot_kind("/opt/rocm-6.2.0/.info/version"), SnapshotKind::version_text);
    EXPECT_EQ(snapshot_kind("/usr/include/hip/hip_version.h"), SnapshotKind::c_header);
    EXPECT_EQ(snapshot_kind("/sys/module/amdgpu/initstate"), SnapshotKind::sysfs_value);
    EXPECT_EQ(snapshot_kind("/usr/share/libdrm/amdgpu.ids"), SnapshotKind::generic);
    EXPECT_EQ(snapshot_kind_cap(SnapshotKind::generic), k_snapshot_file_cap);
    EXPECT_EQ(snapshot_kind_cap(SnapshotKind::torch_version), 64U << 10);
}

TEST(SnapshotByValue, ContentMustBeOfTheKindExpected) {
    EXPECT_EQ(snapshot_content_problem(SnapshotKind::torch_version,
                                       "from typing import Optional\n__version__ = '2.3.0+rocm6.0'\nhip = '6.0'\n",
                                       false),
              "");
    EXPECT_NE(snapshot_content_problem(SnapshotKind::torch_version, "-----BEGIN OPENSSH PRIVATE KEY-----\n", false),
              "");
    EXPECT_NE(snapshot_content_problem(SnapshotKind::torch_version, "__version__ = '2.3'\n", true).find("cap"),
              std::string::npos);
    EXPECT_EQ(snapshot_content_problem(SnapshotKind::os_release, "# c\n\nID=debian\nPRETTY_NAME=\"Debian 12\"\n",
                                       false),
              "");
    EXPECT_NE(snapshot_content_problem(SnapshotKind::os_release, "ID=debian\nroot:x:0:0::/root:/bin/sh\n", false)
                  .find("line 2"),
              std::string::npos);
    EXPECT_NE(snapshot_content_problem(SnapshotKind::os_release, std::string("ID=x\n\0", 6), false).find("binary"),
              std::string::npos);
    EXPECT_EQ(snapshot_content_problem(SnapshotKind::version_text, "6.2.0-66\n", false), "");
    EXPECT_NE(snapshot_content_problem(SnapshotKind::version_text, "ssh-rsa AAAAB3 user@host\n", false), "");
    EXPECT_EQ(snapshot_content_problem(SnapshotKind::c_header, "#define HIP_VERSION_MAJOR 6\n", false), "");
    EXPECT_NE(snapshot_content_problem(SnapshotKind::c_header, "password=x\n", false), "");
    EXPECT_EQ(snapshot_content_problem(SnapshotKind::sysfs_value, "live\n", false), "");
    EXPECT_NE(snapshot_content_problem(SnapshotKind::sysfs_value, std::string("a\0b", 3), false), "");
    EXPECT_EQ(snapshot_content_problem(SnapshotKind::generic, std::string("a\0b", 3), true), "");
}

TEST(SnapshotByValue, ALinkMayNotLeaveItsDirectoryOutsideTheSystemTrees) {
    // Inside the link's own directory: always.
    EXPECT_TRUE(snapshot_link_allowed("/home/u/venv/lib64", "/home/u/venv/lib"));
    EXPECT_TRUE(snapshot_link_allowed("/home/u/t/version.py", "/home/u/t/sub/real.py"));
    // D5: out of its directory into the user's keys.
    EXPECT_FALSE(snapshot_link_allowed("/home/u/t/version.py", "/home/u/.ssh/id_rsa"));
    EXPECT_FALSE(snapshot_link_allowed("/home/u/t/version.py", "/etc/shadow"));
    EXPECT_FALSE(snapshot_link_allowed("/home/u/t/version.py", "/home/u/tx/version.py"));  // a prefix is not inside
    // The distribution's layout between system trees; never from them into a home.
    EXPECT_TRUE(snapshot_link_allowed("/etc/os-release", "/usr/lib/os-release"));
    EXPECT_TRUE(snapshot_link_allowed("/sys/class/drm/card0", "/sys/devices/pci0000:00/0000:03:00.0/drm/card0"));
    EXPECT_TRUE(snapshot_link_allowed("/opt/rocm", "/etc/alternatives/rocm"));
    EXPECT_FALSE(snapshot_link_allowed("/etc/os-release", "/home/u/.aws/credentials"));
    EXPECT_FALSE(snapshot_link_allowed("/etc/os-release", "/root/.ssh/id_rsa"));
    EXPECT_TRUE(snapshot_link_allowed("/home", "/usr/home"));  // a link in / stays inside /
}

TEST(SnapshotSelection, WhatDetectReadsWithLinksKeptAsLinks) {
    const Root root = fixture("rx6800xt-gfx1030-rocm61");
    auto listed = list_snapshot(root);
    ASSERT_TRUE(listed.ok()) << listed.error().message();
    const auto& s = *listed;
    EXPECT_TRUE(std::is_sorted(s.entries.begin(), s.entries.end(),
                               [](const SnapshotEntry& a, const SnapshotEntry& b) { return a.path < b.path; }));
    EXPECT_EQ(s.archive_bytes, 0U);  // a listing writes nothing
    EXPECT_GT(s.files, 0U);
    EXPECT_GT(s.links, 0U);
    const auto* rocm = find_entry(s, "/opt/rocm");
    ASSERT_NE(rocm, nullptr);
    EXPECT_EQ(rocm->kind, "link");
    EXPECT_EQ(rocm->size, std::string("/etc/alternatives/rocm").size());
    const auto* render = find_entry(s, "/sys/class/drm/renderD128");
    ASSERT_NE(render, nullptr);
    EXPECT_EQ(render->kind, "link");
    const auto* old_rocm = find_entry(s, "/opt/rocm-5.7.1");
    ASSERT_NE(old_rocm, nullptr);
    EXPECT_EQ(old_rocm->kind, "dir");
    const auto* os_release = find_entry(s, "/etc/os-release");
    ASSERT_NE(os_release, nullptr);
    EXPECT_EQ(os_release->kind, "file");
    EXPECT_EQ(os_release->size,
              fs::file_size(fs::path(RMCP_SOURCE_DIR) / "tests/fixtures/rx6800xt-gfx1030-rocm61/etc/os-release"));
}

TEST(SnapshotSelection, RecordsDeviceNodesAndReadErrors) {
    auto listed = list_snapshot(fixture("container-hidden-gpu"));
    ASSERT_TRUE(listed.ok()) << listed.error().message();
    EXPECT_GT(listed->meta_records, 0U);
    // The environment is reduced, never copied whole.
    const auto* environ = find_entry(*listed, "/proc/self/environ");
    ASSERT_NE(environ, nullptr);
    EXPECT_LT(environ->size,
              fs::file_size(fs::path(RMCP_SOURCE_DIR) / "tests/fixtures/container-hidden-gpu/proc/self/environ"));
}

TEST(SnapshotWrite, TheArchiveHoldsWhatTheListingNames) {
    const Root root = fixture("rx6600-gfx1032");
    const testing_support::ScratchDir scratch("snapshot");
    const fs::path out = scratch / "snap.tar.gz";
    auto written = write_snapshot(root, out);
    if (!written.ok() && written.error().cause.find("libarchive") != std::string::npos) {
        GTEST_SKIP() << written.error().message();
    }
    ASSERT_TRUE(written.ok()) << written.error().message();
    auto listed = list_snapshot(root);
    ASSERT_TRUE(listed.ok());
    EXPECT_TRUE(fs::is_regular_file(out));
    EXPECT_EQ(written->archive_bytes, fs::file_size(out));
    EXPECT_GT(written->archive_bytes, 0U);
    EXPECT_EQ(written->files, listed->files);
    EXPECT_EQ(written->links, listed->links);
    EXPECT_EQ(written->directories, listed->directories);
    std::vector<std::string> a, b;
    for (const auto& e : written->entries) a.push_back(e.path);
    for (const auto& e : listed->entries) b.push_back(e.path);
    EXPECT_EQ(a, b);
    // Nothing but the archive is left next to it (temp file renamed into place).
    EXPECT_EQ(std::distance(fs::directory_iterator(scratch.path()), fs::directory_iterator{}), 1);
}
