add_executable(test_cli_run cli/test_run.c cli/harness.c)
target_link_libraries(test_cli_run PRIVATE sw_search sw_sweeps sw_testutil PkgConfig::CMOCKA)
target_include_directories(test_cli_run PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/cli)
add_dependencies(test_cli_run sweep)
add_test(NAME cli.run COMMAND test_cli_run)
set_tests_properties(cli.run PROPERTIES LABELS cli TIMEOUT 600
  ENVIRONMENT "SW_TEST_DATA=${CMAKE_CURRENT_SOURCE_DIR};SW_BIN=$<TARGET_FILE:sweep>;SWEEP_GIT=off")

add_executable(test_cli_provenance cli/test_provenance.c cli/harness.c)
target_link_libraries(test_cli_provenance PRIVATE sw_sweeps sw_testutil PkgConfig::CMOCKA)
target_include_directories(test_cli_provenance PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/cli)
add_dependencies(test_cli_provenance sweep)
add_test(NAME cli.provenance COMMAND test_cli_provenance)
set_tests_properties(cli.provenance PROPERTIES LABELS cli TIMEOUT 300
  ENVIRONMENT "SW_TEST_DATA=${CMAKE_CURRENT_SOURCE_DIR};SW_BIN=$<TARGET_FILE:sweep>")

# Live metrics and early stopping through the real binary: trials post
# scripted curves over HTTP (Debian's python3, standard library only).
add_executable(test_cli_metrics cli/test_metrics.c cli/harness.c)
target_link_libraries(test_cli_metrics PRIVATE sw_sweeps sw_testutil PkgConfig::CMOCKA)
target_include_directories(test_cli_metrics PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/cli)
add_dependencies(test_cli_metrics sweep)
add_test(NAME cli.metrics COMMAND test_cli_metrics)
set_tests_properties(cli.metrics PROPERTIES LABELS cli TIMEOUT 300
  ENVIRONMENT "SW_TEST_DATA=${CMAKE_CURRENT_SOURCE_DIR};SW_BIN=$<TARGET_FILE:sweep>;SWEEP_GIT=off")

# `sweep gpus` with the fake NVML (tests/backends/tests.cmake builds it).
add_executable(test_cli_gpus cli/test_gpus.c cli/harness.c)
target_link_libraries(test_cli_gpus PRIVATE sw_sweeps sw_testutil PkgConfig::CMOCKA)
target_include_directories(test_cli_gpus PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/cli)
add_dependencies(test_cli_gpus sweep fake_nvml)
add_test(NAME cli.gpus COMMAND test_cli_gpus)
set_tests_properties(cli.gpus PROPERTIES LABELS cli TIMEOUT 120
  ENVIRONMENT "SW_TEST_DATA=${CMAKE_CURRENT_SOURCE_DIR};SW_BIN=$<TARGET_FILE:sweep>;FAKE_NVML_LIB=$<TARGET_FILE:fake_nvml>")

# `sweep export wandb` against fake_wandb.py, a fake W&B server run with
# Debian's /usr/bin/python3.
add_executable(test_cli_export cli/test_export.c cli/harness.c)
target_link_libraries(test_cli_export PRIVATE sw_sweeps sw_testutil PkgConfig::CMOCKA)
target_include_directories(test_cli_export PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/cli)
add_dependencies(test_cli_export sweep)
add_test(NAME cli.export COMMAND test_cli_export)
set_tests_properties(cli.export PROPERTIES LABELS cli TIMEOUT 300
  ENVIRONMENT "SW_TEST_DATA=${CMAKE_CURRENT_SOURCE_DIR};SW_BIN=$<TARGET_FILE:sweep>")

# The fault tests: a supervisor killed mid-launch, a full disk (injected;
# a real tmpfs too where the test may mount one).
add_executable(test_cli_faults cli/test_faults.c cli/harness.c)
target_link_libraries(test_cli_faults PRIVATE sw_sweeps sw_testutil PkgConfig::CMOCKA)
target_include_directories(test_cli_faults PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/cli)
add_dependencies(test_cli_faults sweep)
add_test(NAME cli.faults COMMAND test_cli_faults)
set_tests_properties(cli.faults PROPERTIES LABELS cli TIMEOUT 300
  ENVIRONMENT "SW_TEST_DATA=${CMAKE_CURRENT_SOURCE_DIR};SW_BIN=$<TARGET_FILE:sweep>;SWEEP_GIT=off")

# `sweep run` packing real trial processes on the fake NVML's GPUs.
add_executable(test_cli_gpu_run cli/test_gpu_run.c cli/harness.c)
target_link_libraries(test_cli_gpu_run PRIVATE sw_sweeps sw_testutil PkgConfig::CMOCKA)
target_include_directories(test_cli_gpu_run PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/cli)
add_dependencies(test_cli_gpu_run sweep fake_nvml)
add_test(NAME cli.gpu_run COMMAND test_cli_gpu_run)
set_tests_properties(cli.gpu_run PROPERTIES LABELS cli TIMEOUT 300
  ENVIRONMENT "SW_TEST_DATA=${CMAKE_CURRENT_SOURCE_DIR};SW_BIN=$<TARGET_FILE:sweep>;FAKE_NVML_LIB=$<TARGET_FILE:fake_nvml>;SWEEP_GIT=off")

# `sweep report` on a real sweep: half-GPU trials on a declared GPU, a
# failed and retried run, a stopped run; the plot parsed by python3.
add_executable(test_cli_report cli/test_report.c cli/harness.c)
target_link_libraries(test_cli_report PRIVATE sw_sweeps sw_testutil PkgConfig::CMOCKA)
target_include_directories(test_cli_report PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/cli)
add_dependencies(test_cli_report sweep)
add_test(NAME cli.report COMMAND test_cli_report)
set_tests_properties(cli.report PROPERTIES LABELS cli TIMEOUT 300
  ENVIRONMENT "SW_TEST_DATA=${CMAKE_CURRENT_SOURCE_DIR};SW_BIN=$<TARGET_FILE:sweep>;SWEEP_GIT=off")

# `--backend sim`: surrogate trials (sh and awk) replayed on a virtual clock.
add_executable(test_cli_sim cli/test_sim.c cli/harness.c)
target_link_libraries(test_cli_sim PRIVATE sw_sweeps sw_testutil PkgConfig::CMOCKA)
target_include_directories(test_cli_sim PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/cli)
add_dependencies(test_cli_sim sweep)
add_test(NAME cli.sim COMMAND test_cli_sim)
set_tests_properties(cli.sim PROPERTIES LABELS cli TIMEOUT 300
  ENVIRONMENT "SW_TEST_DATA=${CMAKE_CURRENT_SOURCE_DIR};SW_BIN=$<TARGET_FILE:sweep>;SWEEP_GIT=off")

# Multi-fidelity bayes under promotion ASHA, through `--backend sim`.
add_executable(test_cli_sim_mf cli/test_sim_mf.c cli/harness.c)
target_link_libraries(test_cli_sim_mf PRIVATE sw_sweeps sw_testutil PkgConfig::CMOCKA)
target_include_directories(test_cli_sim_mf PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/cli)
add_dependencies(test_cli_sim_mf sweep)
add_test(NAME cli.sim_mf COMMAND test_cli_sim_mf)
set_tests_properties(cli.sim_mf PROPERTIES LABELS cli TIMEOUT 300
  ENVIRONMENT "SW_TEST_DATA=${CMAKE_CURRENT_SOURCE_DIR};SW_BIN=$<TARGET_FILE:sweep>;SWEEP_GIT=off")

# One trial flooding its stdout beside a calm one with a timeout.
add_executable(test_cli_flood cli/test_flood.c cli/harness.c)
target_link_libraries(test_cli_flood PRIVATE sw_sweeps sw_testutil PkgConfig::CMOCKA)
target_include_directories(test_cli_flood PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/cli)
add_dependencies(test_cli_flood sweep fake_nvml)
add_test(NAME cli.flood COMMAND test_cli_flood)
set_tests_properties(cli.flood PROPERTIES LABELS cli TIMEOUT 300
  ENVIRONMENT "SW_TEST_DATA=${CMAKE_CURRENT_SOURCE_DIR};SW_BIN=$<TARGET_FILE:sweep>;SWEEP_GIT=off;FAKE_NVML_LIB=$<TARGET_FILE:fake_nvml>")

# ThreadSanitizer's stage (the tsan preset) runs these, on a TSan-built
# sweep: the metrics server's threads against the loop (metrics), and
# libuv's worker pool beside it with search suggestions (run), git
# captures (provenance) and NVML readings (gpu_run), and the simulator's
# pool of its own (sim), with rung values held while a suggestion runs
# (sim_mf). The others add no thread these do not.
set_property(TEST cli.metrics cli.run cli.provenance cli.gpu_run cli.sim cli.sim_mf
  APPEND PROPERTY LABELS threads)

# The terminal view in a real terminal: a sweep in a tmux pane of 80 x 24,
# captured while it runs (no wrap, no stale copy, notices above the
# block); the last capture is left in the build folder to look at.
add_test(NAME cli.view COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/test_view.sh
  $<TARGET_FILE:sweep> ${CMAKE_BINARY_DIR}/view-capture.txt)
set_tests_properties(cli.view PROPERTIES LABELS cli TIMEOUT 120 DEPENDS sweep)

# `sweep query --timeout 1` of statements that would build a value of
# gigabytes or loop inside one built-in call: one clear line, exit 1, at
# little CPU cost; the guarded built-ins still give SQLite's answers.
add_test(NAME cli.query_limits COMMAND bash
  ${CMAKE_CURRENT_SOURCE_DIR}/cli/test_query_limits.sh $<TARGET_FILE:sweep>)
set_tests_properties(cli.query_limits PROPERTIES LABELS cli TIMEOUT 300)

# Promotion ASHA through the real binary: pause at a rung, the device to
# another run, resume from the checkpoint when promoted; SIGKILL with
# runs paused, then sweep resume.
add_test(NAME cli.promote COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/test_promote.sh
  $<TARGET_FILE:sweep>)
set_tests_properties(cli.promote PROPERTIES LABELS cli TIMEOUT 180)

# PBT through the real binary: a population of 4 in 3 rounds, exploits
# from the best member's checkpoint, lineage in the store, show, ls and
# the W&B export; SIGKILL with members paused, then sweep resume.
add_test(NAME cli.pbt COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/test_pbt.sh
  $<TARGET_FILE:sweep>)
set_tests_properties(cli.pbt PROPERTIES LABELS cli TIMEOUT 240)

# The simulator against real local runs of the same curves at 0.2 s
# steps, with Hyperband and promotion ASHA: the same decisions, wall and
# GPU time within 5 %. It runs alone (RUN_SERIAL): other tests' load on
# two cores made launches 15-20 ms slower than the moment it measured.
add_test(NAME cli.sim_agrees COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/test_sim_agrees.sh
  $<TARGET_FILE:sweep>)
set_tests_properties(cli.sim_agrees PROPERTIES LABELS cli TIMEOUT 120 RUN_SERIAL TRUE)

# The verbs that act on a sweep after `sweep run` made it (stop, resume
# --run-cap, rm, tag, note, compare), through the real binary.
add_executable(test_cli_verbs cli/test_verbs.c cli/harness.c)
target_link_libraries(test_cli_verbs PRIVATE sw_sweeps sw_testutil PkgConfig::CMOCKA)
target_include_directories(test_cli_verbs PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/cli)
add_dependencies(test_cli_verbs sweep)
add_test(NAME cli.verbs COMMAND test_cli_verbs)
set_tests_properties(cli.verbs PROPERTIES LABELS cli TIMEOUT 300
  ENVIRONMENT "SW_TEST_DATA=${CMAKE_CURRENT_SOURCE_DIR};SW_BIN=$<TARGET_FILE:sweep>;SWEEP_GIT=off")

# `cmake --install` to a temporary prefix: `sweep` on PATH from another
# folder, its manual page rendered by `man -l`, its bash completion.
add_test(NAME cli.install COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/test_install.sh
  ${CMAKE_BINARY_DIR})
set_tests_properties(cli.install PROPERTIES LABELS cli TIMEOUT 120
  ENVIRONMENT "CMAKE_COMMAND=${CMAKE_COMMAND}")

# Every read command's --json, read by Python's json in strict mode: its
# keys, its times (ISO 8601, UTC, the store's), validate's problems, and
# reproduce --json enough to run a run again.
add_executable(test_cli_json cli/test_json.c cli/harness.c)
target_link_libraries(test_cli_json PRIVATE sw_sweeps sw_testutil PkgConfig::CMOCKA)
target_include_directories(test_cli_json PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/cli)
add_dependencies(test_cli_json sweep)
add_test(NAME cli.json COMMAND test_cli_json)
set_tests_properties(cli.json PROPERTIES LABELS cli TIMEOUT 300
  ENVIRONMENT "SW_TEST_DATA=${CMAKE_CURRENT_SOURCE_DIR};SW_BIN=$<TARGET_FILE:sweep>;SWEEP_GIT=off")

# One value per run: the progress line's best, `sweep best`, `sweep show`
# and the dashboard's API agree for runs whose best step is not their last.
add_test(NAME cli.best_agrees COMMAND bash
  ${CMAKE_CURRENT_SOURCE_DIR}/cli/test_best_agrees.sh $<TARGET_FILE:sweep>)
set_tests_properties(cli.best_agrees PROPERTIES LABELS cli TIMEOUT 120)

# How sweeps end: all runs failed (exit 1, state failed), the README's
# simulated line, a failed run never best, a busy --listen port.
add_test(NAME cli.ends COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/test_ends.sh
  $<TARGET_FILE:sweep> ${PROJECT_SOURCE_DIR})
set_tests_properties(cli.ends PROPERTIES LABELS cli TIMEOUT 180)
