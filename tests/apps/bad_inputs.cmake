# The bad-input corpus (apps/README.md, "Bad input"): every MANIFEST.tsv under tests/data/bad, one case
# a line, NAME <tab> EXIT <tab> FRAGMENT <tab> COMMAND ('#' starts a comment line), becomes the CTest
# entry bad_input_[FOLDER_]NAME (label cpu), run by run_bad_input.sh with the apps, $BAD (the manifest's
# folder), $GEN (the HDF5 files make_bad_hdf5 writes, a fixture) and $DATA. A folder added under
# tests/data/bad with its own MANIFEST.tsv is picked up at the next configure.
add_executable(make_bad_hdf5 make_bad_hdf5.cpp)
gpukit_link_hdf5(make_bad_hdf5 make_bad_hdf5)
gpukit_warnings(make_bad_hdf5)

set(BAD_ROOT ${PROJECT_SOURCE_DIR}/tests/data/bad)
set(BAD_GEN ${CMAKE_CURRENT_BINARY_DIR}/bad_generated)
add_test(NAME bad_input_generate_hdf5
         COMMAND ${CMAKE_COMMAND} -E env bash -c "rm -rf '${BAD_GEN}' && mkdir -p '${BAD_GEN}' && '$<TARGET_FILE:make_bad_hdf5>' '${BAD_GEN}'")
set_tests_properties(bad_input_generate_hdf5 PROPERTIES FIXTURES_SETUP bad_hdf5 LABELS cpu)

file(GLOB_RECURSE bad_manifests CONFIGURE_DEPENDS ${BAD_ROOT}/MANIFEST.tsv)
foreach(manifest IN LISTS bad_manifests)
  get_filename_component(folder ${manifest} DIRECTORY)
  file(RELATIVE_PATH sub ${BAD_ROOT} ${folder})
  string(REPLACE "/" "_" prefix "${sub}")
  if(prefix)
    string(APPEND prefix "_")
  endif()
  # Lines -> a CMake list. Brackets would group list items ("row_ptr[0]", "[0, 3)"): they travel as
  # placeholders and come back in each line; ';' may not appear in a manifest at all.
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${manifest})  # an edited case reconfigures
  file(READ ${manifest} text)
  string(REPLACE "[" "<bad-lb>" text "${text}")
  string(REPLACE "]" "<bad-rb>" text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  foreach(line IN LISTS lines)
    if(line MATCHES "^#" OR line STREQUAL "")
      continue()
    endif()
    string(REPLACE "<bad-lb>" "[" line "${line}")
    string(REPLACE "<bad-rb>" "]" line "${line}")
    if(NOT line MATCHES "^([^\t]+)\t([0-9]+)\t([^\t]*)\t([^\t]+)$")
      message(FATAL_ERROR "${manifest}: not NAME<tab>EXIT<tab>FRAGMENT<tab>COMMAND: ${line}")
    endif()
    set(name bad_input_${prefix}${CMAKE_MATCH_1})
    add_test(NAME ${name}
             COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/run_bad_input.sh ${CMAKE_CURRENT_BINARY_DIR}/bad/${name}
                     ${CMAKE_MATCH_2} "${CMAKE_MATCH_3}" "${CMAKE_MATCH_4}")
    set_tests_properties(${name} PROPERTIES LABELS cpu FIXTURES_REQUIRED bad_hdf5
      ENVIRONMENT "SPMV=$<TARGET_FILE:spmv_app>;WSM5=$<TARGET_FILE:wsm5_app>;REDUCE=$<TARGET_FILE:reduce_app>;SOLVE=$<TARGET_FILE:solve_app>;BAD=${folder};GEN=${BAD_GEN};DATA=${PROJECT_SOURCE_DIR}/data")
  endforeach()
endforeach()

# The runner's own checks can fail: each of these commands breaks one rule, and the case must fail.
set(runner_self_tests
  "modified_input|keep ${PROJECT_SOURCE_DIR}/data/sparse/laplace2d_16.mtx in_m.mtx && echo 1 >> in_m.mtx && echo ok-fragment >&2 && exit 2"
  "output_left|touch out.h5 && echo ok-fragment >&2 && exit 2"
  "partial_left|touch out.h5.1.0.partial && echo ok-fragment >&2 && exit 2"
  "two_lines|echo ok-fragment >&2 && echo ok-fragment >&2 && exit 2"
  "long_line|echo ok-fragment-$(printf %0400d 0) >&2 && exit 2"
  "wrong_exit|echo ok-fragment >&2 && exit 1"
  "fragment_missing|echo other >&2 && exit 2")
foreach(case IN LISTS runner_self_tests)
  string(REPLACE "|" ";" parts "${case}")
  list(GET parts 0 name)
  list(GET parts 1 cmd)
  add_test(NAME bad_input_runner_rejects_${name}
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/run_bad_input.sh ${CMAKE_CURRENT_BINARY_DIR}/bad/runner_${name} 2 ok-fragment "${cmd}")
  set_tests_properties(bad_input_runner_rejects_${name} PROPERTIES LABELS cpu WILL_FAIL TRUE)
endforeach()
