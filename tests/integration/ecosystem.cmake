# Output the ecosystem reads, and the installed programs (issue 10, part 7; included by
# CMakeLists.txt here, with its _dir, _out, _sweep, _env and rapid_mpi_test).
set(_tiny ${_dir}/jobs/llama3-8b-8gpu-tiny.yaml)

# xarray and pandas read the file in exactly the calls the README documents.
rapid_mpi_test(ecosystem_sweep ${_dir}/run_sweep.py ${RAPID_MPIRUN} 2 ${_sweep} ${_tiny}
               ${_out}/ecosystem.h5 --threads 1)
set_tests_properties(integration.ecosystem_sweep PROPERTIES FIXTURES_SETUP ecosystem)
rapid_mpi_test(xarray_pandas_read ${_dir}/check_ecosystem.py ${_out}/ecosystem.h5)
set_tests_properties(integration.xarray_pandas_read PROPERTIES FIXTURES_REQUIRED ecosystem)

# `cmake --install` to a temporary prefix; the installed rapid-sweep sweeps a job from
# another directory with no RAPID_CONFIG_DIR (the script drops it), then again after the
# prefix is moved.
add_test(NAME integration.install_relocatable
         COMMAND ${RAPID_TEST_PYTHON} ${_dir}/check_install.py ${CMAKE_COMMAND} ${CMAKE_BINARY_DIR}
                 ${_out}/install-prefix ${_tiny})
set_tests_properties(integration.install_relocatable PROPERTIES
                     ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
                     TIMEOUT 300 LABELS "integration")

# `import rapid` from the build tree against the programs: predict, evaluate, sweep (the
# tiny job's points as rapid-sweep wrote them), load, InputError (docs/python.md).
if(TARGET rapid_python_core AND TARGET rapid)
  add_test(NAME integration.python_api
           COMMAND ${RAPID_TEST_PYTHON} ${_dir}/check_python_api.py ${CMAKE_BINARY_DIR}/python
                   $<TARGET_FILE:rapid> ${CMAKE_SOURCE_DIR}/jobs/llama3-70b-256xh100.yaml
                   ${_tiny} ${_out}/ecosystem.h5)
  set_tests_properties(integration.python_api PROPERTIES FIXTURES_REQUIRED ecosystem
                       ENVIRONMENT "${_env}" TIMEOUT 120 LABELS "integration")
endif()
