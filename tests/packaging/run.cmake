# Builds and runs README.md's embedding examples, either through find_package against a fresh
# install tree (MODE=find_package) or through add_subdirectory (MODE=add_subdirectory).
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

# The examples are the C++ blocks after the "## Embedding" heading, taken as they stand: the
# first on one process, the second across processes (built where hogwild::mpi is found).
file(READ ${SOURCE_DIR}/README.md readme)
string(FIND "${readme}" "## Embedding" at)
if(at EQUAL -1)
  message(FATAL_ERROR "README.md: expected an '## Embedding' section, found none")
endif()
string(SUBSTRING "${readme}" ${at} -1 readme)
foreach(consumer consumer consumer_mpi)
  string(FIND "${readme}" "```cpp\n" begin)
  if(begin EQUAL -1)
    message(FATAL_ERROR "README.md: expected a ```cpp block for ${consumer} under '## Embedding', "
                        "found none")
  endif()
  math(EXPR begin "${begin} + 7")
  string(SUBSTRING "${readme}" ${begin} -1 readme)
  string(FIND "${readme}" "```" end)
  string(SUBSTRING "${readme}" 0 ${end} example)
  file(WRITE ${WORK_DIR}/${consumer}.cc "${example}")
  math(EXPR end "${end} + 3")
  string(SUBSTRING "${readme}" ${end} -1 readme)
endforeach()
if(NOT CMAKE_BUILD_TYPE)
  set(CMAKE_BUILD_TYPE Release)
endif()

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}")
  endif()
endfunction()

if(MODE STREQUAL "find_package")
  run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
  run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/packaging/find_package -B ${WORK_DIR}/build
      -G ${GENERATOR} -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE}
      -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCONSUMER_SOURCE=${WORK_DIR}/consumer.cc
      -DCONSUMER_MPI_SOURCE=${WORK_DIR}/consumer_mpi.cc)
else()
  # The library is compiled again here. What this test checks is the CMake wiring, not the code
  # generation: without optimisation or debug information (no build type: 133 s of CPU against
  # Debug's 164 on 2 cores), and as a unity build, which parses the headers once per batch of
  # sources instead of once per source (88 s of CPU against 144).
  run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/packaging/add_subdirectory -B ${WORK_DIR}/build
      -G ${GENERATOR} -DCMAKE_BUILD_TYPE= -DCMAKE_UNITY_BUILD=ON -DHOGWILD_SOURCE_DIR=${SOURCE_DIR}
      -DCONSUMER_SOURCE=${WORK_DIR}/consumer.cc)
endif()
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WORK_DIR}/build/consumer)
# Started without mpirun, the example across processes runs as a single process (MPI's
# singleton start); under mpirun the tests of tests/mpi cover it.
if(EXISTS ${WORK_DIR}/build/consumer_mpi)
  run(${WORK_DIR}/build/consumer_mpi)
endif()
