// Every parser in src/core/detect/parsers.cpp, on well-formed and real-world-noisy input.
#include "detect/parsers.hpp"

#include <gtest/gtest.h>

#include <string>

using namespace rmcp;
using namespace std::string_literals;

// --- KFD properties ------------------------------------------------------------------------------

TEST(KfdProperties, ParsesKeyValueLines) {
    const auto p = parse_kfd_properties("cpu_cores_count 0\nsimd_count 80\ngfx_target_version 100301\n"
                                        "vendor_id 4098\ndevice_id 29663\nunique_id 18446744073709551615\n");
    EXPECT_EQ(p.get("simd_count"), 80U);
    EXPECT_EQ(p.get("gfx_target_version"), 100301U);
    EXPECT_EQ(p.get("device_id"), 0x73DFU);
    EXPECT_EQ(p.get("unique_id"), 18446744073709551615ULL);
    EXPECT_FALSE(p.get("fw_version").has_value());
    EXPECT_TRUE(p.bad_lines.empty());
}

TEST(KfdProperties, ReportsBadLinesAndKeepsTheRest) {
    const auto p = parse_kfd_properties("simd_count 80\n"
                                        "garbage\n"                                 // 2: no value
                                        "fw_version -1\n"                           // 3: signed
                                        "max_engine_clk_fcompute 2a\n"              // 4: not decimal
                                        "\n"                                        // blank: skipped, not bad
                                        "drm_render_minor 128\r\n"                  // CRLF tolerated
                                        "local_mem_size 99999999999999999999999\n"  // 7: overflow
                                        "  num_xcc\t1  \n");                        // tab separator and padding
    EXPECT_EQ(p.get("simd_count"), 80U);
    EXPECT_EQ(p.get("drm_render_minor"), 128U);
    EXPECT_EQ(p.get("num_xcc"), 1U);
    EXPECT_FALSE(p.get("fw_version").has_value());
    EXPECT_EQ(p.bad_lines, (std::vector<unsigned>{2, 3, 4, 7}));
}

TEST(KfdProperties, LaterDuplicateWins) { EXPECT_EQ(parse_kfd_properties("flags 1\nflags 13\n").get("flags"), 13U); }

TEST(KfdProperties, EmptyInput) {
    const auto p = parse_kfd_properties("");
    EXPECT_TRUE(p.values.empty());
    EXPECT_TRUE(p.bad_lines.empty());
}

// --- amdgpu.ids ----------------------------------------------------------------------------------

TEST(AmdgpuIds, RealFormat) {
    const auto ids = parse_amdgpu_ids("# List of AMDGPU IDs\n#\n# Syntax:\n# device_id,\trevision_id,\tproduct_name\n\n"
                                      "1.0.0\n731F,\tCA,\tAMD Radeon RX 5600 XT\n744C,\tC8,\tAMD Radeon RX 7900 XTX\n");
    EXPECT_EQ(ids.version, "1.0.0");
    EXPECT_EQ(ids.lookup(0x731F, 0xCA), "AMD Radeon RX 5600 XT");
    EXPECT_EQ(ids.lookup(0x744C, 0xC8), "AMD Radeon RX 7900 XTX");
    EXPECT_FALSE(ids.lookup(0x731F, 0xC1).has_value());
    EXPECT_TRUE(ids.bad_lines.empty());
}

TEST(AmdgpuIds, SpacesInsteadOfTabsAndLowerCaseHex) {
    const auto ids = parse_amdgpu_ids("1.0.0\n73df, c1, AMD Radeon RX 6700 XT\n73FF,C7,AMD Radeon RX 6600  \n");
    EXPECT_EQ(ids.lookup(0x73DF, 0xC1), "AMD Radeon RX 6700 XT");
    EXPECT_EQ(ids.lookup(0x73FF, 0xC7), "AMD Radeon RX 6600");
}

TEST(AmdgpuIds, NamesMayContainCommas) {
    const auto ids = parse_amdgpu_ids("1.0.0\n7310,\t00,\tAMD Radeon Pro W5700X, Apple edition\n");
    EXPECT_EQ(ids.lookup(0x7310, 0x00), "AMD Radeon Pro W5700X, Apple edition");
}

TEST(AmdgpuIds, CommentsAnywhereAndBadLines) {
    const auto ids = parse_amdgpu_ids("1.0.0\n"
                                      "# a comment between entries\n"
                                      "ZZZZ,\tC1,\tNot hex\n"         // 3
                                      "731F,\tC1\n"                   // 4: no name
                                      "731F,\tC1,\t   \n"             // 5: empty name
                                      "1731F,\tC1,\tToo wide\n"       // 6: device > 0xffff
                                      "731F,\t1C1,\tRevision wide\n"  // 7: revision > 0xff
                                      "731F,\tC1,\tAMD Radeon RX 5700 XT\n");
    EXPECT_EQ(ids.lookup(0x731F, 0xC1), "AMD Radeon RX 5700 XT");
    EXPECT_EQ(ids.bad_lines, (std::vector<unsigned>{3, 4, 5, 6, 7}));
    EXPECT_EQ(ids.names.size(), 1U);
}

TEST(AmdgpuIds, VersionLineOnlyBeforeEntries) {
    // A lone word after entries is a bad line, not a second version.
    const auto ids = parse_amdgpu_ids("1.0.0\n731F,\tCA,\tAMD Radeon RX 5600 XT\n2.0.0\n");
    EXPECT_EQ(ids.version, "1.0.0");
    EXPECT_EQ(ids.bad_lines, (std::vector<unsigned>{3}));
}

TEST(AmdgpuIds, NoVersionLine) {
    const auto ids = parse_amdgpu_ids("731F,\tCA,\tAMD Radeon RX 5600 XT\n");
    EXPECT_TRUE(ids.version.empty());
    EXPECT_EQ(ids.lookup(0x731F, 0xCA), "AMD Radeon RX 5600 XT");
}

// --- os-release ----------------------------------------------------------------------------------

TEST(OsRelease, QuotingStyles) {
    const auto kv = parse_os_release("# comment\nNAME=\"Ubuntu\"\nID=ubuntu\nVERSION_ID='22.04'\n"
                                     "PRETTY_NAME=\"Debian GNU/Linux 12 \\\"bookworm\\\"\"\n"
                                     "SINGLE='it\\'s'\n  ID_LIKE = debian  \nBROKEN\n=novalue\nEMPTY=\n");
    EXPECT_EQ(kv.at("NAME"), "Ubuntu");
    EXPECT_EQ(kv.at("ID"), "ubuntu");
    EXPECT_EQ(kv.at("VERSION_ID"), "22.04");
    EXPECT_EQ(kv.at("PRETTY_NAME"), "Debian GNU/Linux 12 \"bookworm\"");
    EXPECT_EQ(kv.at("SINGLE"), "it\\'s");  // single quotes: no escapes, as in the shell
    EXPECT_EQ(kv.at("ID_LIKE"), "debian");
    EXPECT_EQ(kv.at("EMPTY"), "");
    EXPECT_FALSE(kv.contains("BROKEN"));
    EXPECT_EQ(kv.size(), 7U);
}

TEST(OsRelease, UnbalancedQuoteKeptVerbatim) { EXPECT_EQ(parse_os_release("NAME=\"Arch\n").at("NAME"), "\"Arch"); }

// --- /proc/self/status ---------------------------------------------------------------------------

TEST(ProcStatus, UidGidGroups) {
    const auto st = parse_proc_status("Name:\trmcp\nUmask:\t0022\nUid:\t1000\t1001\t1002\t1003\n"
                                      "Gid:\t100\t100\t100\t100\nFDSize:\t64\nGroups:\t4 24 27 109 \nNStgid:\t1\n");
    EXPECT_EQ(st.uid, 1000U);  // the real uid is the first
    EXPECT_EQ(st.gid, 100U);
    EXPECT_EQ(st.groups, (std::vector<std::uint64_t>{4, 24, 27, 109}));
}

TEST(ProcStatus, EmptyGroupsAndMissingFields) {
    const auto st = parse_proc_status("Uid:\t0\t0\t0\t0\nGroups:\t\n");
    EXPECT_EQ(st.uid, 0U);
    EXPECT_FALSE(st.gid.has_value());
    EXPECT_TRUE(st.groups.empty());
    EXPECT_FALSE(parse_proc_status("").uid.has_value());
}

TEST(ProcStatus, GarbageGroupSkipped) {
    EXPECT_EQ(parse_proc_status("Groups:\t4 x 44\n").groups, (std::vector<std::uint64_t>{4, 44}));
    EXPECT_FALSE(parse_proc_status("Uid:\tabc\n").uid.has_value());
}

// --- /etc/group, /etc/passwd ---------------------------------------------------------------------

TEST(GroupFile, EntriesAndMembers) {
    const auto g = parse_group_file("root:x:0:\nvideo:x:44:alex, sam\nrender:x:109:alex\n# comment\n"
                                    "broken\nnogid:x::\n:x:5:\nusers:x:100\n");
    ASSERT_EQ(g.size(), 4U);
    EXPECT_EQ(g[0].name, "root");
    EXPECT_TRUE(g[0].members.empty());
    EXPECT_EQ(g[1].gid, 44U);
    EXPECT_EQ(g[1].members, (std::vector<std::string>{"alex", "sam"}));
    EXPECT_EQ(g[2].name, "render");
    EXPECT_EQ(g[3].name, "users");  // three fields are enough
    EXPECT_EQ(g[3].gid, 100U);
}

TEST(Passwd, NameAndHomeForUid) {
    const std::string passwd = "root:x:0:0:root:/root:/bin/bash\nalex:x:1000:1000:Alex,,,:/home/alex:/bin/bash\n"
                               "short:x:1001\n";
    EXPECT_EQ(passwd_name_for(passwd, 1000), "alex");
    EXPECT_EQ(passwd_home_for(passwd, 1000), "/home/alex");
    EXPECT_EQ(passwd_home_for(passwd, 0), "/root");
    EXPECT_FALSE(passwd_name_for(passwd, 1001).has_value());  // too few fields
    EXPECT_FALSE(passwd_name_for(passwd, 4242).has_value());
}

// --- environ -------------------------------------------------------------------------------------

TEST(Environ, NulSeparated) {
    const auto env = parse_environ("HOME=/home/alex\0HSA_OVERRIDE_GFX_VERSION=10.3.0\0EQ=a=b\0NOEQ\0=x\0EMPTY=\0"s);
    EXPECT_EQ(env.at("HOME"), "/home/alex");
    EXPECT_EQ(env.at("HSA_OVERRIDE_GFX_VERSION"), "10.3.0");
    EXPECT_EQ(env.at("EQ"), "a=b");
    EXPECT_EQ(env.at("EMPTY"), "");
    EXPECT_EQ(env.size(), 4U);
}

TEST(Environ, NoTrailingNulAndDuplicates) {
    const auto env = parse_environ("A=1\0A=2\0B=3"s);
    EXPECT_EQ(env.at("A"), "2");  // the last one wins, as getenv on a rebuilt environment
    EXPECT_EQ(env.at("B"), "3");
}

// --- torch/version.py ----------------------------------------------------------------------------

TEST(PythonAssignments, Torch1Form) {
    const auto v = parse_python_assignments("__version__ = '1.13.1+rocm5.2'\ndebug = False\ncuda = None\n"
                                            "git_version = '49444c3e546bf240bed24a101e747422d1f8a0ee'\n"
                                            "hip = '5.2.21151-afdc89f8'\n");
    EXPECT_EQ(v.at("__version__"), "1.13.1+rocm5.2");
    EXPECT_EQ(v.at("hip"), "5.2.21151-afdc89f8");
    ASSERT_TRUE(v.contains("cuda"));
    EXPECT_FALSE(v.at("cuda").has_value());  // None is known-empty, not absent
    EXPECT_FALSE(v.contains("debug"));       // not a string
}

TEST(PythonAssignments, AnnotatedForm) {
    const auto v = parse_python_assignments("from typing import Optional\n\n"
                                            "__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']\n"
                                            "__version__ = '2.3.1+rocm6.0'\ncuda: Optional[str] = None\n"
                                            "hip: Optional[str] = \"6.0.32830-d62f6a171\"\n# hip = 'commented'\n");
    EXPECT_EQ(v.at("__version__"), "2.3.1+rocm6.0");
    EXPECT_EQ(v.at("hip"), "6.0.32830-d62f6a171");
    EXPECT_FALSE(v.at("cuda").has_value());
    EXPECT_FALSE(v.contains("__all__"));
    EXPECT_FALSE(v.contains("from typing import Optional"));
}

TEST(PythonAssignments, CudaBuild) {
    const auto v = parse_python_assignments("__version__ = '2.4.0+cu121'\ncuda = '12.1'\nhip = None\n");
    EXPECT_EQ(v.at("cuda"), "12.1");
    EXPECT_FALSE(v.at("hip").has_value());
}

TEST(PythonAssignments, IgnoresNonAssignments) {
    const auto v = parse_python_assignments("if x == 'a':\n    pass\nf(a='b')\nmismatched = 'a\"\n= 'x'\n");
    EXPECT_TRUE(v.empty());
}

// --- C defines -----------------------------------------------------------------------------------

TEST(CDefines, HipVersionHeader) {
    const auto d = parse_c_defines("// Auto-generated by cmake\n#ifndef HIP_VERSION_H\n#define HIP_VERSION_H\n\n"
                                   "#define HIP_VERSION_MAJOR 6\n#define HIP_VERSION_MINOR 1\n"
                                   "#define HIP_VERSION_PATCH 40091\n#define HIP_VERSION_GITHASH \"a8dbc0c19\"\n"
                                   "#  define   ROCM_VERSION_MAJOR\t5 // comment\n#define NOVALUE\n#endif\n");
    EXPECT_EQ(d.at("HIP_VERSION_MAJOR"), "6");
    EXPECT_EQ(d.at("HIP_VERSION_PATCH"), "40091");
    EXPECT_EQ(d.at("HIP_VERSION_GITHASH"), "a8dbc0c19");
    EXPECT_EQ(d.at("ROCM_VERSION_MAJOR"), "5");
    EXPECT_FALSE(d.contains("NOVALUE"));
    EXPECT_FALSE(d.contains("HIP_VERSION_H"));
}

// --- dpkg status ---------------------------------------------------------------------------------

TEST(DpkgStatus, InstalledVersionOfOnePackage) {
    const std::string status =
        "Package: hipcc\nStatus: install ok installed\nVersion: 5.2.3-12\n\n"
        "Package: libamdhip64-5\nStatus: install ok installed\nPriority: optional\nVersion: 5.2.3-8\n"
        "Description: HIP\n continuation line\n\n"
        "Package: rocminfo\nStatus: deinstall ok config-files\nVersion: 5.2.3-3\n\n"
        "Package: libamdhip64-5-dbg\nStatus: install ok installed\nVersion: 9.9\n";
    EXPECT_EQ(dpkg_installed_version(status, "libamdhip64-5"), "5.2.3-8");
    EXPECT_EQ(dpkg_installed_version(status, "hipcc"), "5.2.3-12");
    EXPECT_FALSE(dpkg_installed_version(status, "rocminfo").has_value());     // removed, config left
    EXPECT_FALSE(dpkg_installed_version(status, "libamdhip64").has_value());  // exact names only
    EXPECT_EQ(dpkg_installed_version(status, "libamdhip64-5-dbg"), "9.9");    // last stanza, no blank line
}

TEST(DpkgStatus, VersionBeforeStatusAndCrlf) {
    EXPECT_EQ(dpkg_installed_version("Package: a\r\nVersion: 1:2.0-1\r\nStatus: install ok installed\r\n", "a"),
              "1:2.0-1");
    EXPECT_FALSE(dpkg_installed_version("", "a").has_value());
}

// A key whose value is garbage, negative or too big for 64 bits is remembered as bad (with
// its line), never read as 0 or as a value from an earlier line.
TEST(KfdProperties, BadValuesAreRememberedByKey) {
    const auto p = parse_kfd_properties("gfx_target_version 100300\n"
                                        "simd_count -1\n"
                                        "drm_render_minor 99999999999999999999999\n"
                                        "fw_version\n"
                                        "gfx_target_version garbage\n"
                                        "vendor_id 4098\n");
    EXPECT_FALSE(p.get("gfx_target_version"));  // the last line wins, and it is bad
    EXPECT_EQ(p.bad_line_of("gfx_target_version"), 5U);
    EXPECT_EQ(p.bad_line_of("simd_count"), 2U);
    EXPECT_EQ(p.bad_line_of("drm_render_minor"), 3U);
    EXPECT_EQ(p.bad_line_of("fw_version"), 4U);
    EXPECT_EQ(p.get("vendor_id"), 4098U);
    EXPECT_FALSE(p.bad_line_of("vendor_id"));
    EXPECT_EQ(p.bad_lines, (std::vector<unsigned>{2, 3, 4, 5}));
    const auto fixed = parse_kfd_properties("simd_count x\nsimd_count 80\n");
    EXPECT_EQ(fixed.get("simd_count"), 80U);
    EXPECT_FALSE(fixed.bad_line_of("simd_count"));
}
