# Package configuration files so that another CMake project can find_package(gpukit) / find_package(reduce)
# and link gpukit::common / reduce::reduce (tests/consumer checks this against an install tree).
include(CMakePackageConfigHelpers)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/reduceConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/reduceConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/reduce)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/reduceConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/reduceConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/reduceConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/reduce)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/gpukitConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/gpukitConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gpukit)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/gpukitConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/gpukitConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/gpukitConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gpukit)
