# RMCP_SANITIZE=ON builds everything with ASan+UBSan (the `asan` preset).
option(RMCP_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
if(RMCP_SANITIZE)
  # -O1 as the AddressSanitizer documentation recommends: the Debug build's -O0 made the CLI
  # suite under ASan take 10 minutes, most of CI's time; assertions stay on (no NDEBUG).
  # -g1 (line tables): sanitizer reports keep file:line in every frame; full debug info made
  # this build about a third slower to compile, and CI's time is mostly compiling.
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all -O1 -g1)
  # GCC 12 at -O1 with the sanitizers reports -Wmaybe-uninitialized inside libstdc++'s
  # std::function/std::regex headers (false positives, not our code): keep the log readable.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    add_compile_options(-Wno-maybe-uninitialized)
  endif()
  add_link_options(-fsanitize=address,undefined)
endif()
