sw_test(backends local sw_backends)
sw_test(backends git sw_git_core sw_backends)
# The fake NVML that discovery is tested against, in full and without
# the functions an older driver lacks.
add_library(fake_nvml SHARED backends/fake_nvml.c)
add_library(fake_nvml_old SHARED backends/fake_nvml.c)
target_compile_definitions(fake_nvml_old PRIVATE FAKE_NVML_OLD)
sw_test(backends gpu sw_backends)
add_dependencies(test_backends_gpu fake_nvml fake_nvml_old)
set_property(TEST backends.gpu APPEND PROPERTY ENVIRONMENT
  "FAKE_NVML_LIB=$<TARGET_FILE:fake_nvml>"
  "FAKE_NVML_OLD_LIB=$<TARGET_FILE:fake_nvml_old>")
sw_test(backends wandb sw_backends)
sw_test(backends slurm sw_backends)
sw_test(backends sim sw_backends)
sw_test(backends sim_curve sw_backends)
