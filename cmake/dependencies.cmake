# Every external dependency, each from a Debian package that scripts/setup.sh installs.
find_package(Threads REQUIRED)
find_package(OpenMP REQUIRED)
find_package(dnnl 2.6 CONFIG REQUIRED)          # libdnnl-dev
find_package(ZLIB REQUIRED)                     # zlib1g-dev
find_package(JPEG REQUIRED)                     # libjpeg62-turbo-dev (image decoding in io)
find_package(PNG REQUIRED)                      # libpng-dev
# HDF5 and libzip through pkg-config: CMake's FindHDF5 needs the C language enabled, and
# Debian's libzip-config.cmake refers to tools (zipcmp) that libzip-dev does not install.
find_package(PkgConfig REQUIRED)
pkg_check_modules(HDF5 REQUIRED IMPORTED_TARGET hdf5-serial)   # libhdf5-dev (Keras .h5, model.weights.h5)
pkg_check_modules(LIBZIP REQUIRED IMPORTED_TARGET libzip)      # libzip-dev (Keras .keras archives)
find_package(nlohmann_json 3.10 REQUIRED)       # nlohmann-json3-dev
find_package(CLI11 CONFIG REQUIRED)             # libcli11-dev

set(NNFIT_CUDA_ENABLED OFF)
set(NNFIT_CUDA_REASON "disabled with NNFIT_WITH_CUDA=OFF")
if(NOT NNFIT_WITH_CUDA STREQUAL "OFF")
  if(NOT CUDAToolkit_ROOT AND EXISTS /usr/local/cuda)
    set(CUDAToolkit_ROOT /usr/local/cuda)
  endif()
  find_package(CUDAToolkit QUIET)
  # AUTO builds the plugin only where it can load: a toolkit and an NVIDIA driver (so
  # README command 1 on a machine without a GPU does not wait for nvcc). ON builds it
  # wherever a toolkit is, as scripts/test.sh asks for its host-run kernel tests.
  set(_nnfit_driver OFF)
  if(EXISTS /proc/driver/nvidia/version)
    set(_nnfit_driver ON)
  endif()
  if(CUDAToolkit_FOUND AND (_nnfit_driver OR NNFIT_WITH_CUDA STREQUAL "ON"))
    set(NNFIT_CUDA_ENABLED ON)
  elseif(CUDAToolkit_FOUND)
    set(NNFIT_CUDA_REASON "CUDA ${CUDAToolkit_VERSION} is at ${CUDAToolkit_BIN_DIR} but no NVIDIA driver is loaded (no /proc/driver/nvidia/version), so the plugin could not load here; -DNNFIT_WITH_CUDA=ON builds it anyway")
  elseif(NNFIT_WITH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "NNFIT_WITH_CUDA=ON but no CUDA toolkit was found; set CUDAToolkit_ROOT")
  else()
    set(NNFIT_CUDA_REASON "no CUDA toolkit found; set CUDAToolkit_ROOT to build it")
  endif()
endif()

# MPI (libopenmpi-dev; openmpi-bin for mpirun): data-parallel training across processes.
# Only the C API is used, so the deprecated C++ bindings are not needed.
set(NNFIT_MPI_ENABLED OFF)
set(NNFIT_MPI_REASON "disabled with NNFIT_WITH_MPI=OFF")
if(NOT NNFIT_WITH_MPI STREQUAL "OFF")
  set(MPI_CXX_SKIP_MPICXX ON)
  find_package(MPI COMPONENTS CXX QUIET)
  if(MPI_CXX_FOUND)
    set(NNFIT_MPI_ENABLED ON)
  elseif(NNFIT_WITH_MPI STREQUAL "ON")
    message(FATAL_ERROR "NNFIT_WITH_MPI=ON but no MPI was found; install libopenmpi-dev (scripts/setup.sh)")
  else()
    set(NNFIT_MPI_REASON "no MPI found; install libopenmpi-dev (scripts/setup.sh) to build it")
  endif()
endif()
