# The Debian package: `cpack --preset package` (after `cmake --preset package && cmake --build
# build-package`: -O2, Debian's hardening flags, no benchmarks, cmake/Hardening.cmake) writes
# build-package/rmcp_<version>_amd64.deb from the install rules of cmake/Install.cmake under
# /usr (docs/install.md, "Debian package").
#
# Depends is listed, not computed by dpkg-shlibdeps: the package also carries the torch
# operator for Debian's python3-torch, and shlibdeps would make the whole of libtorch (and
# OpenCV, FFmpeg, GDAL … behind it) a hard dependency of a command-line tool. rmcp itself
# links libc and zlib (libstdc++ is static, Hyperscan and zstd are static archives); it opens
# libarchive with dlopen for `rmcp snapshot` (the soname is compiled in: libarchive.so.13);
# librmcp_preload.so needs libstdc++ and libgcc; librmcp_xapian.so (opened by explain and run
# for the similar public reports, src/core/similar/xapian_abi.h) needs libxapian30.
# tests/install/test_deb.py checks with
# dpkg-shlibdeps that this list covers the binary and the shim, and that the package named
# for libarchive is the one that holds the soname the binary opens.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME rmcp)
set(CPACK_PACKAGE_VENDOR "rmcp")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "diagnose and work around PyTorch crashes on consumer AMD GPUs")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "rmcp detects what is on the machine (GPUs, driver, ROCm, PyTorch),
diagnoses it against a curated knowledge base, explains crash logs, scans which
GPU targets the installed libraries contain, applies fixes transactionally,
supervises training runs, probes the GPU for a configuration that does not
crash, keeps convolutions on the GPU where vendor kernels are broken
(rmcp.torch) and traces HIP allocations.")
set(RMCP_PACKAGE_MAINTAINER "rmcp maintainers <maintainers@rmcp.invalid>" CACHE STRING
    "The Maintainer field of the .deb")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${RMCP_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)
set(RMCP_LIBARCHIVE_PACKAGE "libarchive13")
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "libc6 (>= 2.36), libgcc-s1 (>= 3.0), libstdc++6 (>= 4.4), zlib1g (>= 1:1.1.4), ${RMCP_LIBARCHIVE_PACKAGE}, libxapian30")
# python3 runs rmcp.torch and the probe worker; python3-torch is what the prebuilt operator
# is for (other torches compile it on first use, docs/torch.md); rocminfo is read by detect.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "python3-torch, rocminfo")
# Python writes __pycache__ directories beside the package's modules when root imports them;
# prerm removes them so that `apt remove` leaves no directory behind (what dh_python3's
# generated prerm does with py3clean).
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/packaging/prerm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
set(CPACK_STRIP_FILES TRUE)
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS
    OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
# The version is the build's (generated/version.txt, cmake/Version.cmake), read when cpack
# runs, so that the package and `rmcp --version` always agree.
set(CPACK_PROJECT_CONFIG_FILE ${PROJECT_SOURCE_DIR}/cmake/CPackProjectConfig.cmake)
set(CPACK_RMCP_VERSION_FILE ${RMCP_GENERATED_DIR}/version.txt)
set(CPACK_RMCP_OBJCOPY "${CMAKE_OBJCOPY}")
set(CPACK_PRE_BUILD_SCRIPTS ${PROJECT_SOURCE_DIR}/cmake/cpack_debian_docs.cmake
                            ${PROJECT_SOURCE_DIR}/cmake/cpack_strip_comment.cmake)
include(CPack)
