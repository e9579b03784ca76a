# `cmake --install`: the library, its public headers, the `infini` program and a CMake package,
# so another project can use find_package(infini) and link infini::infini.
include(CMakePackageConfigHelpers)
set(INFINI_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/infini)
install(TARGETS infini EXPORT infiniTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/infini DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT infiniTargets NAMESPACE infini:: DESTINATION ${INFINI_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/infiniConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/infiniConfig.cmake INSTALL_DESTINATION ${INFINI_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/infiniConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/infiniConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/infiniConfigVersion.cmake
  DESTINATION ${INFINI_CMAKE_DIR})
