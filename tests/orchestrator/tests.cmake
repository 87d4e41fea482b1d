# SQLite is linked to the store's and the engine's tests to make old
# schemas and inject faults by hand.
pkg_check_modules(SQLITE_T REQUIRED IMPORTED_TARGET sqlite3)
sw_test(orchestrator store sw_store PkgConfig::SQLITE_T)
# The run vocabulary, and the store's CHECKs and migration made from it.
sw_test(orchestrator vocab sw_store PkgConfig::SQLITE_T)
sw_test(orchestrator provenance sw_engine)
sw_test(orchestrator metrics sw_engine)
# The engine's decisions, on a fake executor and a fake clock.
sw_test(orchestrator engine sw_engine PkgConfig::SQLITE_T)
target_sources(test_orchestrator_engine PRIVATE orchestrator/fake_executor.c)
target_include_directories(test_orchestrator_engine PRIVATE
  ${CMAKE_CURRENT_SOURCE_DIR}/orchestrator)
# The metrics endpoint over real HTTP on 127.0.0.1.
sw_test(orchestrator metrics_server sw_engine)
# The trial contract's W&B side: its variables and config file.
sw_test(orchestrator contract sw_engine)
# SHA-256 of metrics tokens, against FIPS 180-2 vectors.
sw_test(orchestrator token sw_engine)
# The GPU packing policy, on plain data; search/ only for its seeded rng.
sw_test(orchestrator packing sw_packing sw_search)
# `sweep report`'s figures on hand-made rows, and read from a store.
sw_test(orchestrator report sw_engine)
# The engine's files call one another one way only (nm over its archive).
add_test(NAME orchestrator.engine_calls COMMAND /usr/bin/python3
  ${CMAKE_CURRENT_SOURCE_DIR}/orchestrator/engine_calls.py
  $<TARGET_FILE:sw_engine>)
set_tests_properties(orchestrator.engine_calls PROPERTIES LABELS orchestrator)
# The event call: a consumer of the test's own watches a real sweep.
sw_test(orchestrator events sw_engine PkgConfig::SQLITE_T)

# ThreadSanitizer's stage (the tsan preset) runs the tests labelled
# threads: the metrics server's connection threads against a loop thread;
# a whole sweep in-process (the server, the worker pool, the loop).
set_property(TEST orchestrator.metrics_server orchestrator.events APPEND
  PROPERTY LABELS threads)
