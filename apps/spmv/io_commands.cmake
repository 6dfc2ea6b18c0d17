# spmv convert / spmv generate (host only: libsparse I/O and generators).
target_sources(spmv_app PRIVATE ${CMAKE_CURRENT_LIST_DIR}/io_commands.cpp)
target_compile_definitions(spmv_app PRIVATE SPMV_APP_HAVE_IO_COMMANDS)
