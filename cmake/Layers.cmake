# Layers the build enforces (docs/architecture.md, "Layers"), twice over:
# - Include roots. Headers are included as "<layer>/<file>.hpp". No library exports a
#   whole source folder (server/, shared/, client-sim/) as its include path: zone_layer()
#   gives each library a root of its own in the build tree,
#   build/include-roots/<target>/<layer>/, holding links to that library's headers and
#   nothing else, and exports it. A library's compiler sees its own root and those of the
#   libraries it links (PUBLIC usage requirements pass on, as for any CMake target), so a
#   header of a layer it does not link is simply not found.
# - An include check. Before a library compiles, cmake/check_layers.cmake reads the
#   #include lines of its sources and of the headers in its folder, and fails the build,
#   naming FILE:LINE and the layer, on a header of a library it does not link: directly,
#   or through the PUBLIC (interface) links of what it links. It gives the message a
#   compiler's "file not found" does not, and catches an include written relative to the
#   folder ("../aoi/x.hpp"), which no include path governs.
# So the allowed graph is the link graph in the CMakeLists.txt files, and a new dependency
# between layers is a visible target_link_libraries() change.

# zone_layer(<target> <prefix> [DIR <folder>] [HEADERS <file>...] [PROGRAM]): the files
# of <target> are the layer whose headers are included as "<prefix>/...". Checked: its
# sources, and the .hpp/.h files of DIR (default: the target's source folder), or only
# HEADERS when the folder is shared with another library, or none for a PROGRAM.
function(zone_layer target prefix)
  cmake_parse_arguments(PARSE_ARGV 2 arg "PROGRAM" "DIR" "HEADERS")
  get_target_property(source_dir ${target} SOURCE_DIR)
  if(arg_PROGRAM)
    set(headers "")
  elseif(arg_HEADERS)
    list(TRANSFORM arg_HEADERS PREPEND "${source_dir}/" OUTPUT_VARIABLE headers)
  else()
    set(dir "${source_dir}")
    if(arg_DIR)
      set(dir "${source_dir}/${arg_DIR}")
    endif()
    file(GLOB headers CONFIGURE_DEPENDS "${dir}/*.hpp" "${dir}/*.h")
  endif()
  set_property(TARGET ${target} PROPERTY ZONE_LAYER ${prefix})
  set_property(TARGET ${target} PROPERTY ZONE_LAYER_HEADERS "${headers}")
  set_property(GLOBAL APPEND PROPERTY ZONE_LAYER_TARGETS ${target})
  if(NOT arg_PROGRAM)
    _zone_layer_root(${target} ${prefix} "${headers}")
  endif()
endfunction()

# The include root of <target>: build/include-roots/<target>/<prefix>/ with a link to
# each of its headers, made again at every configure (a header added or removed reruns
# it: the glob above is CONFIGURE_DEPENDS). Exported to whatever links the target;
# zone_layer_root(<target> <var>) names it for a second target built from the same
# sources (zoneclient_shared).
function(_zone_layer_root target prefix headers)
  set(root "${PROJECT_BINARY_DIR}/include-roots/${target}")
  file(REMOVE_RECURSE "${root}")
  file(MAKE_DIRECTORY "${root}/${prefix}")
  foreach(header IN LISTS headers)
    cmake_path(GET header FILENAME name)
    file(CREATE_LINK "${header}" "${root}/${prefix}/${name}" SYMBOLIC)
  endforeach()
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY")
    target_include_directories(${target} INTERFACE "$<BUILD_INTERFACE:${root}>")
  else()
    target_include_directories(${target} PUBLIC "$<BUILD_INTERFACE:${root}>")
  endif()
  set_property(TARGET ${target} PROPERTY ZONE_LAYER_ROOT "${root}")
endfunction()

function(zone_layer_root target out)
  get_target_property(root ${target} ZONE_LAYER_ROOT)
  set(${out} "${root}" PARENT_SCOPE)
endfunction()

# The layers <target> may include, as "a,b,c": its own, those of every library it links,
# and those of the libraries they link PUBLIC or INTERFACE, transitively (what their
# usage requirements pass on; a PRIVATE dependency of a dependency, $<LINK_ONLY:...>, is
# linked but not usable).
function(_zone_layer_allowed target out)
  get_target_property(own ${target} ZONE_LAYER)
  set(allowed ${own})
  set(seen "")
  set(queue "")
  get_target_property(type ${target} TYPE)
  if(NOT type STREQUAL "INTERFACE_LIBRARY")
    get_target_property(direct ${target} LINK_LIBRARIES)
    if(direct)
      foreach(item IN LISTS direct)
        # A private dependency of a static library is still the library's own to use.
        if(item MATCHES "^\\$<LINK_ONLY:(.+)>$")
          set(item "${CMAKE_MATCH_1}")
        endif()
        list(APPEND queue "${item}")
      endforeach()
    endif()
  endif()
  get_target_property(interface ${target} INTERFACE_LINK_LIBRARIES)
  if(interface)
    list(APPEND queue ${interface})
  endif()
  while(queue)
    list(POP_FRONT queue item)
    if(NOT TARGET "${item}" OR item IN_LIST seen)
      continue()  # link-only entries, generator expressions, plain libraries, done ones
    endif()
    list(APPEND seen "${item}")
    get_target_property(layer ${item} ZONE_LAYER)
    if(layer)
      list(APPEND allowed ${layer})
    endif()
    get_target_property(next ${item} INTERFACE_LINK_LIBRARIES)
    if(next)
      list(APPEND queue ${next})
    endif()
  endwhile()
  list(REMOVE_DUPLICATES allowed)
  list(JOIN allowed "," joined)
  set(${out} "${joined}" PARENT_SCOPE)
endfunction()

# Called once, after every layer is defined: adds each layer's check, a step every build
# of the library runs first (it reruns when one of the files, or the allowed set, changes).
function(zone_enforce_layers)
  get_property(targets GLOBAL PROPERTY ZONE_LAYER_TARGETS)
  set(known "")
  foreach(target IN LISTS targets)
    get_target_property(layer ${target} ZONE_LAYER)
    list(APPEND known ${layer})
  endforeach()
  list(REMOVE_DUPLICATES known)
  list(JOIN known "," known)
  foreach(target IN LISTS targets)
    _zone_layer_allowed(${target} allowed)
    get_target_property(layer ${target} ZONE_LAYER)
    get_target_property(source_dir ${target} SOURCE_DIR)
    get_target_property(sources ${target} SOURCES)
    get_target_property(headers ${target} ZONE_LAYER_HEADERS)
    set(files "")
    foreach(source IN LISTS sources headers)
      cmake_path(ABSOLUTE_PATH source BASE_DIRECTORY "${source_dir}" NORMALIZE)
      # Generated files (the embedded map page, flatc's header) are not written by hand.
      cmake_path(IS_PREFIX PROJECT_SOURCE_DIR "${source}" in_tree)
      if(in_tree AND EXISTS "${source}" AND source MATCHES "\\.(cpp|hpp|h)$")
        list(APPEND files "${source}")
      endif()
    endforeach()
    list(REMOVE_DUPLICATES files)
    set(stamp "${PROJECT_BINARY_DIR}/layers/${target}.stamp")
    set(inputs "${PROJECT_BINARY_DIR}/layers/${target}.cmake")
    # Rewritten only when it changes, so a changed allowed set reruns the check.
    file(CONFIGURE OUTPUT "${inputs}"
         CONTENT "set(LIBRARY \"${target}\")\nset(LAYER \"${layer}\")\nset(ALLOWED \"${allowed}\")\nset(KNOWN \"${known}\")\nset(FILES \"${files}\")\nset(STAMP \"${stamp}\")\n")
    add_custom_command(
      OUTPUT "${stamp}"
      COMMAND ${CMAKE_COMMAND} -DINPUTS=${inputs} -DROOT=${PROJECT_SOURCE_DIR} -P
              ${PROJECT_SOURCE_DIR}/cmake/check_layers.cmake
      DEPENDS ${files} "${inputs}" ${PROJECT_SOURCE_DIR}/cmake/check_layers.cmake
      COMMENT "Checking the layers ${target} includes"
      VERBATIM)
    add_custom_target(${target}_layers ALL DEPENDS "${stamp}")
    get_target_property(type ${target} TYPE)
    if(NOT type STREQUAL "INTERFACE_LIBRARY")
      add_dependencies(${target} ${target}_layers)
    endif()
  endforeach()
endfunction()
