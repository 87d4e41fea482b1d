"""optuna_ref.py - the Optuna side of bench_search: the same test functions
over the same spaces, searched by Optuna's TPESampler and RandomSampler
with their default settings, one study per (function, sampler, seed).

Run by bench_search with Debian's /usr/bin/python3 (python3-optuna):

  optuna_ref.py quality SEEDS BUDGET   prints, per run,
      RESULT <function> <sampler> <seed> <best at min(50, BUDGET)> <best at BUDGET>
  optuna_ref.py latency N...           prints, per N,
      LATENCY optuna-tpe <N> <median ms of 5 suggestions after N trials>

Every function is to be minimised; bench_search subtracts the optimum.
"""

import math
import statistics
import sys
import time

import optuna

optuna.logging.set_verbosity(optuna.logging.WARNING)


def branin(t):
    x1 = t.suggest_float("x1", -5.0, 10.0)
    x2 = t.suggest_float("x2", 0.0, 15.0)
    b, c = 5.1 / (4 * math.pi ** 2), 5 / math.pi
    return ((x2 - b * x1 * x1 + c * x1 - 6) ** 2
            + 10 * (1 - 1 / (8 * math.pi)) * math.cos(x1) + 10)


H3_A = [[3.0, 10, 30], [0.1, 10, 35], [3.0, 10, 30], [0.1, 10, 35]]
H3_P = [[3689, 1170, 2673], [4699, 4387, 7470], [1091, 8732, 5547],
        [381, 5743, 8828]]
H6_A = [[10, 3, 17, 3.5, 1.7, 8], [0.05, 10, 17, 0.1, 8, 14],
        [3, 3.5, 1.7, 10, 17, 8], [17, 8, 0.05, 10, 0.1, 14]]
H6_P = [[1312, 1696, 5569, 124, 8283, 5886],
        [2329, 4135, 8307, 3736, 1004, 9991],
        [2348, 1451, 3522, 2883, 3047, 6650],
        [4047, 8828, 8732, 5743, 1091, 381]]
ALPHA = [1.0, 1.2, 3.0, 3.2]


def hartmann(x, A, P):
    s = 0.0
    for i in range(4):
        e = sum(A[i][j] * (x[j] - P[i][j] * 1e-4) ** 2 for j in range(len(x)))
        s -= ALPHA[i] * math.exp(-e)
    return s


def hartmann3(t):
    x = [t.suggest_float("x%d" % (j + 1), 0.0, 1.0) for j in range(3)]
    return hartmann(x, H3_A, H3_P)


def hartmann6(t):
    x = [t.suggest_float("x%d" % (j + 1), 0.0, 1.0) for j in range(6)]
    return hartmann(x, H6_A, H6_P)


def rosenbrock4(t):
    x = [t.suggest_float("x%d" % (j + 1), -5.0, 10.0) for j in range(4)]
    return sum(100 * (x[i + 1] - x[i] ** 2) ** 2 + (x[i] - 1) ** 2
               for i in range(3))


MIXED_OFF = {"a": 0.6, "b": 0.0, "c": 0.3, "d": 1.0}
MIXED_N = {"a": 8, "b": 13, "c": 20, "d": 26}


def mixed(t):
    c = t.suggest_categorical("opt", ["a", "b", "c", "d"])
    lr = t.suggest_float("lr", 1e-5, 1e-1, log=True)
    n = t.suggest_int("n", 1, 32)
    x = t.suggest_float("x", 0.0, 1.0)
    return (MIXED_OFF[c] + ((n - MIXED_N[c]) / 16) ** 2
            + 0.5 * (math.log10(lr) + 2.5) ** 2 + (x - 0.3) ** 2)


FUNCTIONS = [("branin", branin), ("hartmann3", hartmann3),
             ("hartmann6", hartmann6), ("rosenbrock4", rosenbrock4),
             ("mixed", mixed)]

SAMPLERS = [("optuna-tpe", lambda s: optuna.samplers.TPESampler(seed=s)),
            ("optuna-random", lambda s: optuna.samplers.RandomSampler(seed=s))]


def quality(seeds, budget):
    for name, f in FUNCTIONS:
        for sname, make in SAMPLERS:
            for seed in range(seeds):
                study = optuna.create_study(sampler=make(seed))
                best, at50 = math.inf, math.inf
                for i in range(budget):
                    t = study.ask()
                    y = f(t)
                    study.tell(t, y)
                    best = min(best, y)
                    if i + 1 == min(50, budget):
                        at50 = best
                print("RESULT %s %s %d %.17g %.17g"
                      % (name, sname, seed, at50, best), flush=True)


def latency(sizes):
    rng = optuna.samplers.RandomSampler(seed=0)
    for n in sizes:
        study = optuna.create_study(sampler=rng)
        study.optimize(hartmann6, n_trials=n)
        study.sampler = optuna.samplers.TPESampler(seed=0)
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            t = study.ask()
            y = hartmann6(t)
            times.append((time.perf_counter() - t0) * 1e3)
            study.tell(t, y)
        print("LATENCY optuna-tpe %d %.3f" % (n, statistics.median(times)),
              flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "quality":
        quality(int(sys.argv[2]), int(sys.argv[3]))
    else:
        latency([int(a) for a in sys.argv[2:]])
