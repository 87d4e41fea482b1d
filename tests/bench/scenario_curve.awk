# scenario_curve.awk - the surrogate trainer of the scenario benchmarks:
# under SWEEP_SIMULATE=1 it prints a run's whole learning curve as
# `@metrics` lines with `_seconds` (see bench_scenarios.sh for the two
# families and the compute model). Arguments are --key=value pairs.
#
#   SWEEP_SIMULATE=1 awk -f scenario_curve.awk -- --lr=0.01 --model=small ...
#
# With --floor=V (and no SWEEP_SIMULATE) it prints instead how soon any
# configuration of the family can first report a value of at most V:
# the fewest seconds of training, alone on a whole GPU (its fastest
# device), and that configuration. On the recorded family that is a scan
# of the curves; on the synthetic one, of the noise-free curve at its
# best dropout (0.15) and batch size (64) over a fine grid of learning
# rates within --lr_min and --lr_max, less the noise's most (NOISE, 0.004),
# since the noise of some configuration near the best is that low.
# The synthetic curve's noise is NOISE times noise(t): at most NOISE either way.
function noise(t) { # a seeded value in [-1, 1) of the parameters and t
    srand(key * 1000 + t)
    return 2 * rand() - 1
}
# The last step an earlier attempt of this run reported: its checkpoint.
function resumed(  file, line, last) {
    if (!p["resume"] || ENVIRON["SWEEP_ATTEMPT"] + 0 <= 1) return 0
    file = ENVIRON["SWEEP_CHECKPOINT_DIR"]; sub(/\/checkpoint$/, "/stdout.log", file)
    last = 0
    while ((getline line < file) > 0)
        if (match(line, /"step": [0-9]+/))
            last = substr(line, RSTART + 8, RLENGTH - 8) + 0
    return last
}
function slowdown(demand,  slice, c, share, s) {
    slice = ENVIRON["CUDA_VISIBLE_DEVICES"] + 0 >= p["mig_from"]
    c = slice ? 3 / 7 : 1
    share = slice && p["share_slice"] ? p["share_slice"] : p["share"]
    s = demand / (c * share)
    if (s < 1) s = 1
    return share < 1 ? 1.1 * s : s
}
# The synthetic curve's a, b and c of a configuration, in A, B and C.
function synthetic(lr, dropout, batch_size, large,  x) {
    x = log(lr) / log(10) + 2.5
    A = (large ? 0.20 : 0.30) + 0.12 * x * x + 0.3 * (dropout - 0.15) ^ 2 \
        + 0.02 * (log(batch_size / 64) / log(2)) ^ 2
    B = 1.5; C = (large ? 0.45 : 0.6) * (1 + 0.15 * (x > 1 ? 1 : x < -1 ? -1 : x))
}
# An epoch's seconds of a recorded configuration, by its width; of a
# synthetic one, by its model; before the slowdown.
function recorded_s(hidden) { return p["epoch_s"] ? p["epoch_s"] : 900 * (1 + size_of(hidden)) }
function size_of(hidden) { return hidden >= 256 ? 2 : hidden >= 128 ? 1 : 0 } # small, medium, large
function synthetic_s(large) { return p["epoch_s"] ? p["epoch_s"] : large ? 900 : 300 }
function floor_recorded(v,  line, f, s, best, what) {
    best = -1
    while ((getline line < p["curves"]) > 0) {
        split(line, f, ",")
        if (f[6] !~ /^[0-9]+$/ || f[7] + 0 > v) continue
        s = f[6] * recorded_s(f[2])
        if (best < 0 || s < best) { best = s; what = line }
    }
    if (best < 0) print "-1 no configuration reaches " v
    else printf "%.0f %s\n", best, what
}
function floor_synthetic(v,  epochs, large, t, lo, hi, x, lr, y, best, what) {
    epochs = p["epochs"] ? p["epochs"] : 81
    lo = log(p["lr_min"]) / log(10); hi = log(p["lr_max"]) / log(10)
    best = -1
    for (large = 0; large <= 1; large++)
        for (t = 1; t <= epochs; t++)
            for (x = lo; x <= hi; x += 0.0005) {
                lr = 10 ^ x
                synthetic(lr, 0.15, 64, large)
                y = A + B * t ^ -C - NOISE
                if (y > v) continue
                if (best < 0 || t * synthetic_s(large) < best) {
                    best = t * synthetic_s(large)
                    what = sprintf("%s lr %.5f epoch %d", large ? "large" : "small", lr, t)
                }
                break
            }
    if (best < 0) print "-1 no configuration reaches " v
    else printf "%.0f %s\n", best, what
}
BEGIN {
    NOISE = 0.004
    p["share"] = 1; p["mig_from"] = 1e9; p["lr_min"] = 0.0001; p["lr_max"] = 0.1
    for (i = 1; i < ARGC; i++) {
        split(ARGV[i], kv, "=")
        p[substr(kv[1], 3)] = kv[2]
    }
    if (p["floor"] != "" && ENVIRON["SWEEP_SIMULATE"] != "1") {
        if (p["family"] == "recorded") floor_recorded(p["floor"] + 0)
        else floor_synthetic(p["floor"] + 0)
        exit
    }
    if (ENVIRON["SWEEP_SIMULATE"] != "1") { print "not simulated" > "/dev/stderr"; exit 3 }
    from = resumed() + 1
    if (p["family"] == "recorded") { # replays mlp_curves.csv
        n = 0
        while ((getline line < p["curves"]) > 0) {
            split(line, f, ",")
            if (f[1] == p["lr"] && f[2] == p["hidden"] && f[3] == p["optimizer"] &&
                f[4] == p["dropout"] && f[5] == p["batch_size"])
                v[++n] = f[7]
        }
        if (n == 0) { print "no recorded curve for these parameters" > "/dev/stderr"; exit 2 }
        # 32 hidden units: small; 128: medium; 256: large
        size = size_of(p["hidden"])
        secs = recorded_s(p["hidden"]) * slowdown(0.25 + 0.075 * size)
        for (t = from; t <= n; t++)
            printf "@metrics {\"step\": %d, \"val_loss\": %s, \"_seconds\": %.3f}\n", t, v[t], secs
        exit
    }
    large = p["model"] == "large"
    synthetic(p["lr"], p["dropout"], p["batch_size"], large)
    epochs = p["epochs"] ? p["epochs"] : 81
    secs = synthetic_s(large) * slowdown(large ? 0.4 : 0.25)
    key = int(p["lr"] * 1e9) % 100003 + int(p["dropout"] * 1e6) + p["batch_size"] + 7 * large
    for (t = from; t <= epochs; t++)
        printf "@metrics {\"step\": %d, \"loss\": %.6f, \"_seconds\": %.3f}\n", t, \
            A + B * t ^ -C + NOISE * noise(t), secs
    exit
}
