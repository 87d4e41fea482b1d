sw_test(sweeps value sw_sweeps)
sw_test(sweeps cases sw_sweeps)
add_dependencies(test_sweeps_cases sweep)
