sw_test(orchestrator store sw_store)
