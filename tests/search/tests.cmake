sw_test(search rng sw_search)
