"""scenarios_doc.py - the tables of docs/simulation.md's benchmark
section, from the rows bench_scenarios.sh writes with MD=FILE (one line
per family, seed and side), so the doc quotes only measured figures.

    python3 tests/bench/scenarios_doc.py ROWS [DOC]

prints the section; with DOC, replaces the text between the markers
`<!-- scenarios:begin -->` and `<!-- scenarios:end -->` in it.
"""
import statistics
import sys

FIELDS = ("family seed side trials best gpu_s occ steady to_best_s "
          "to_best_gpu_s to_target_s to_target_gpu_s strongest fastest "
          "target budget").split()
NAMES = {
    "wandb1": "W&B agents, bayes + hyperband, 1 per device",
    "wandb4": "W&B agents, bayes + hyperband, 4 per GPU",
    "ray": "Ray Tune, ASHAScheduler (defaults), fractional GPUs",
    "optuna1": "Optuna, TPE + HyperbandPruner, 1 worker per device",
    "optuna4": "Optuna, TPE + HyperbandPruner, 4 workers per GPU",
    "sweep_hb": "sweep: bayes + hyperband, packing, resumed retries",
    "sweep": "**sweep: bayes + promotion ASHA, packing, resumed retries**",
    "capped": "sweep, the same with run_cap instead of a budget",
    "floor": "*the floor: the fewest any policy can spend while it keeps "
             "95 % of the 8 GPUs busy (its ratio: the most it could reach)*",
}
MEASURED = [s for s in NAMES if s != "floor"]  # the sides that ran
BASELINES = ("wandb1", "wandb4", "ray", "optuna1", "optuna4")


def num(v):
    try:
        f = float(v)
    except ValueError:
        return None
    return None if f != f else f


def load(path):
    rows = []
    for line in open(path):
        parts = line.rstrip("\n").split("|")
        if len(parts) == len(FIELDS):
            rows.append(dict(zip(FIELDS, parts)))
    return rows


def cell(gpu_s, ref_s):
    if gpu_s is None:
        return "not reached"
    text = "%.0f" % (gpu_s / 3600)
    if ref_s is not None:
        text += " (%.2f×)" % (ref_s / gpu_s)
    return text


def median_ratio(rows, side, key, ref_side_key):
    ratios = []
    for r in rows:
        if r["side"] != side:
            continue
        ref = [x for x in rows if x["seed"] == r["seed"] and
               x["side"] == r[ref_side_key]]
        mine, theirs = num(r[key]), num(ref[0][key]) if ref else None
        ratios.append(theirs / mine if mine and theirs else 0.0)
    return statistics.median(ratios) if ratios else None


def times(ratio):
    """A median ratio; a side that did not get there on most seeds has
    none."""
    return "%.2f×" % ratio if ratio else "not reached"


def strongest_of(by, seed):
    return by[(seed, "sweep")]["strongest"]


def family_section(fam, rows):
    seeds = sorted({r["seed"] for r in rows}, key=int)
    by = {(r["seed"], r["side"]): r for r in rows}
    sides = [s for s in NAMES if any(r["side"] == s for r in rows)]
    first = rows[0]
    out = ["### %s curves" % fam.capitalize(), ""]
    out.append("Budget: %s GPU-hours for every side (capped: run_cap "
               "instead). The strongest baseline (the best value at the "
               "budget): %s. First at the common target (%s): %s." % (
                   first["budget"],
                   ", ".join("seed %s %s (%s)" % (
                       s, strongest_of(by, s),
                       by[(s, strongest_of(by, s))]["best"]) for s in seeds),
                   first["target"],
                   ", ".join("seed %s %s" % (s, by[(s, "sweep")]["fastest"] or "none")
                             for s in seeds)))
    out.append("")
    head = "| side | " + " | ".join(
        "seed %s: GPU-h to the strongest's best | to %s" % (s, first["target"])
        for s in seeds) + " | median ratio to the best / to the target |"
    out.append(head)
    out.append("|---" * (2 + 2 * len(seeds)) + "|")
    for side in sides:
        cells = []
        for s in seeds:
            r = by.get((s, side))
            strongest = by[(s, "sweep")]["strongest"]
            fastest = by[(s, "sweep")]["fastest"] or strongest
            cells.append(cell(num(r["to_best_gpu_s"]),
                              num(by[(s, strongest)]["to_best_gpu_s"])))
            cells.append(cell(num(r["to_target_gpu_s"]),
                              num(by[(s, fastest)]["to_target_gpu_s"])))
        mb = median_ratio(rows, side, "to_best_gpu_s", "strongest")
        mt = median_ratio([dict(r, fastest=r["fastest"] or r["strongest"])
                           for r in rows], side, "to_target_gpu_s", "fastest")
        out.append("| %s | %s | %s / %s |" % (
            NAMES[side], " | ".join(cells), times(mb), times(mt)))
    out.append("")
    out.append("| side | " + " | ".join(
        "seed %s: trials, best, GPU-h busy, occupancy" % s for s in seeds) + " |")
    out.append("|---" * (1 + len(seeds)) + "|")
    for side in [s for s in sides if s in MEASURED]:
        cells = []
        for s in seeds:
            r = by[(s, side)]
            occ = num(r["occ"])
            cells.append("%s, %.5f, %.0f, %s" % (
                r["trials"], float(r["best"]), float(r["gpu_s"]) / 3600,
                "%.1f %%" % (100 * occ) if occ is not None else "-"))
        out.append("| %s | %s |" % (NAMES[side], " | ".join(cells)))
    out.append("")
    return out


def main():
    rows = load(sys.argv[1])
    out = ["<!-- scenarios:begin -->",
           "<!-- generated by tests/bench/scenarios_doc.sh from "
           "bench_scenarios.sh's output: do not edit by hand -->", ""]
    for fam in ("synthetic", "recorded"):
        fr = [r for r in rows if r["family"] == fam]
        if fr:
            out += family_section(fam, fr)
    out.append("<!-- scenarios:end -->")
    text = "\n".join(out) + "\n"
    if len(sys.argv) > 2:
        doc = open(sys.argv[2]).read()
        a = doc.index("<!-- scenarios:begin -->")
        b = doc.index("<!-- scenarios:end -->") + len("<!-- scenarios:end -->\n")
        open(sys.argv[2], "w").write(doc[:a] + text + doc[b:])
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
