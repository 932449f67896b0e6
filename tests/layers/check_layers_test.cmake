# cmake -DROOT=<source dir> -DWORK=<scratch folder> -P check_layers_test.cmake
#
# The layer check (cmake/check_layers.cmake) refuses forbidden_include.cpp, a config file
# including an AOI header, when the config may not use the AOI: it fails, names the file,
# the line and the layer, leaves the library's stamp unwritten (so the library does not
# build), and says nothing of the includes it may make. The same file passes once the AOI
# is allowed.
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(fixture "${ROOT}/tests/layers/forbidden_include.cpp")

function(check_with name allowed)
  file(WRITE "${WORK}/${name}.cmake"
       "set(LIBRARY zone_config)\nset(LAYER config)\nset(ALLOWED \"${allowed}\")\n"
       "set(KNOWN \"aoi,config,protocol,world,util\")\nset(FILES \"${fixture}\")\n"
       "set(STAMP \"${WORK}/${name}.stamp\")\n")
  execute_process(
    COMMAND ${CMAKE_COMMAND} -DINPUTS=${WORK}/${name}.cmake -DROOT=${ROOT} -P
            ${ROOT}/cmake/check_layers.cmake
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  set(rc "${rc}" PARENT_SCOPE)
  set(out "${out}" PARENT_SCOPE)
endfunction()

check_with(refused "config,protocol")
message(STATUS "the check's output:\n${out}")
if(rc EQUAL 0)
  message(FATAL_ERROR "the check passed a config file that includes aoi/static_grid.hpp")
endif()
string(CONCAT expected "tests/layers/forbidden_include\\.cpp:8: error: includes "
       "\"aoi/static_grid\\.hpp\": zone_config \\(config\\) may not use the aoi layer; "
       "it may use protocol ")
if(NOT out MATCHES "${expected}")
  message(FATAL_ERROR "expected a line matching\n  ${expected}")
endif()
string(REGEX MATCHALL "error: includes" errors "${out}")
list(LENGTH errors count)
if(NOT count EQUAL 1)
  message(FATAL_ERROR "expected exactly one refused include, got ${count}")
endif()
if(EXISTS "${WORK}/refused.stamp")
  message(FATAL_ERROR "the check wrote its stamp although it failed")
endif()

check_with(allowed "config,protocol,aoi")
if(NOT rc EQUAL 0 OR NOT EXISTS "${WORK}/allowed.stamp")
  message(FATAL_ERROR "the check refused the file with the AOI allowed:\n${out}")
endif()
