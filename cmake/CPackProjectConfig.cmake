# Read by cpack (CPACK_PROJECT_CONFIG_FILE, cmake/Packaging.cmake) before it packages.
if(EXISTS "${CPACK_RMCP_VERSION_FILE}")
  file(STRINGS "${CPACK_RMCP_VERSION_FILE}" rmcp_version LIMIT_COUNT 1)
  set(CPACK_PACKAGE_VERSION "${rmcp_version}")
  set(CPACK_DEBIAN_PACKAGE_VERSION "${rmcp_version}")
else()
  message(FATAL_ERROR "cpack: ${CPACK_RMCP_VERSION_FILE} is missing: build the tree first (cmake --build)")
endif()
