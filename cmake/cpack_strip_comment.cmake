# Run by cpack (CPACK_PRE_BUILD_SCRIPTS, cmake/Packaging.cmake) on the staged tree, after
# CPACK_STRIP_FILES has stripped it: removes the .comment section (compiler version strings
# from every object and static archive linked in) from each ELF file, as dh_strip does with
# `--remove-section=.comment --remove-section=.note` (lintian, pedantic:
# binary-has-unneeded-section). Nothing in rmcp reads the section.
if(NOT CPACK_RMCP_OBJCOPY)
  message(FATAL_ERROR "cpack: no objcopy (CMAKE_OBJCOPY) to remove .comment sections with")
endif()
file(GLOB_RECURSE staged LIST_DIRECTORIES false "${CPACK_TEMPORARY_DIRECTORY}/*")
foreach(path IN LISTS staged)
  if(IS_SYMLINK "${path}")
    continue()
  endif()
  file(READ "${path}" magic LIMIT 4 HEX)
  if(magic STREQUAL "7f454c46")
    execute_process(COMMAND "${CPACK_RMCP_OBJCOPY}" --remove-section=.comment --remove-section=.note "${path}"
                    RESULT_VARIABLE rc ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "cpack: objcopy --remove-section=.comment ${path} failed (${rc}): ${err}")
    endif()
  endif()
endforeach()
