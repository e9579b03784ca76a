# Compiles GLSL compute shaders to SPIR-V at build time and embeds them as uint32_t arrays.
#
# A shader declares its own build variants with lines of the form
#   //! variant NAME [-DMACRO[=VALUE] ...]
# Each variant becomes the array `infini::spirv::<shader>_<NAME>` in the header
# `spirv/<shader>_<NAME>.h`. A shader without variant lines builds once as `<shader>`.
# `spirv/<shader>_variants.h` lists every variant of a shader by name
# (`infini::spirv::<shader>_variants`, an array of ShaderVariant), so that host code can pick a
# variant by its name (matmul: by the element types it reads) with no table of its own to edit.
# glslang writes a depfile, so editing an included .glsl rebuilds every shader that includes it.
# A compile error, an empty or malformed module, or (when spirv-val exists) an invalid module
# fails the build.
#
# Matrix units: variants that define MATRIX_UNITS use the hardware fragments of
# common/fragments.glsl. Where a glslang that compiles GL_KHR_cooperative_matrix is at hand
# (Ubuntu 24.04's, Debian 13's; not Debian 12's 12) they are built on it (MATRIX_UNITS_KHR, every
# vendor's matrix units); else on GL_NV_cooperative_matrix, which only NVIDIA drivers run. That
# glslang is the build's own, or INFINI_GLSLANG_KHR for these variants alone (a newer one beside an
# older system glslang, e.g. scripts/lavapipe-khr.sh's; the spirv-val beside it, if any, checks
# them). The generated spirv/matrix_units_api.h tells the host code which.

# Whether GLSLANG compiles a cooperative-matrix KHR shader: sets OUT to ON or OFF.
function(infini_glslang_has_khr_cooperative_matrix GLSLANG OUT)
  set(dir ${CMAKE_BINARY_DIR}/glslang-feature-test)
  file(MAKE_DIRECTORY ${dir})
  file(WRITE ${dir}/khr_cooperative_matrix.comp "#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer Out { float data[]; };
void main() {
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> c = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(1.0);
  coopMatStore(c, data, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}
")
  execute_process(COMMAND ${GLSLANG} -V --quiet --target-env vulkan1.1 -o ${dir}/khr_cooperative_matrix.spv
                          ${dir}/khr_cooperative_matrix.comp
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
  if(rc EQUAL 0)
    set(${OUT} ON PARENT_SCOPE)
  else()
    set(${OUT} OFF PARENT_SCOPE)
  endif()
endfunction()

set(INFINI_GLSLANG_KHR "" CACHE FILEPATH
    "glslang for the matrix-unit kernels on KHR, where the build's own lacks GL_KHR_cooperative_matrix")
set(glslang_khr ${Vulkan_GLSLANG_VALIDATOR_EXECUTABLE})
set(spirv_val_khr ${INFINI_SPIRV_VAL})
if(INFINI_GLSLANG_KHR)
  set(glslang_khr ${INFINI_GLSLANG_KHR})
  get_filename_component(khr_dir ${INFINI_GLSLANG_KHR} DIRECTORY)
  set(spirv_val_khr)
  if(EXISTS ${khr_dir}/spirv-val)
    set(spirv_val_khr ${khr_dir}/spirv-val)
  endif()
endif()
infini_glslang_has_khr_cooperative_matrix(${glslang_khr} INFINI_MATRIX_UNITS_KHR)
if(INFINI_GLSLANG_KHR AND NOT INFINI_MATRIX_UNITS_KHR)
  message(FATAL_ERROR "INFINI_GLSLANG_KHR=${INFINI_GLSLANG_KHR} does not compile GL_KHR_cooperative_matrix")
endif()
if(INFINI_MATRIX_UNITS_KHR)
  message(STATUS "infini: matrix-unit kernels on VK_KHR_cooperative_matrix (${glslang_khr})")
else()
  message(STATUS "infini: matrix-unit kernels on VK_NV_cooperative_matrix (this glslang has no GL_KHR_cooperative_matrix)")
endif()

function(infini_add_shader_library target)
  cmake_parse_arguments(ARG "" "INCLUDE_DIR" "SOURCES" ${ARGN})
  set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/generated)
  file(MAKE_DIRECTORY ${out_dir}/spirv)
  # What the matrix-unit variants are built with, written only when it changes: their dependency,
  # so that every generator rebuilds them when it does (Ninja would from the command line alone).
  execute_process(COMMAND ${glslang_khr} --version OUTPUT_VARIABLE khr_version ERROR_QUIET)
  set(matrix_units_stamp ${out_dir}/matrix_units.stamp)
  file(CONFIGURE OUTPUT ${matrix_units_stamp} CONTENT "khr=${INFINI_MATRIX_UNITS_KHR} glslang=${glslang_khr}\n${khr_version}")
  set(headers)
  set(stems)
  foreach(src IN LISTS ARG_SOURCES)
    get_filename_component(src_abs ${src} ABSOLUTE)
    get_filename_component(stem ${src} NAME_WE)
    # The symbols (infini::spirv::STEM_VARIANT) are named by the file alone, whatever its folder.
    if(stem IN_LIST stems)
      message(FATAL_ERROR "two shaders are named ${stem}.comp: kernel names must be unique across folders")
    endif()
    list(APPEND stems ${stem})
    file(STRINGS ${src_abs} variant_lines REGEX "^//! variant ")
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${src_abs})
    if(NOT variant_lines)
      set(variant_lines "//! variant ")
    endif()
    set(index_includes)
    set(index_rows)
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
      set(glslang ${Vulkan_GLSLANG_VALIDATOR_EXECUTABLE})
      set(spirv_val ${INFINI_SPIRV_VAL})
      set(stamp)
      if("-DMATRIX_UNITS" IN_LIST defines)
        set(stamp ${matrix_units_stamp})  # rebuilt when the extension or its glslang changes
        if(INFINI_MATRIX_UNITS_KHR)
          list(APPEND defines -DMATRIX_UNITS_KHR)
          set(glslang ${glslang_khr})
          set(spirv_val ${spirv_val_khr})
        endif()
      endif()
      set(spv ${out_dir}/spirv/${symbol}.spv)
      set(header ${out_dir}/spirv/${symbol}.h)
      set(validate_cmd)
      if(spirv_val)
        set(validate_cmd COMMAND ${spirv_val} --target-env vulkan1.1 ${spv})
      endif()
      add_custom_command(
        OUTPUT ${spv} ${header}
        COMMAND ${glslang} -V --quiet --target-env vulkan1.1 -Os
                -I${ARG_INCLUDE_DIR} ${defines} --depfile ${spv}.d -o ${spv} ${src_abs}
        ${validate_cmd}
        COMMAND ${CMAKE_COMMAND} -DSPV=${spv} -DHEADER=${header} -DSYMBOL=${symbol}
                -P ${PROJECT_SOURCE_DIR}/cmake/embed_spirv.cmake
        DEPENDS ${src_abs} ${PROJECT_SOURCE_DIR}/cmake/embed_spirv.cmake ${stamp}
        DEPFILE ${spv}.d
        COMMENT "GLSL ${stem} ${defines} -> SPIR-V"
        VERBATIM)
      list(APPEND headers ${header})
      string(APPEND index_includes "#include \"spirv/${symbol}.h\"\n")
      string(APPEND index_rows "    {\"${symbol}\", ${symbol}},\n")
    endforeach()
    # Written at configure time (the variants are known then), only when it changes.
    file(CONFIGURE OUTPUT ${out_dir}/spirv/${stem}_variants.h @ONLY CONTENT
         "// Generated by cmake/InfiniShaders.cmake from the variant lines of ${stem}.comp.\n#pragma once\n#include \"spirv/shader_variant.h\"\n${index_includes}\nnamespace infini::spirv {\ninline constexpr ShaderVariant ${stem}_variants[] = {\n${index_rows}};\n}  // namespace infini::spirv\n")
  endforeach()
  file(CONFIGURE OUTPUT ${out_dir}/spirv/shader_variant.h CONTENT
       "// Generated by cmake/InfiniShaders.cmake: one compiled variant of a shader, by name.\n#pragma once\n#include <cstdint>\n#include <span>\n#include <string_view>\n\nnamespace infini::spirv {\nstruct ShaderVariant {\n  std::string_view name;  // <shader>_<variant>\n  std::span<const uint32_t> words;\n};\n}  // namespace infini::spirv\n")
  add_custom_target(${target}_compile DEPENDS ${headers})
  add_library(${target} INTERFACE)
  add_dependencies(${target} ${target}_compile)
  target_include_directories(${target} INTERFACE ${out_dir})
  # Written only when it changes, so that switching extensions rebuilds only what includes it.
  if(INFINI_MATRIX_UNITS_KHR)
    set(khr 1)
  else()
    set(khr 0)
  endif()
  file(CONFIGURE OUTPUT ${out_dir}/spirv/matrix_units_api.h CONTENT
       "// Generated by cmake/InfiniShaders.cmake: 1 where the matrix-unit kernels are on KHR, 0 on NV.\n#pragma once\n#define INFINI_MATRIX_UNITS_KHR ${khr}\n")
endfunction()
