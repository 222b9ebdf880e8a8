# tests/dist: the communicator's unit tests (always), and the MPI end-to-end tests
# (`mpirun --oversubscribe -np 2|3 nnfit train`, ctest label `mpi`; each skips with the
# reason where nnfit was built without MPI). The MPI tests take about a minute on two
# cores, most of it the watchdog cases waiting out their 5 s timeout.
add_executable(nnfit_dist_tests ${CMAKE_CURRENT_SOURCE_DIR}/dist/communicator_test.cpp
               ${CMAKE_CURRENT_SOURCE_DIR}/dist/nccl_host_test.cpp)
target_include_directories(nnfit_dist_tests PRIVATE ${PROJECT_SOURCE_DIR}/src)
# nnfit_backend: device memory for the NCCL device test (CudaDevice.NcclOverOneRank).
target_link_libraries(nnfit_dist_tests PRIVATE nnfit_dist nnfit_backend GTest::gtest_main)
target_compile_options(nnfit_dist_tests PRIVATE -O1)
nnfit_export_core(nnfit_dist_tests)
gtest_discover_tests(nnfit_dist_tests DISCOVERY_MODE PRE_TEST)

if(TARGET nnfit)
  add_executable(nnfit_dist_mpi_tests ${CMAKE_CURRENT_SOURCE_DIR}/dist/mpi_train_test.cpp)
  target_include_directories(nnfit_dist_mpi_tests PRIVATE ${PROJECT_SOURCE_DIR}/src ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(nnfit_dist_mpi_tests PRIVATE nnfit_model nlohmann_json::nlohmann_json GTest::gtest_main)
  target_compile_options(nnfit_dist_mpi_tests PRIVATE -O1)
  set(_mpiexec "${MPIEXEC_EXECUTABLE}")
  if(NOT _mpiexec)
    set(_mpiexec "mpirun-not-found")
  endif()
  target_compile_definitions(nnfit_dist_mpi_tests PRIVATE
    NNFIT_CLI="${PROJECT_BINARY_DIR}/nnfit" NNFIT_MPIEXEC="${_mpiexec}"
    NNFIT_TEST_WITH_MPI=$<BOOL:${NNFIT_MPI_ENABLED}>)
  add_dependencies(nnfit_dist_mpi_tests nnfit example_data_parallel)
  # Each test runs two or three ranks: ctest counts them as two processors.
  gtest_discover_tests(nnfit_dist_mpi_tests DISCOVERY_MODE PRE_TEST
    PROPERTIES LABELS mpi PROCESSORS 2 TIMEOUT 300)
endif()
