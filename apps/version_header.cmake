# cmake -P script run at every build: writes OUT (gpukit_version.hpp) from IN with the current git commit,
# touching it only when the text changes, so `--version` and the JSON reports name the commit built.
execute_process(COMMAND git -C ${SOURCE_DIR} rev-parse --short=12 HEAD OUTPUT_VARIABLE GPUKIT_GIT_COMMIT
                OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR GPUKIT_GIT_COMMIT STREQUAL "")
  set(GPUKIT_GIT_COMMIT unknown)
endif()
execute_process(COMMAND git -C ${SOURCE_DIR} status --porcelain --untracked-files=no OUTPUT_VARIABLE dirty
                OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT dirty STREQUAL "" AND NOT GPUKIT_GIT_COMMIT STREQUAL "unknown")
  string(APPEND GPUKIT_GIT_COMMIT "-dirty")
endif()
set(PROJECT_VERSION ${VERSION})
configure_file(${IN} ${OUT}.new @ONLY)
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different ${OUT}.new ${OUT})
file(REMOVE ${OUT}.new)
