# `cmake --install BUILD [--prefix DIR]` and the .deb (cmake/Packaging.cmake) install the
# same tree (docs/install.md, "Layout"):
#   bin/rmcp
#   share/rmcp/{kb,patches,profiles,probe}/      the data, found as ../share/rmcp from bin/
#   share/rmcp/threads/                          public threads (records, excerpts, index)
#   share/rmcp/python/rmcp -> ../../../lib/python3/dist-packages/rmcp
#                                                the probe worker's package (rmcp probe's PYTHONPATH):
#                                                a relative symbolic link, so the modules ship once
#   lib/<multiarch>/rmcp/librmcp_preload.so      found by `rmcp run --trace-alloc` from bin/
#   lib/<multiarch>/rmcp/librmcp_xapian.so       Xapian, opened by explain/run's similar reports
#   lib/python3/dist-packages/rmcp/              rmcp.torch for the system's python3, with the
#                                                operator prebuilt for the torch it was built against
#   share/man/man1/rmcp.1.gz, shell completions, share/doc/rmcp/
#   lib/systemd/system/rmcp-{doctor,nfd}.{service,timer}  the node agent's units (docs/fleet.md),
#                                                installed, not enabled
install(TARGETS rmcp RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET rmcp_preload)
  install(TARGETS rmcp_preload LIBRARY DESTINATION ${RMCP_INSTALL_PRIVLIBDIR})
endif()

foreach(dir kb patches profiles probe)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/ DESTINATION ${RMCP_INSTALL_DATADIR}/${dir}
          FILES_MATCHING PATTERN "*.toml")
endforeach()
# The public threads (threads/README.md): records and excerpts, read when the index is rebuilt.
install(FILES ${PROJECT_SOURCE_DIR}/threads/threads.toml ${PROJECT_SOURCE_DIR}/threads/message-causes.toml
        DESTINATION ${RMCP_INSTALL_DATADIR}/threads)
install(DIRECTORY ${CMAKE_BINARY_DIR}/threads-index/ DESTINATION ${RMCP_INSTALL_DATADIR}/threads/index)
install(TARGETS rmcp_xapian LIBRARY DESTINATION ${RMCP_INSTALL_PRIVLIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/threads/excerpts/ DESTINATION ${RMCP_INSTALL_DATADIR}/threads/excerpts
        FILES_MATCHING PATTERN "*.log")

# rmcp.torch for the system's Python: the package, the operator's source (for other torches,
# compiled on first use: docs/torch.md) and the operator built here with its torch-version stamp.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/rmcp/ DESTINATION ${RMCP_PYTHON_INSTALL_DIR}/rmcp
        FILES_MATCHING PATTERN "*.py" PATTERN "*.cpp" PATTERN "__pycache__" EXCLUDE)
if(TARGET rmcp_torch_ops AND RMCP_TORCH_OPS_STAMP)
  install(TARGETS rmcp_torch_ops LIBRARY DESTINATION ${RMCP_PYTHON_INSTALL_DIR}/rmcp/torch/prebuilt)
  install(FILES ${RMCP_TORCH_OPS_STAMP} DESTINATION ${RMCP_PYTHON_INSTALL_DIR}/rmcp/torch/prebuilt)
endif()
# The build's version for `rmcp.__version__` (python/rmcp/__init__.py imports it), so that the
# installed package and `rmcp --version` say the same (pip installs get the same file from
# python/setup.py). Read from generated/version.txt when installing, as cpack reads it.
install(CODE "
  file(STRINGS \"${RMCP_GENERATED_DIR}/version.txt\" rmcp_version LIMIT_COUNT 1)
  set(file \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${RMCP_PYTHON_INSTALL_DIR}/rmcp/_build_version.py\")
  message(STATUS \"Installing: \${file} (\${rmcp_version})\")
  file(WRITE \"\${file}\" \"# Written by cmake --install (cmake/Install.cmake).\\n__version__ = \\\"\${rmcp_version}\\\"\\n\")
  list(APPEND CMAKE_INSTALL_MANIFEST_FILES \"\${file}\")
")
# The probe puts <datadir>/python on its workers' PYTHONPATH (src/core/probe/command.cpp): a
# directory holding the rmcp package and nothing else, so that a user's venv interpreter sees no
# other system package. It is a relative link to the copy above (the newcomer review, finding 27:
# the modules were shipped twice), relative so that a moved tree keeps working.
cmake_path(ABSOLUTE_PATH RMCP_PYTHON_INSTALL_DIR BASE_DIRECTORY "${CMAKE_INSTALL_PREFIX}" OUTPUT_VARIABLE rmcp_py_full)
cmake_path(APPEND CMAKE_INSTALL_FULL_DATADIR rmcp python OUTPUT_VARIABLE rmcp_probe_py_full)
file(RELATIVE_PATH RMCP_PROBE_PYTHON_LINK "${rmcp_probe_py_full}" "${rmcp_py_full}/rmcp")
install(CODE "
  set(link \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${RMCP_INSTALL_DATADIR}/python/rmcp\")
  file(MAKE_DIRECTORY \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${RMCP_INSTALL_DATADIR}/python\")
  if(IS_SYMLINK \"\${link}\" OR EXISTS \"\${link}\")
    file(REMOVE_RECURSE \"\${link}\")
  endif()
  message(STATUS \"Installing: \${link} -> ${RMCP_PROBE_PYTHON_LINK}\")
  file(CREATE_LINK \"${RMCP_PROBE_PYTHON_LINK}\" \"\${link}\" SYMBOLIC)
  list(APPEND CMAKE_INSTALL_MANIFEST_FILES \"\${link}\")
")

# The manual page and the completions come from the built binary's own CLI definitions
# (the one source of every option: src/cli/run_cli.cpp, src/cli/manpage.cpp).
set(RMCP_SHELL_FILES_DIR ${CMAKE_BINARY_DIR}/shell-files)
set(RMCP_SHELL_FILES
  ${RMCP_SHELL_FILES_DIR}/rmcp.1.gz
  ${RMCP_SHELL_FILES_DIR}/bash/rmcp
  ${RMCP_SHELL_FILES_DIR}/zsh/_rmcp
  ${RMCP_SHELL_FILES_DIR}/fish/rmcp.fish)
add_custom_command(OUTPUT ${RMCP_SHELL_FILES}
  COMMAND ${CMAKE_COMMAND} -DRMCP=$<TARGET_FILE:rmcp> -DOUT=${RMCP_SHELL_FILES_DIR}
          -P ${PROJECT_SOURCE_DIR}/cmake/shell_files.cmake
  DEPENDS rmcp ${PROJECT_SOURCE_DIR}/cmake/shell_files.cmake
  COMMENT "rmcp: man page and shell completions from the CLI definitions"
  VERBATIM)
add_custom_target(rmcp_shell_files ALL DEPENDS ${RMCP_SHELL_FILES})
install(FILES ${RMCP_SHELL_FILES_DIR}/rmcp.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${RMCP_SHELL_FILES_DIR}/bash/rmcp DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
install(FILES ${RMCP_SHELL_FILES_DIR}/zsh/_rmcp DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)
install(FILES ${RMCP_SHELL_FILES_DIR}/fish/rmcp.fish DESTINATION ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d)

# systemd units of the node agent (docs/fleet.md): /usr/lib/systemd/system in the .deb, where
# Debian 12's lintian wants them; nothing enables them (no maintainer script does).
install(FILES ${PROJECT_SOURCE_DIR}/packaging/systemd/rmcp-doctor.service
              ${PROJECT_SOURCE_DIR}/packaging/systemd/rmcp-doctor.timer
              ${PROJECT_SOURCE_DIR}/packaging/systemd/rmcp-nfd.service
              ${PROJECT_SOURCE_DIR}/packaging/systemd/rmcp-nfd.timer
        DESTINATION lib/systemd/system)

# Documentation: the README, the architecture and docs/*.md (not the roff page, installed above).
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/ARCHITECTURE.md
              ${PROJECT_SOURCE_DIR}/packaging/copyright
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs
        FILES_MATCHING PATTERN "*.md")
