# The Slurm executor against a real single-node cluster that the test
# starts (slurm/cluster.sh; slurm-wlm and munge are installed when
# missing). Exit 77 skips: Slurm cannot be had here.
add_executable(test_slurm_cli slurm/test_slurm.c cli/harness.c)
target_link_libraries(test_slurm_cli PRIVATE sw_sweeps sw_testutil PkgConfig::CMOCKA)
target_include_directories(test_slurm_cli PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/cli)
add_dependencies(test_slurm_cli sweep)
add_test(NAME slurm.cli COMMAND test_slurm_cli)
set_tests_properties(slurm.cli PROPERTIES LABELS slurm TIMEOUT 600
  SKIP_RETURN_CODE 77
  ENVIRONMENT "SW_TEST_DATA=${CMAKE_CURRENT_SOURCE_DIR};SW_BIN=$<TARGET_FILE:sweep>;SWEEP_GIT=off")
