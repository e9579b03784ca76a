# Compiles GLSL compute shaders to SPIR-V at build time and embeds them as uint32_t arrays.
#
# A shader declares its own build variants with lines of the form
#   //! variant NAME [-DMACRO[=VALUE] ...]
# Each variant becomes the array `infini::spirv::<shader>_<NAME>` in the header
# `spirv/<shader>_<NAME>.h`. A shader without variant lines builds once as `<shader>`.
# glslang writes a depfile, so editing an included .glsl rebuilds every shader that includes it.
# A compile error, an empty or malformed module, or (when spirv-val exists) an invalid module
# fails the build.

function(infini_add_shader_library target)
  cmake_parse_arguments(ARG "" "INCLUDE_DIR" "SOURCES" ${ARGN})
  set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/generated)
  file(MAKE_DIRECTORY ${out_dir}/spirv)
  set(headers)
  foreach(src IN LISTS ARG_SOURCES)
    get_filename_component(src_abs ${src} ABSOLUTE)
    get_filename_component(stem ${src} NAME_WE)
    file(STRINGS ${src_abs} variant_lines REGEX "^//! variant ")
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${src_abs})
    if(NOT variant_lines)
      set(variant_lines "//! variant ")
    endif()
    foreach(line IN LISTS variant_lines)
      string(REGEX REPLACE "^//! variant[ ]*" "" spec "${line}")
      separate_arguments(words UNIX_COMMAND "${spec}")
      list(LENGTH words nwords)
      if(nwords EQUAL 0)
        set(symbol ${stem})
        set(defines)
      else()
        list(GET words 0 variant)
        list(REMOVE_AT words 0)
        set(symbol ${stem}_${variant})
        set(defines ${words})
      endif()
      set(spv ${out_dir}/spirv/${symbol}.spv)
      set(header ${out_dir}/spirv/${symbol}.h)
      set(validate_cmd)
      if(INFINI_SPIRV_VAL)
        set(validate_cmd COMMAND ${INFINI_SPIRV_VAL} --target-env vulkan1.1 ${spv})
      endif()
      add_custom_command(
        OUTPUT ${spv} ${header}
        COMMAND ${Vulkan_GLSLANG_VALIDATOR_EXECUTABLE} -V --quiet --target-env vulkan1.1 -Os
                -I${ARG_INCLUDE_DIR} ${defines} --depfile ${spv}.d -o ${spv} ${src_abs}
        ${validate_cmd}
        COMMAND ${CMAKE_COMMAND} -DSPV=${spv} -DHEADER=${header} -DSYMBOL=${symbol}
                -P ${PROJECT_SOURCE_DIR}/cmake/embed_spirv.cmake
        DEPENDS ${src_abs} ${PROJECT_SOURCE_DIR}/cmake/embed_spirv.cmake
        DEPFILE ${spv}.d
        COMMENT "GLSL ${stem} ${defines} -> SPIR-V"
        VERBATIM)
      list(APPEND headers ${header})
    endforeach()
  endforeach()
  add_custom_target(${target}_compile DEPENDS ${headers})
  add_library(${target} INTERFACE)
  add_dependencies(${target} ${target}_compile)
  target_include_directories(${target} INTERFACE ${out_dir})
endfunction()
