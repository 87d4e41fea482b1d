sw_test(search rng sw_search)
sw_test(search sample sw_search)
sw_test(search grid sw_search)
sw_test(search random sw_search)
