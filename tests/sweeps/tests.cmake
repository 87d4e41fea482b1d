sw_test(sweeps value sw_sweeps)
