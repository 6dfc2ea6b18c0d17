# What `cmake --install` adds beyond each library's own install() lines (headers, archives, export sets):
# the CMake package configs gpukit, reduce and wsm5 (sparse's: libsparse/CMakeLists.txt), the apps into
# bin/, and pkg-config files. tests/consumer builds a project against the installed tree both ways.
include(CMakePackageConfigHelpers)

# gpukit_install_package_config(<name>): <name>Config.cmake (from cmake/<name>Config.cmake.in) and
# <name>ConfigVersion.cmake into lib/cmake/<name>, next to the export set installed with the target.
function(gpukit_install_package_config name)
  set(dest ${CMAKE_INSTALL_LIBDIR}/cmake/${name})
  set(out ${PROJECT_BINARY_DIR}/package/${name})
  configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/${name}Config.cmake.in ${out}/${name}Config.cmake
                                INSTALL_DESTINATION ${dest})
  write_basic_package_version_file(${out}/${name}ConfigVersion.cmake VERSION ${PROJECT_VERSION}
                                   COMPATIBILITY SameMajorVersion)
  install(FILES ${out}/${name}Config.cmake ${out}/${name}ConfigVersion.cmake DESTINATION ${dest})
endfunction()
gpukit_install_package_config(gpukit)
gpukit_install_package_config(reduce)
gpukit_install_package_config(wsm5)

# The command-line apps, under their OUTPUT_NAMEs (reduce, spmv, wsm5).
if(GPUKIT_BUILD_APPS)
  install(TARGETS reduce_app spmv_app wsm5_app RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

# pkg-config: one file per library, each naming the one below it in Requires, so that
#   pkg-config --cflags --libs gpukit-sparse gpukit-wsm5
# gives every include directory and, in link order, every archive and system library. The libraries are
# static, so their own dependencies (CUDA runtime, cuSPARSE, HDF5, OpenMP) are in Libs, not Libs.private.
file(RELATIVE_PATH pc_to_prefix /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" pc_to_prefix "${pc_to_prefix}")
list(JOIN HDF5_C_LIBRARIES " " _gpukit_pc_hdf5)
set(_gpukit_pc_cuda_cflags "")
foreach(dir ${CUDAToolkit_INCLUDE_DIRS})
  string(APPEND _gpukit_pc_cuda_cflags " -I${dir}")
endforeach()
set(_gpukit_pc_openmp "")
if(OpenMP_CXX_FOUND)
  set(_gpukit_pc_openmp " ${OpenMP_CXX_FLAGS}")
endif()

# gpukit_pkg_config(<name> <library> <requires> <description> <cflags> <libs>): lib/pkgconfig/<name>.pc.
function(gpukit_pkg_config pc_name pc_lib pc_requires pc_description pc_cflags pc_libs)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/gpukit.pc.in ${PROJECT_BINARY_DIR}/pkgconfig/${pc_name}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/${pc_name}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endfunction()
gpukit_pkg_config(gpukit-common gpukit_common "" "gpukit common layer: errors, CUDA checks, device buffers"
                  "${_gpukit_pc_cuda_cflags}" " -L${CUDAToolkit_LIBRARY_DIR} -lcudart")
gpukit_pkg_config(gpukit-reduce reduce gpukit-common "libreduce: device-wide and CPU reductions" ""
                  "${_gpukit_pc_openmp}")
gpukit_pkg_config(gpukit-sparse sparse gpukit-reduce "libsparse: CSR containers, I/O and SpMV" ""
                  " -L${CUDAToolkit_LIBRARY_DIR} -lcusparse ${_gpukit_pc_hdf5}${_gpukit_pc_openmp}")
gpukit_pkg_config(gpukit-wsm5 wsm5 gpukit-reduce "libwsm5: WSM5 column microphysics (CPU and CUDA)" ""
                  " ${_gpukit_pc_hdf5}${_gpukit_pc_openmp}")
