# The plugins (docs/design/cuda.md, "Plugins"): the CUDA backend, libnnfit_cuda.so, where a
# CUDA toolkit is found, and the MPI communicator, libnnfit_mpi.so, where MPI is found. Each
# is a MODULE the core loads with dlopen when it is first used (nnfit/core/plugin.h), so the
# nnfit binary has no DT_NEEDED on libcudart, libcublasLt, libcudnn or libmpi.
#
# Note [Plugin symbols]: a plugin links none of nnfit's static libraries: its references to
# the core bind at dlopen to the executable's own definitions, which nnfit_export_core()
# exports (the symbols of namespace nnfit, through a dynamic list). So the process has one
# kernel registry, one allocator and one typeinfo per error type, and the plugins cost no
# -fPIC build of the core; a core built as a shared library would give the same, at the
# price of PIC code and PLT calls in every kernel and a second way to link each test.

# Plugins from another build refuse to load (load_plugin compares this id).
if(NOT NNFIT_BUILD_ID)
  string(RANDOM LENGTH 12 ALPHABET 0123456789abcdef _nnfit_random_id)
  set(NNFIT_BUILD_ID "${PROJECT_VERSION}-${_nnfit_random_id}" CACHE STRING
      "Identifies this build to its plugins (set it for reproducible builds)" FORCE)
endif()
# On the few files that need it only: a fresh build directory gets a new id, which must not
# cost ccache the rest of the core.
set_property(SOURCE src/core/plugin.cpp APPEND PROPERTY COMPILE_DEFINITIONS NNFIT_BUILD_ID="${NNFIT_BUILD_ID}")
target_link_libraries(nnfit_core PRIVATE ${CMAKE_DL_LIBS})

# nnfit_export_core(TARGET): an executable whose nnfit core the plugins may bind to. It
# exports namespace nnfit, and links each plugin's imports (plugin_imports.cmake), so it
# holds every object of nnfit's libraries a plugin calls into, not only those it calls
# itself. (A Python extension module exports its symbols anyway, and load_plugin makes them
# global; it needs the imports too.) Call it after the plugins are defined.
function(nnfit_export_core target)
  target_link_options(${target} PRIVATE "LINKER:--dynamic-list=${PROJECT_SOURCE_DIR}/cmake/nnfit_core.dynamic-list")
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS "${PROJECT_SOURCE_DIR}/cmake/nnfit_core.dynamic-list")
  foreach(plugin IN LISTS NNFIT_PLUGINS)
    set(imports ${PROJECT_BINARY_DIR}/${plugin}_imports.ld)
    target_link_options(${target} PRIVATE ${imports})
    set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${imports})
    add_dependencies(${target} ${plugin}_imports)
  endforeach()
endfunction()

# nnfit_plugin(NAME ENTRY FILE SOURCES...): libnnfit_NAME.so beside the nnfit binary,
# installed in lib/nnfit (where the loader looks from bin/nnfit), and linked into tests/ so
# the test binaries find it beside themselves as nnfit does. FILE holds the entry point.
function(nnfit_plugin name)
  cmake_parse_arguments(ARG "" "ENTRY" "SOURCES" ${ARGN})
  add_library(nnfit_${name} MODULE ${ARG_ENTRY} ${ARG_SOURCES})
  target_include_directories(nnfit_${name} PRIVATE ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(nnfit_${name} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra>)
  set_target_properties(nnfit_${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}
                        INSTALL_RPATH_USE_LINK_PATH ON)
  set_property(SOURCE ${ARG_ENTRY} APPEND PROPERTY COMPILE_DEFINITIONS NNFIT_BUILD_ID="${NNFIT_BUILD_ID}")
  if(NNFIT_BUILD_TESTS)
    add_custom_command(TARGET nnfit_${name} POST_BUILD
      COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/tests
      COMMAND ${CMAKE_COMMAND} -E create_symlink ../libnnfit_${name}.so ${PROJECT_BINARY_DIR}/tests/libnnfit_${name}.so)
  endif()
  install(TARGETS nnfit_${name} LIBRARY DESTINATION lib/nnfit)
  set(imports ${PROJECT_BINARY_DIR}/nnfit_${name}_imports.ld)
  add_custom_command(OUTPUT ${imports}
    COMMAND ${CMAKE_COMMAND} -DNM=${CMAKE_NM} -DPLUGIN=$<TARGET_FILE:nnfit_${name}> -DOUT=${imports}
            -P ${PROJECT_SOURCE_DIR}/cmake/plugin_imports.cmake
    DEPENDS nnfit_${name} ${PROJECT_SOURCE_DIR}/cmake/plugin_imports.cmake
    COMMENT "The nnfit symbols libnnfit_${name}.so imports")
  add_custom_target(nnfit_${name}_imports DEPENDS ${imports})
  set(NNFIT_PLUGINS ${NNFIT_PLUGINS} nnfit_${name} PARENT_SCOPE)
endfunction()
set(NNFIT_PLUGINS "")
set(NNFIT_NCCL_ENABLED OFF)

if(NNFIT_CUDA_ENABLED)
  # The CUDA language is enabled only here, so a CPU-only build never runs nvcc. The default
  # build compiles one architecture plus its PTX (CMake's "80": sm_80 code, which Ampere and
  # Ada run, and compute_80 PTX that newer GPUs JIT-compile); the cuda-release preset builds
  # the fat binary (docs/design/cuda.md).
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 80)
  endif()
  if(NOT CMAKE_CUDA_COMPILER)
    set(CMAKE_CUDA_COMPILER ${CUDAToolkit_NVCC_EXECUTABLE})
  endif()
  if(CCACHE_PROGRAM AND NOT CMAKE_CUDA_COMPILER_LAUNCHER)
    set(CMAKE_CUDA_COMPILER_LAUNCHER "${CCACHE_PROGRAM}")
  endif()
  enable_language(CUDA)
  # CMake 3.25 knows nvcc's dialect flags up to C++17; nvcc 13 takes C++20, which the
  # sources need.
  if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  endif()
  set(CMAKE_CUDA_STANDARD 20)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  # cuDNN is installed apart from the toolkit: without it the convolutions have no CUDA kernel.
  find_library(NNFIT_CUDNN_LIBRARY cudnn HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/lib64)
  find_path(NNFIT_CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
  set(NNFIT_CUDA_LIBRARIES "CUDA ${CUDAToolkit_VERSION_MAJOR} runtime and cuBLASLt")
  if(NNFIT_CUDNN_LIBRARY AND NNFIT_CUDNN_INCLUDE_DIR)
    set(NNFIT_CUDNN_SOURCE src/backend/cuda/cudnn_conv.cpp)
    set(NNFIT_CUDNN_STATUS "cuDNN ✓")
    file(STRINGS ${NNFIT_CUDNN_INCLUDE_DIR}/cudnn_version.h _cudnn_major REGEX "#define CUDNN_MAJOR [0-9]+")
    string(REGEX REPLACE ".* ([0-9]+)" "\\1" _cudnn_major "${_cudnn_major}")
    string(APPEND NNFIT_CUDA_LIBRARIES ", cuDNN ${_cudnn_major}")
  else()
    set(NNFIT_CUDNN_SOURCE src/backend/cuda/cudnn_absent.cpp)
    set(NNFIT_CUDNN_STATUS "cuDNN ✗ (not found: no CUDA convolutions)")
  endif()
  # The descriptor plans are host code that nnfit_cuda_host_tests checks by emulation.
  add_library(nnfit_cuda_plans OBJECT src/backend/cuda/gemm_plan.cpp src/backend/cuda/dnn_plan.cpp)
  target_include_directories(nnfit_cuda_plans PUBLIC ${PROJECT_SOURCE_DIR}/include PRIVATE ${PROJECT_SOURCE_DIR}/src)
  set_target_properties(nnfit_cuda_plans PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_compile_options(nnfit_cuda_plans PRIVATE -Wall -Wextra)
  nnfit_plugin(cuda ENTRY src/backend/cuda/cuda_plugin_entry.cpp
               SOURCES src/backend/cuda/cuda_backend.cpp src/backend/cuda/cuda_sub_allocator.cpp
                       src/backend/cuda/cuda_queues.cpp src/backend/cuda/cublaslt_matmul.cpp ${NNFIT_CUDNN_SOURCE} src/backend/cuda/own_kernels.cu
                       src/backend/cuda/own_kernels_more.cu)
  # The shared runtime, which the cuBLASLt and cuDNN libraries use too (CMake's default for
  # CUDA sources is the static one).
  set_target_properties(nnfit_cuda PROPERTIES CUDA_RUNTIME_LIBRARY Shared)
  target_sources(nnfit_cuda PRIVATE $<TARGET_OBJECTS:nnfit_cuda_plans>)
  if(NNFIT_CUDNN_LIBRARY AND NNFIT_CUDNN_INCLUDE_DIR)
    target_include_directories(nnfit_cuda PRIVATE ${NNFIT_CUDNN_INCLUDE_DIR})
    target_link_libraries(nnfit_cuda PRIVATE ${NNFIT_CUDNN_LIBRARY})
  endif()
  target_link_libraries(nnfit_cuda PRIVATE CUDA::cudart CUDA::cublasLt)
  # --fmad=false: no a·b + c contracted on the device where the host-run check does not
  # (Note [Bitwise slot updates]); own kernels are memory-bound, so it costs nothing.
  target_compile_options(nnfit_cuda PRIVATE
                         $<$<COMPILE_LANGUAGE:CUDA>:--fmad=false --expt-relaxed-constexpr -Xcompiler=-fno-math-errno>)
  # The NCCL communicator (docs/design/distributed.md, "NCCL"): its own plugin, so a CUDA run
  # on one GPU never maps libnccl. Found beside the toolkit (NVIDIA's libnccl-dev puts it in
  # the system paths, which find_library searches too).
  find_library(NNFIT_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/lib64)
  find_path(NNFIT_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
  if(NNFIT_NCCL_LIBRARY AND NNFIT_NCCL_INCLUDE_DIR)
    nnfit_plugin(nccl ENTRY src/dist/nccl/nccl_communicator.cpp)
    target_include_directories(nnfit_nccl PRIVATE ${NNFIT_NCCL_INCLUDE_DIR})
    target_link_libraries(nnfit_nccl PRIVATE ${NNFIT_NCCL_LIBRARY} CUDA::cudart)
    file(STRINGS ${NNFIT_NCCL_INCLUDE_DIR}/nccl.h _nccl_version REGEX "#define NCCL_(MAJOR|MINOR|PATCH) [0-9]+")
    string(REGEX REPLACE "[^;]* ([0-9]+);[^;]* ([0-9]+);[^;]* ([0-9]+)" "\\1.\\2.\\3" NNFIT_NCCL_VERSION "${_nccl_version}")
    set(NNFIT_NCCL_ENABLED ON)
  else()
    set(NNFIT_NCCL_REASON "no nccl.h / libnccl beside the CUDA toolkit")
  endif()
  # The architectures as one comma-separated string (a ';' would split the definition).
  string(REPLACE ";" "," NNFIT_CUDA_ARCHITECTURES_TEXT "${CMAKE_CUDA_ARCHITECTURES}")
  set_property(SOURCE src/backend/backend_registry.cpp APPEND PROPERTY COMPILE_DEFINITIONS
               NNFIT_WITH_CUDA=1 NNFIT_CUDA_ARCHITECTURES="${NNFIT_CUDA_ARCHITECTURES_TEXT}"
               NNFIT_CUDA_LIBRARIES="${NNFIT_CUDA_LIBRARIES}")
else()
  set_property(SOURCE src/backend/backend_registry.cpp APPEND PROPERTY COMPILE_DEFINITIONS NNFIT_WITH_CUDA=0)
endif()

if(NNFIT_NCCL_ENABLED)
  set_property(SOURCE src/dist/nccl_host.cpp APPEND PROPERTY COMPILE_DEFINITIONS NNFIT_WITH_NCCL=1)
else()
  set_property(SOURCE src/dist/nccl_host.cpp APPEND PROPERTY COMPILE_DEFINITIONS NNFIT_WITH_NCCL=0)
  if(NOT NNFIT_CUDA_ENABLED)
    set(NNFIT_NCCL_REASON "no CUDA backend")
  endif()
endif()

if(NNFIT_MPI_ENABLED)
  nnfit_plugin(mpi ENTRY src/dist/mpi/mpi_communicator.cpp)
  target_link_libraries(nnfit_mpi PRIVATE MPI::MPI_CXX)
  set_property(SOURCE src/dist/communicator.cpp APPEND PROPERTY COMPILE_DEFINITIONS NNFIT_WITH_MPI=1)
else()
  set_property(SOURCE src/dist/communicator.cpp APPEND PROPERTY COMPILE_DEFINITIONS NNFIT_WITH_MPI=0)
endif()
