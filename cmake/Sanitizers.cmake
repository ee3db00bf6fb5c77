# RMCP_SANITIZE=ON builds everything with ASan+UBSan (the `asan` preset).
option(RMCP_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
if(RMCP_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=address,undefined)
endif()
