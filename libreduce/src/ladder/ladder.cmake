# The teaching ladder (libreduce/src/ladder): included by libreduce/CMakeLists.txt.
target_sources(reduce PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/ladder.cu
  ${CMAKE_CURRENT_LIST_DIR}/ladder_names.cpp
)
