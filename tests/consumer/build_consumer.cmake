# cmake -P script: configure and build the consumer project against the install prefix.
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE} -B ${BINARY} -DCMAKE_PREFIX_PATH=${PREFIX}
                        -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_CUDA_COMPILER=${CUDA_COMPILER}
                        -DCMAKE_BUILD_TYPE=Release
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "consumer project failed to configure against ${PREFIX}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BINARY} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "consumer project failed to build")
endif()
