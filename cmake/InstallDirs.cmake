# Where `cmake --install` and the .deb put things (docs/install.md, "Layout"). GNUInstallDirs
# picks lib/<multiarch> only for the /usr prefix; rmcp's private library directory is
# lib/<multiarch>/rmcp under every prefix, so that the binary can find it by one relative
# path compiled in below, whatever --prefix the tree is installed to.
if(CMAKE_LIBRARY_ARCHITECTURE AND NOT DEFINED CMAKE_INSTALL_LIBDIR)
  set(CMAKE_INSTALL_LIBDIR "lib/${CMAKE_LIBRARY_ARCHITECTURE}" CACHE PATH "Object code libraries (LIBDIR)")
endif()
include(GNUInstallDirs)

set(RMCP_INSTALL_DATADIR "${CMAKE_INSTALL_DATADIR}/rmcp")          # kb/ patches/ profiles/ probe/ python/
set(RMCP_INSTALL_PRIVLIBDIR "${CMAKE_INSTALL_LIBDIR}/rmcp")        # librmcp_preload.so
# The rmcp package for the system's Python (Debian's python3 reads /usr/lib/python3/dist-packages).
set(RMCP_PYTHON_INSTALL_DIR "lib/python3/dist-packages" CACHE STRING
    "Where `cmake --install` puts the rmcp Python package, relative to the prefix")

# The same directories as seen from the binary: relative, so a moved prefix still works.
file(RELATIVE_PATH RMCP_BIN_TO_DATADIR "${CMAKE_INSTALL_FULL_BINDIR}" "${CMAKE_INSTALL_FULL_DATADIR}/rmcp")
file(RELATIVE_PATH RMCP_BIN_TO_PRIVLIBDIR "${CMAKE_INSTALL_FULL_BINDIR}" "${CMAKE_INSTALL_FULL_LIBDIR}/rmcp")
