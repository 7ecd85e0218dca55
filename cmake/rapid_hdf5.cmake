# Parallel HDF5 for rapid-sweep: the C library with its MPI-IO driver and the High-Level
# library (H5DS dimension scales), found through CMake's FindHDF5 (no distribution-specific
# pkg-config name). Defines the interface target rapid::hdf5.
#
# FindHDF5 (CMake 3.25 documentation, "FindHDF5"): HDF5_PREFER_PARALLEL makes it try the
# parallel compiler wrapper h5pcc before the serial h5cc; HDF5_ROOT (an install prefix) or
# HDF5_DIR (the hdf5-config.cmake of an HDF5 built with CMake: Spack, modules) point it at
# another HDF5; HDF5_IS_PARALLEL says whether what it found was built with
# --enable-parallel. Debian 12: libhdf5-openmpi-dev ships /usr/bin/h5pcc -> h5pcc.openmpi
# (and libhdf5-dev, if installed too, a serial h5cc that this preference skips).
if(NOT DEFINED HDF5_PREFER_PARALLEL)
  set(HDF5_PREFER_PARALLEL TRUE)
endif()
find_package(HDF5 REQUIRED COMPONENTS C HL)
if(NOT HDF5_IS_PARALLEL)
  message(FATAL_ERROR
    "rapid-sweep needs parallel HDF5 (built with --enable-parallel: every rank writes the "
    "result file through MPI-IO), but the HDF5 ${HDF5_VERSION} found "
    "(${HDF5_INCLUDE_DIRS}) is serial. On Debian or Ubuntu install libhdf5-openmpi-dev "
    "(scripts/install-deps); elsewhere point HDF5_ROOT at a parallel HDF5 built with the "
    "same MPI (or HDF5_DIR at its hdf5-config.cmake), or set HDF5_C_COMPILER_EXECUTABLE to "
    "its h5pcc, and configure a fresh build directory (FindHDF5 caches what it found).")
endif()
add_library(rapid_hdf5 INTERFACE)
add_library(rapid::hdf5 ALIAS rapid_hdf5)
# The High-Level library first: it depends on the C library (matters for static HDF5).
target_link_libraries(rapid_hdf5 INTERFACE ${HDF5_HL_LIBRARIES} HDF5::HDF5)
