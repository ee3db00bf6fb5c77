# Run with cmake -P by the rmcp_shell_files target (cmake/Install.cmake).
#   RMCP  the built binary; OUT  the output directory
# gzip -n: no name or time stamp inside, so the same page gives the same bytes.
file(MAKE_DIRECTORY ${OUT}/bash ${OUT}/zsh ${OUT}/fish)
function(run_rmcp output)
  execute_process(COMMAND ${RMCP} ${ARGN} OUTPUT_FILE ${output} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "rmcp ${ARGN} failed (${rc})")
  endif()
endfunction()
run_rmcp(${OUT}/rmcp.1 help --man)
execute_process(COMMAND gzip -9nf ${OUT}/rmcp.1 RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gzip ${OUT}/rmcp.1 failed (${rc})")
endif()
run_rmcp(${OUT}/bash/rmcp completions bash)
run_rmcp(${OUT}/zsh/_rmcp completions zsh)
run_rmcp(${OUT}/fish/rmcp.fish completions fish)
