# scenario_curve.awk - the surrogate trainer of the scenario benchmarks:
# under SWEEP_SIMULATE=1 it prints a run's whole learning curve as
# `@metrics` lines with `_seconds` (see bench_scenarios.sh for the two
# families and the compute model). Arguments are --key=value pairs.
#
#   SWEEP_SIMULATE=1 awk -f scenario_curve.awk -- --lr=0.01 --model=small ...
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
BEGIN {
    if (ENVIRON["SWEEP_SIMULATE"] != "1") { print "not simulated" > "/dev/stderr"; exit 3 }
    p["share"] = 1; p["mig_from"] = 1e9
    for (i = 1; i < ARGC; i++) {
        split(ARGV[i], kv, "=")
        p[substr(kv[1], 3)] = kv[2]
    }
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
        size = p["hidden"] >= 256 ? 2 : p["hidden"] >= 128 ? 1 : 0
        secs = (p["epoch_s"] ? p["epoch_s"] : 900 * (1 + size)) * slowdown(0.25 + 0.075 * size)
        for (t = from; t <= n; t++)
            printf "@metrics {\"step\": %d, \"val_loss\": %s, \"_seconds\": %.3f}\n", t, v[t], secs
        exit
    }
    large = p["model"] == "large"
    x = log(p["lr"]) / log(10) + 2.5
    a = (large ? 0.20 : 0.30) + 0.12 * x * x + 0.3 * (p["dropout"] - 0.15) ^ 2 \
        + 0.02 * (log(p["batch_size"] / 64) / log(2)) ^ 2
    b = 1.5; c = (large ? 0.45 : 0.6) * (1 + 0.15 * (x > 1 ? 1 : x < -1 ? -1 : x))
    epochs = p["epochs"] ? p["epochs"] : 81
    secs = (p["epoch_s"] ? p["epoch_s"] : large ? 900 : 300) * slowdown(large ? 0.4 : 0.25)
    key = int(p["lr"] * 1e9) % 100003 + int(p["dropout"] * 1e6) + p["batch_size"] + 7 * large
    for (t = from; t <= epochs; t++)
        printf "@metrics {\"step\": %d, \"loss\": %.6f, \"_seconds\": %.3f}\n", t, \
            a + b * t ^ -c + 0.004 * noise(t), secs
    exit
}
