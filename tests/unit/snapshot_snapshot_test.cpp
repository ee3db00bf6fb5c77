// The snapshot's reductions (docs/security.md, "snapshot"): what of passwd, group and the
// dpkg status goes into a support bundle, and what counts as a binary.
#include "snapshot/snapshot.hpp"

#include <gtest/gtest.h>

using namespace rmcp;

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
    EXPECT_TRUE(looks_binary(std::string("\x7f" "ELF\x02\x01", 6)));
    EXPECT_TRUE(looks_binary(std::string("abc\0def", 7)));
    EXPECT_FALSE(looks_binary("ID=debian\nVERSION_ID=12\n"));
    EXPECT_FALSE(looks_binary(std::string(5000, 'x') + std::string(1, '\0')));  // only the first 4 KiB decide
}
