# Install libsparse with an export set, so that another CMake project can
#   find_package(sparse CONFIG REQUIRED)   # (finds reduce, HDF5, OpenMP as needed)
#   target_link_libraries(app PRIVATE sparse::sparse)
# sparse is a static library: its PRIVATE dependencies (HDF5, OpenMP) are link dependencies of the
# consumer, so the config file finds them again. Eigen is compile-only (never in a public header).
include(CMakePackageConfigHelpers)
install(TARGETS sparse EXPORT sparseTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${CMAKE_CURRENT_LIST_DIR}/include/sparse DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT sparseTargets NAMESPACE sparse:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/sparse)
set(SPARSE_NEEDS_OPENMP ${OpenMP_CXX_FOUND})
set(SPARSE_HDF5_TARGET OFF)
if(TARGET hdf5::hdf5)
  set(SPARSE_HDF5_TARGET ON)
endif()
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/cmake/sparseConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/sparseConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/sparse)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/sparseConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/sparseConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/sparseConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/sparse)
