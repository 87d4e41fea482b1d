sw_test(orchestrator store sw_store)
sw_test(orchestrator provenance sw_engine)
sw_test(orchestrator metrics sw_engine)
# The engine's decisions, on a fake executor and a fake clock; SQLite is
# linked to inject faults into the store with a trigger.
pkg_check_modules(SQLITE_T REQUIRED IMPORTED_TARGET sqlite3)
sw_test(orchestrator engine sw_engine PkgConfig::SQLITE_T)
target_sources(test_orchestrator_engine PRIVATE orchestrator/fake_executor.c)
target_include_directories(test_orchestrator_engine PRIVATE
  ${CMAKE_CURRENT_SOURCE_DIR}/orchestrator)
