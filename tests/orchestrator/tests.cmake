sw_test(orchestrator store sw_store)
sw_test(orchestrator provenance sw_engine)
sw_test(orchestrator metrics sw_engine)
