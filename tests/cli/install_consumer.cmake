# Installs infini from the build tree into a scratch prefix, builds samples/hello_infini against
# the installed package (find_package(infini), only <prefix>/include on its include path) and runs
# it. Arguments: -DBUILD_DIR= -DSOURCE_DIR= -DSCRATCH=
file(REMOVE_RECURSE ${SCRATCH})
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(output "${out}" PARENT_SCOPE)
endfunction()
run("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${SCRATCH}/prefix)
if(EXISTS ${SCRATCH}/prefix/include/vk OR EXISTS ${SCRATCH}/prefix/include/model)
  message(FATAL_ERROR "internal headers were installed")
endif()
run("configure" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/samples/hello_infini -B ${SCRATCH}/build -G Ninja
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${SCRATCH}/prefix)
run("build" ${CMAKE_COMMAND} --build ${SCRATCH}/build)
run("hello_infini" ${SCRATCH}/build/hello_infini)
message("${output}")
if(NOT output MATCHES "streamed 48 tokens, 3 segments written")
  message(FATAL_ERROR "unexpected output from hello_infini")
endif()
