# One version source: project(VERSION) in CMakeLists.txt, refined by `git describe` when the
# tree is a git checkout (docs/install.md, "Versions"). The string is worked out at build
# time, not configure time, so a commit after configuring still changes `rmcp --version`:
# the target below rewrites generated/version.cpp (and version.txt, which CPack reads) only
# when the string changed, so an unchanged tree recompiles nothing.
set(RMCP_GENERATED_DIR ${CMAKE_BINARY_DIR}/generated)
add_custom_target(rmcp_version_file
  COMMAND ${CMAKE_COMMAND}
    -DRMCP_BASE_VERSION=${PROJECT_VERSION}
    -DRMCP_SOURCE_DIR=${CMAKE_SOURCE_DIR}
    -DRMCP_OUTPUT_DIR=${RMCP_GENERATED_DIR}
    -P ${CMAKE_CURRENT_LIST_DIR}/version_file.cmake
  BYPRODUCTS ${RMCP_GENERATED_DIR}/version.cpp ${RMCP_GENERATED_DIR}/version.txt
  COMMENT "rmcp version from project() and git describe"
  VERBATIM)
