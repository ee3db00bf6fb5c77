// rmcp::Root: metadata parsing, injected errors and stat overrides, in-root link resolution
// by both resolvers (openat2 and the user-space walk, docs/security.md "One resolver").
#include "root/root.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <random>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace rmcp;
namespace fs = std::filesystem;

namespace {
class TempRoot : public ::testing::Test {
protected:
    void SetUp() override {
        std::random_device rd;
        m_dir =
            fs::temp_directory_path() / ("rmcp-root-test-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
        fs::create_directories(m_dir);
    }
    void TearDown() override { fs::remove_all(m_dir); }
    void write(const std::string& rel, const std::string& content) {
        const auto p = m_dir / rel;
        fs::create_directories(p.parent_path());
        std::ofstream(p, std::ios::binary) << content;
    }
    void link(const std::string& rel, const std::string& target) {
        const auto p = m_dir / rel;
        fs::create_directories(p.parent_path());
        fs::create_symlink(target, p);
    }
    Root open_ok() {
        auto r = Root::open(m_dir, m_resolver);
        EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
        return std::move(r).value();
    }
    fs::path m_dir;
    Resolver m_resolver = Resolver::automatic;
};

// Every link test runs with both implementations of the resolver.
class BothResolvers : public TempRoot, public ::testing::WithParamInterface<Resolver> {
protected:
    void SetUp() override {
        TempRoot::SetUp();
        m_resolver = GetParam();
    }
};

std::string resolver_name(const ::testing::TestParamInfo<Resolver>& info) {
    return info.param == Resolver::walk ? "walk" : "openat2";
}
}  // namespace

TEST_F(TempRoot, ReadsFilesUnderTheBase) {
    write("etc/os-release", "ID=debian\n");
    auto root = open_ok();
    EXPECT_FALSE(root.is_live());
    EXPECT_EQ(root.read_file("/etc/os-release").value(), "ID=debian\n");
    EXPECT_EQ(root.read_file("/etc/os-release", 3).value(), "ID=");
    EXPECT_EQ(root.host_path("/etc/os-release"), (fs::canonical(m_dir) / "etc/os-release").string());
}

TEST_F(TempRoot, MissingFileCarriesErrno) {
    auto root = open_ok();
    auto r = root.read_file("/nope");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().os_error, ENOENT);
    EXPECT_EQ(r.error().code, ExitCode::environment);
    EXPECT_NE(r.error().message().find("reading " + root.host_path("/nope") + ": No such file"), std::string::npos);
}

TEST_F(TempRoot, ListDirIsSortedWithoutDots) {
    for (const auto* n : {"10", "2", "0", "b", "a"}) write(std::string("d/") + n + "/x", "");
    auto root = open_ok();
    EXPECT_EQ(root.list_dir("/d").value(), (std::vector<std::string>{"0", "10", "2", "a", "b"}));
    EXPECT_EQ(root.list_dir("/missing").error().os_error, ENOENT);
}

TEST_F(TempRoot, OpenRejectsMissingOrFileBase) {
    auto missing = Root::open(m_dir / "absent");
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().code, ExitCode::usage);
    EXPECT_EQ(missing.error().doing, "opening root");
    write("file", "x");
    auto file = Root::open(m_dir / "file");
    ASSERT_FALSE(file.ok());
    EXPECT_EQ(file.error().cause, "not a directory");
}

TEST_F(TempRoot, MetaInjectsErrorsAndStats) {
    write("sys/class/kfd/kfd/topology/nodes/2/properties", "simd_count 80\n");
    write(".rmcp-meta", "# snapshot metadata\n\n"
                        "error /sys/class/kfd/kfd/topology/nodes/2/properties EPERM\n"
                        "error /sys/class/kfd/kfd/topology/nodes/2/gpu_id EACCES\n"
                        "stat /dev/kfd type=char mode=0660 uid=0 gid=109\n"
                        "stat /dev/dri/renderD128   type=char mode=0666\n");
    auto root = open_ok();
    auto props = root.read_file("/sys/class/kfd/kfd/topology/nodes/2/properties");
    ASSERT_FALSE(props.ok());
    EXPECT_EQ(props.error().os_error, EPERM);  // injected even though the file exists
    EXPECT_EQ(root.read_file("/sys/class/kfd/kfd/topology/nodes/2/gpu_id").error().os_error, EACCES);
    EXPECT_TRUE(root.exists("/sys/class/kfd/kfd/topology/nodes/2/gpu_id"));  // exists, unreadable

    auto kfd = root.stat("/dev/kfd");
    ASSERT_TRUE(kfd.ok());
    EXPECT_EQ(kfd->type, FileType::char_device);
    EXPECT_EQ(kfd->mode, 0660U);
    EXPECT_EQ(kfd->gid, 109U);
    EXPECT_TRUE(root.exists("/dev/kfd"));
    auto render = root.stat("/dev/dri/renderD128");
    ASSERT_TRUE(render.ok());
    EXPECT_EQ(render->mode, 0666U);
    EXPECT_EQ(render->uid, 0U);  // defaults when not given
    EXPECT_FALSE(root.exists("/dev/dri/renderD129"));
    EXPECT_EQ(format_meta_stat("/dev/kfd", *kfd), "stat /dev/kfd type=char mode=0660 uid=0 gid=109");
}

TEST_F(TempRoot, MetaIsNotRecorded) {
    write(".rmcp-meta", "stat /dev/kfd type=char mode=0660 uid=0 gid=109\n");
    write("etc/group", "render:x:109:\n");
    auto root = open_ok();
    root.start_recording();
    (void)root.read_file("/etc/group");
    (void)root.stat("/dev/kfd");
    EXPECT_EQ(root.recorded(), (std::set<std::string>{"/dev/kfd", "/etc/group"}));
}

struct BadMeta {
    const char* line;
    const char* cause;
};

class MetaErrors : public TempRoot, public ::testing::WithParamInterface<BadMeta> {};

TEST_P(MetaErrors, NameFileAndLine) {
    write(".rmcp-meta", std::string("# header\nstat /dev/kfd type=char\n") + GetParam().line + "\n");
    auto r = Root::open(m_dir);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ExitCode::usage);
    EXPECT_EQ(r.error().doing, "parsing snapshot metadata");
    EXPECT_EQ(r.error().path, (fs::canonical(m_dir) / ".rmcp-meta").string() + ":3");
    EXPECT_NE(r.error().cause.find(GetParam().cause), std::string::npos) << r.error().cause;
}

INSTANTIATE_TEST_SUITE_P(Root, MetaErrors,
                         ::testing::Values(BadMeta{"stat /dev/kfd mode=0999", "bad number in 'mode=0999'"},
                                           BadMeta{"stat /dev/kfd uid=-1", "bad number in 'uid=-1'"},
                                           BadMeta{"stat /dev/kfd gid=99999999999", "bad number"},
                                           BadMeta{"stat /dev/kfd colour=blue", "unknown key 'colour'"},
                                           BadMeta{"stat /dev/kfd mode", "expected key=value, got 'mode'"},
                                           BadMeta{"stat /dev/kfd type=fifo", "unknown file type 'fifo'"},
                                           BadMeta{"error /x EWHAT", "unknown errno name 'EWHAT'"},
                                           BadMeta{"error /x EPERM extra", "unknown errno name"},
                                           BadMeta{"error relative EPERM", "expected `stat PATH"},
                                           BadMeta{"stat /only", "expected `stat PATH"},
                                           BadMeta{"chmod /dev/kfd 0666", "unknown record 'chmod'"}),
                         [](const ::testing::TestParamInfo<BadMeta>& info) {
                             return "case" + std::to_string(info.index);
                         });

TEST(ErrnoNames, RoundTrip) {
    for (const auto* n : {"EPERM", "EACCES", "ENOENT", "EIO", "ENODEV", "ENXIO", "EBUSY", "EINVAL"}) {
        const auto e = errno_from_name(n);
        ASSERT_TRUE(e.has_value()) << n;
        EXPECT_EQ(errno_name(*e), n);
    }
    EXPECT_FALSE(errno_from_name("eperm").has_value());
    EXPECT_EQ(errno_name(EDOM), "E" + std::to_string(EDOM));  // unnamed: still readable
    EXPECT_EQ(errno_from_name("E" + std::to_string(EDOM)), EDOM);
    EXPECT_EQ(errno_from_name("ELOOP"), ELOOP);
}

// --- links stay inside the root ------------------------------------------------------------------

TEST_P(BothResolvers, AbsoluteLinksResolveInsideTheRoot) {
    write("opt/rocm-6.1.0/.info/version", "6.1.0-82\n");
    link("opt/rocm", "/etc/alternatives/rocm");
    link("etc/alternatives/rocm", "/opt/rocm-6.1.0");
    auto root = open_ok();
    EXPECT_EQ(root.read_file("/opt/rocm/.info/version").value(), "6.1.0-82\n");
    EXPECT_EQ(root.canonical("/opt/rocm").value(), "/opt/rocm-6.1.0");
    EXPECT_EQ(root.read_link("/opt/rocm").value(), "/etc/alternatives/rocm");  // the link itself
    EXPECT_TRUE(root.exists("/opt/rocm"));
    EXPECT_TRUE(root.is_dir("/opt/rocm"));
    EXPECT_EQ(root.list_dir("/opt/rocm").value(), (std::vector<std::string>{".info"}));
}

TEST_P(BothResolvers, DotDotStopsAtTheRoot) {
    write("etc/passwd", "root:x:0:0:root:/root:/bin/bash\n");
    link("a/escape", "../../../../../../../../etc/passwd");
    auto root = open_ok();
    EXPECT_EQ(root.canonical("/a/escape").value(), "/etc/passwd");
    EXPECT_EQ(root.read_file("/a/escape").value(), "root:x:0:0:root:/root:/bin/bash\n");
}

TEST_P(BothResolvers, RelativeSysfsStyleLinks) {
    const std::string pci = "sys/devices/pci0000:00/0000:00:01.1/0000:01:00.0/0000:02:00.0/0000:03:00.0";
    write(pci + "/vendor", "0x1002\n");
    write(pci + "/drm/renderD128/dev", "226:128\n");
    link(pci + "/drm/renderD128/device", "../../../0000:03:00.0");
    link("sys/class/drm/renderD128",
         "../../devices/pci0000:00/0000:00:01.1/0000:01:00.0/0000:02:00.0/0000:03:00.0/drm/renderD128");
    auto root = open_ok();
    EXPECT_EQ(root.read_file("/sys/class/drm/renderD128/device/vendor").value(), "0x1002\n");
    EXPECT_EQ(root.canonical("/sys/class/drm/renderD128/device").value(), "/" + pci);
}

TEST_P(BothResolvers, LinkLoopIsAnError) {
    link("loop/a", "b");
    link("loop/b", "a");
    auto root = open_ok();
    auto r = root.read_file("/loop/a");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().os_error, ELOOP);
    EXPECT_FALSE(root.exists("/loop/a"));
}

TEST_P(BothResolvers, DanglingLinkIsMissing) {
    link("opt/rocm", "/opt/rocm-9.9.9");
    auto root = open_ok();
    EXPECT_FALSE(root.exists("/opt/rocm"));
    EXPECT_EQ(root.read_file("/opt/rocm/.info/version").error().os_error, ENOENT);
    EXPECT_EQ(root.canonical("/opt/rocm/.info/version").value(), "/opt/rocm-9.9.9/.info/version");
}

TEST(LiveRoot, SlashIsLive) {
    auto root = Root::open("/");
    ASSERT_TRUE(root.ok());
    EXPECT_TRUE(root->is_live());
    EXPECT_EQ(root->host_path("/proc/self/status"), "/proc/self/status");
    EXPECT_TRUE(root->read_file("/proc/self/status").ok());
}

TEST_P(BothResolvers, AnAbsoluteLinkToAHostFileReadsTheRootsCopy) {
    // The link names a real file of this machine; inside the root that path holds other bytes.
    const fs::path outside = m_dir.parent_path() / (m_dir.filename().string() + "-outside");
    fs::create_directories(outside);
    std::ofstream(outside / "shadow") << "HOST SECRET\n";
    link("etc/os-release", (outside / "shadow").string());
    auto root = open_ok();
    const auto r = root.read_file("/etc/os-release");
    fs::remove_all(outside);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().os_error, ENOENT);
    write((outside / "shadow").string().substr(1), "the root's own copy\n");
    EXPECT_EQ(root.read_file("/etc/os-release").value(), "the root's own copy\n");
}

TEST_P(BothResolvers, ChainsEndAtFortyLinks) {
    write("target", "end\n");
    for (int i = 0; i < 41; ++i) link("chain/l" + std::to_string(i), i == 40 ? "/target" : "l" + std::to_string(i + 1));
    auto root = open_ok();
    EXPECT_EQ(root.read_file("/chain/l1").value(), "end\n");         // 40 links
    EXPECT_EQ(root.read_file("/chain/l0").error().os_error, ELOOP);  // 41
    link("self/x", "x");
    EXPECT_EQ(root.stat("/self/x").error().os_error, ELOOP);
    EXPECT_EQ(root.canonical("/self/x/y").error().os_error, ELOOP);
}

TEST_P(BothResolvers, FifosAndDevicesAreNeverOpenedForReading) {
    fs::create_directories(m_dir / "etc");
    ASSERT_EQ(::mkfifo((m_dir / "etc/os-release").c_str(), 0644), 0);
    auto root = open_ok();
    const auto started = std::chrono::steady_clock::now();
    EXPECT_EQ(root.read_file("/etc/os-release").error().os_error, EINVAL);  // would block for ever
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(1));
    EXPECT_EQ(root.stat("/etc/os-release")->type, FileType::other);  // inspecting is fine
}

TEST_P(BothResolvers, KeepLastAndRefuse) {
    write("real/file", "x");
    link("alias", "/real");
    auto root = open_ok();
    EXPECT_EQ(root.read_link("/alias").value(), "/real");
    EXPECT_EQ(root.read_link("/real/file").error().os_error, EINVAL);  // not a link
    EXPECT_EQ(root.open_fd("/alias/file", O_RDONLY, LinkPolicy::refuse).error().os_error, ELOOP);
    EXPECT_TRUE(root.open_fd("/real/file", O_RDONLY, LinkPolicy::refuse).ok());
    EXPECT_EQ(root.open_fd("/alias", O_RDONLY, LinkPolicy::keep_last).error().os_error, ELOOP);
}

TEST_P(BothResolvers, MakeDirsThroughALinkOutStaysInside) {
    const fs::path outside = m_dir.parent_path() / (m_dir.filename().string() + "-out");
    fs::create_directories(outside);
    link("var/lib/rmcp", outside.string());
    auto root = open_ok();
    auto made = root.make_dirs("/var/lib/rmcp/transactions/1", 0700);
    const bool outside_empty = fs::is_empty(outside);
    fs::remove_all(outside);
    ASSERT_TRUE(made.ok()) << made.error().message();
    EXPECT_TRUE(outside_empty);
    EXPECT_TRUE(fs::is_directory(m_dir / outside.relative_path() / "transactions/1"));
    EXPECT_EQ(root.canonical("/var/lib/rmcp/transactions/1").value(),
              "/" + outside.relative_path().string() + "/transactions/1");
}

TEST_P(BothResolvers, ListingShowsWhatOnlyTheMetadataKnows) {
    write("sys/module/amdgpu/parameters/noretry", "1\n");
    write(".rmcp-meta", "error /sys/module/amdgpu/parameters/ppfeaturemask EACCES\n"
                        "stat /dev/dri/renderD128 type=char mode=0660 uid=0 gid=44\n");
    fs::create_directories(m_dir / "dev/dri");
    auto root = open_ok();
    EXPECT_EQ(root.list_dir("/sys/module/amdgpu/parameters").value(),
              (std::vector<std::string>{"noretry", "ppfeaturemask"}));
    EXPECT_EQ(root.list_dir("/dev/dri").value(), (std::vector<std::string>{"renderD128"}));
    EXPECT_EQ(root.read_file("/sys/module/amdgpu/parameters/ppfeaturemask").error().os_error, EACCES);
}

// A name swapped between a file and a link to a host file, as fast as renameat2 can: no
// read ever returns the host file (the defect was a check of the tree, then an open).
TEST_P(BothResolvers, SwappingAFileForALinkOutNeverLeaks) {
    const fs::path outside = m_dir.parent_path() / (m_dir.filename().string() + "-secret");
    std::ofstream(outside) << "HOST SECRET\n";
    write("etc/os-release", "ID=debian\n");
    link("etc/swap", outside.string());
    auto root = open_ok();
    std::atomic<bool> stop{false};
    std::thread swapper([&] {
        const auto a = (m_dir / "etc/os-release").string();
        const auto b = (m_dir / "etc/swap").string();
        while (!stop) ::renameat2(AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), RENAME_EXCHANGE);
    });
    int leaked = 0, read = 0;
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
    while (std::chrono::steady_clock::now() < until) {
        const auto r = root.read_file("/etc/os-release");
        if (r) ++read;
        if (r && r->find("SECRET") != std::string::npos) ++leaked;
    }
    stop = true;
    swapper.join();
    fs::remove(outside);
    EXPECT_EQ(leaked, 0);
    EXPECT_GT(read, 0);
}

TEST_P(BothResolvers, TheWalkReportsEveryLinkItCrosses) {
    write("opt/rocm-6.1.0/.info/version", "6.1.0\n");
    link("opt/rocm", "/etc/alternatives/rocm");
    link("etc/alternatives/rocm", "../../opt/rocm-6.1.0");
    auto root = open_ok();
    std::vector<std::pair<std::string, std::string>> seen;
    const LinkObserver observer = [&](const std::string& l, const std::string& t) { seen.emplace_back(l, t); };
    auto w = root.walk("/opt/rocm/.info/version", O_RDONLY, LinkPolicy::follow, &observer);
    ASSERT_EQ(w.error, 0);
    EXPECT_EQ(w.resolved, "/opt/rocm-6.1.0/.info/version");
    EXPECT_EQ(seen,
              (std::vector<std::pair<std::string, std::string>>{{"/opt/rocm", "/etc/alternatives/rocm"},
                                                                {"/etc/alternatives/rocm", "../../opt/rocm-6.1.0"}}));
    auto missing = root.walk("/opt/rocm/lib/nothing", O_PATH, LinkPolicy::follow);
    EXPECT_EQ(missing.error, ENOENT);
    EXPECT_EQ(missing.resolved, "/opt/rocm-6.1.0");
    EXPECT_EQ(missing.rest, (std::vector<std::string>{"lib", "nothing"}));
}

INSTANTIATE_TEST_SUITE_P(Root, BothResolvers, ::testing::Values(Resolver::automatic, Resolver::walk), resolver_name);

TEST(Resolvers, ForcedWalkIsReportedAndThisKernelHasOpenat2) {
    auto walk = Root::open("/", Resolver::walk);
    ASSERT_TRUE(walk.ok());
    EXPECT_EQ(walk->resolver(), Resolver::walk);
    if (!Root::kernel_has_openat2()) GTEST_SKIP() << "kernel without openat2: only the walk is exercised";
    EXPECT_EQ(Root::open("/")->resolver(), Resolver::automatic);
}
