# cmake -DINPUTS=<target>.cmake -DROOT=<source dir> -P check_layers.cmake
#
# One library's layer check (cmake/Layers.cmake): INPUTS sets LIBRARY (the target), LAYER
# (its include prefix), ALLOWED and KNOWN (include prefixes, comma-separated: those it may
# use, and every layer's), FILES (absolute paths) and STAMP (touched when the check
# passes). An #include of "<layer>/..." for a known layer not in ALLOWED is reported as
# FILE:LINE and fails the check; other includes (the standard library, third-party
# headers, a file's neighbours) are not layers and pass.
cmake_minimum_required(VERSION 3.25)
include("${INPUTS}")
string(REPLACE "," ";" allowed "${ALLOWED}")
string(REPLACE "," ";" known "${KNOWN}")
set(may_use "${allowed}")
list(REMOVE_ITEM may_use "${LAYER}")
list(JOIN may_use ", " may_use)
if(may_use STREQUAL "")
  set(may_use "no other layer")
endif()

set(bad 0)
foreach(file IN LISTS FILES)
  # Only the include lines are read (file(STRINGS) filters in C++, so a library's check
  # takes milliseconds); the line number is looked up for the rare bad one.
  file(STRINGS "${file}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<][^\">/]+/")
  foreach(line IN LISTS includes)
    if(NOT line MATCHES "^[ \t]*#[ \t]*include[ \t]*[\"<](([^\">/]+)/[^\">]*)[\">]")
      continue()
    endif()
    set(path "${CMAKE_MATCH_1}")
    set(layer "${CMAKE_MATCH_2}")
    if(NOT layer IN_LIST known OR layer IN_LIST allowed)
      continue()
    endif()
    file(READ "${file}" text)
    string(FIND "${text}" "${line}" at)
    set(number "?")
    if(at GREATER_EQUAL 0)
      string(SUBSTRING "${text}" 0 ${at} before)
      string(REGEX REPLACE "[^\n]" "" newlines "${before}")
      string(LENGTH "${newlines}" number)
      math(EXPR number "${number} + 1")
    endif()
    cmake_path(RELATIVE_PATH file BASE_DIRECTORY "${ROOT}" OUTPUT_VARIABLE shown)
    message(NOTICE "${shown}:${number}: error: includes \"${path}\": ${LIBRARY} (${LAYER}) may not "
                   "use the ${layer} layer; it may use ${may_use} (the libraries it links; "
                   "docs/architecture.md, \"Layers\")")
    math(EXPR bad "${bad} + 1")
  endforeach()
endforeach()

if(bad GREATER 0)
  message(FATAL_ERROR "${LIBRARY}: ${bad} include(s) of a layer it does not link")
endif()
file(TOUCH "${STAMP}")
