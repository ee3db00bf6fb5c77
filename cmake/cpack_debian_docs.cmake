# Run by cpack (CPACK_PRE_BUILD_SCRIPTS, cmake/Packaging.cmake) on the staged tree, before the
# .deb is written: Debian wants /usr/share/doc/<package>/changelog.gz in a native package
# (https://www.debian.org/doc/debian-policy/ch-docs.html#changelog-files-and-release-notes).
# The entry names the version; the project's history is its git log. string(TIMESTAMP)
# honours SOURCE_DATE_EPOCH, for reproducible packages.
string(TIMESTAMP date "%a, %d %b %Y %H:%M:%S +0000" UTC)
set(doc "${CPACK_TEMPORARY_DIRECTORY}${CPACK_PACKAGING_INSTALL_PREFIX}/share/doc/${CPACK_PACKAGE_NAME}")
if(NOT IS_DIRECTORY "${doc}")
  message(FATAL_ERROR "cpack: ${doc} is missing from the staged tree")
endif()
file(WRITE "${doc}/changelog" "${CPACK_PACKAGE_NAME} (${CPACK_DEBIAN_PACKAGE_VERSION}) unstable; urgency=medium

  * Built by cpack from the rmcp source tree; the history of the project
    is its git log.

 -- ${CPACK_DEBIAN_PACKAGE_MAINTAINER}  ${date}
")
execute_process(COMMAND gzip -9nf "${doc}/changelog" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cpack: gzip ${doc}/changelog failed (${rc})")
endif()
