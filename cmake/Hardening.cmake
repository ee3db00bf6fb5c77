# The package's hardening (the `package` preset, docs/install.md "Debian package"): the flags
# dpkg-buildflags gives a Debian package built with DEB_BUILD_MAINT_OPTIONS=hardening=+all on
# bookworm (`dpkg-buildflags --get CXXFLAGS|CPPFLAGS|LDFLAGS`, dpkg 1.21): stack protector,
# format-string checks, _FORTIFY_SOURCE=2 (which needs optimisation: the preset builds with -O2),
# full RELRO and immediate binding (-z relro -z now). Applied with add_compile_options and
# add_link_options before the targets are created, so the binary, librmcp_preload.so and the
# torch operator (python/CMakeLists.txt) all get them; lintian's hardening-no-bindnow and
# hardening-no-fortify-functions check the result. Off by default: the test and sanitizer
# builds keep their own flags (ASan does not combine with _FORTIFY_SOURCE).
option(RMCP_HARDENING "Build with Debian's hardening flags (the package preset)" OFF)
if(RMCP_HARDENING)
  if(RMCP_SANITIZE OR RMCP_FUZZ)
    message(FATAL_ERROR "RMCP_HARDENING is for the package build; it does not combine with RMCP_SANITIZE/RMCP_FUZZ")
  endif()
  add_compile_options(-fstack-protector-strong -Wformat -Werror=format-security)
  add_compile_definitions(_FORTIFY_SOURCE=2)
  add_link_options(LINKER:-z,relro LINKER:-z,now)
endif()
