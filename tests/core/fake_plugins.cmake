# Test plugins for tests/core/plugin_test.cpp, in tests/fake_plugins/: libnnfit_fake_good.so
# (this build's id), libnnfit_fake_other.so (another build's id) and libnnfit_fake_missing.so
# (needs libnnfit_test_vendor.so, which is built elsewhere and not on its run path).
set(_fake_dir ${CMAKE_CURRENT_BINARY_DIR}/fake_plugins)
add_library(nnfit_test_vendor SHARED ${CMAKE_CURRENT_SOURCE_DIR}/core/fake_plugins/fake_vendor.cpp)
set_target_properties(nnfit_test_vendor PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${_fake_dir}/vendor)
foreach(kind good other missing)
  add_library(nnfit_fake_${kind} MODULE ${CMAKE_CURRENT_SOURCE_DIR}/core/fake_plugins/fake_plugin.cpp)
  target_include_directories(nnfit_fake_${kind} PRIVATE ${PROJECT_SOURCE_DIR}/include ${CMAKE_CURRENT_SOURCE_DIR})
  set_target_properties(nnfit_fake_${kind} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${_fake_dir})
  add_dependencies(nnfit_core_tests nnfit_fake_${kind})
endforeach()
target_compile_definitions(nnfit_fake_good PRIVATE NNFIT_FAKE_BUILD_ID="${NNFIT_BUILD_ID}")
target_compile_definitions(nnfit_fake_other PRIVATE NNFIT_FAKE_BUILD_ID="0.0.0-another-build")
target_compile_definitions(nnfit_fake_missing PRIVATE NNFIT_FAKE_BUILD_ID="${NNFIT_BUILD_ID}" NNFIT_FAKE_NEEDS_VENDOR=1)
target_link_libraries(nnfit_fake_missing PRIVATE nnfit_test_vendor)
set_target_properties(nnfit_fake_missing PROPERTIES SKIP_BUILD_RPATH ON)
target_compile_definitions(nnfit_core_tests PRIVATE NNFIT_FAKE_PLUGIN_DIR="${_fake_dir}")
