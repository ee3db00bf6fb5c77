# Every third-party dependency comes from a Debian 12 package (scripts/setup.sh installs them).
find_package(CLI11 REQUIRED)
find_package(fmt REQUIRED)
find_package(nlohmann_json REQUIRED)
find_package(tomlplusplus REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(HYPERSCAN REQUIRED IMPORTED_TARGET libhs)
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)
find_package(LibArchive REQUIRED)  # snapshot; loaded at run time (src/core/snapshot/libarchive.hpp)
find_package(ZLIB REQUIRED)  # explain: .gz logs

# Start-up time. rmcp is a short-lived command and `rmcp run -- CMD` stands between the user
# and CMD, so every shared library counts: on the 2-core VM libstdc++.so alone costs ~1 ms
# to load and relocate, libarchive with its dependencies another ~1 ms (docs/PERFORMANCE.md,
# "Start-up"). With RMCP_STATIC_DEPS (the default) the libraries every command may need come
# from Debian's static archives (libhs.a, libzstd.a), fmt's compiled part is built into
# librmcp (src/core/util/fmt_impl.cpp), toml++ is used header-only, the rmcp binary links
# libstdc++/libgcc statically (src/cli/CMakeLists.txt), and libarchive is opened only by
# `rmcp snapshot`. OFF links the shared libraries instead. zlib is always the shared
# libz.so.1: Debian forbids an embedded zlib (lintian's embedded-library error, Policy 4.13)
# so that a zlib security fix reaches every program, and loading it costs nothing
# measurable (`rmcp --version` 2000 times: 2.5 ms per run either way, docs/install.md).
option(RMCP_STATIC_DEPS "Link rmcp's dependencies statically / header-only (faster start-up)" ON)
add_library(rmcp_deps INTERFACE)
if(RMCP_STATIC_DEPS)
  foreach(lib hs zstd)
    find_library(RMCP_${lib}_STATIC NAMES lib${lib}.a REQUIRED)
  endforeach()
  target_include_directories(rmcp_deps SYSTEM INTERFACE ${HYPERSCAN_INCLUDE_DIRS} ${ZSTD_INCLUDE_DIRS})
  target_link_libraries(rmcp_deps INTERFACE
    ${RMCP_hs_STATIC} ${RMCP_zstd_STATIC} ZLIB::ZLIB m)
  target_compile_definitions(rmcp_deps INTERFACE TOML_HEADER_ONLY=1 RMCP_FMT_COMPILED_IN=1)
else()
  target_link_libraries(rmcp_deps INTERFACE fmt::fmt tomlplusplus::tomlplusplus
    PkgConfig::HYPERSCAN PkgConfig::ZSTD ZLIB::ZLIB)
endif()
# The soname libarchive is opened by: the real file behind libarchive.so, up to its major version.
get_filename_component(RMCP_LIBARCHIVE_REAL "${LibArchive_LIBRARIES}" REALPATH)
get_filename_component(RMCP_LIBARCHIVE_REAL "${RMCP_LIBARCHIVE_REAL}" NAME)
string(REGEX MATCH "^lib[^.]+\\.so\\.[0-9]+" RMCP_LIBARCHIVE_SONAME "${RMCP_LIBARCHIVE_REAL}")
if(NOT RMCP_LIBARCHIVE_SONAME)
  message(FATAL_ERROR "cannot tell libarchive's soname from ${LibArchive_LIBRARIES}")
endif()
find_package(Threads REQUIRED)
if(RMCP_TESTS)
  find_package(GTest REQUIRED)
endif()
if(RMCP_BENCH)
  find_package(benchmark REQUIRED)
endif()
