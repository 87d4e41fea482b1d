#!/usr/bin/python3
"""engine_calls.py - the engine's files call one another one way only.

Reads the engine's archive with nm: a file calls another when it uses a
symbol the other defines. Fails, naming the files and the calls, when
those calls go round in a circle (docs/architecture.md, "Inside the
engine": a file calls only those listed before it).

    engine_calls.py path/to/libsw_engine.a
"""
import subprocess
import sys


def calls(archive):
    defined, used, member = {}, {}, None
    out = subprocess.run(["nm", archive], capture_output=True, text=True,
                         check=True).stdout
    for line in out.splitlines():
        if line.endswith(".o:"):
            member = line[:-1].replace(".c.o", "")
            defined[member], used[member] = set(), set()
            continue
        f = line.split()
        if len(f) == 3 and f[1] in "TDRB":
            defined[member].add(f[2])
        elif len(f) == 2 and f[0] == "U":
            used[member].add(f[1])
    owner = {s: m for m, d in defined.items() for s in d}
    return {m: {owner[s] for s in u if owner.get(s, m) != m}
            for m, u in used.items()}, owner, used


def circles(g):
    """Tarjan's strongly connected components of more than one file."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(g[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            c = []
            while True:
                w = stack.pop()
                on.discard(w)
                c.append(w)
                if w == v:
                    break
            if len(c) > 1:
                out.append(sorted(c))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def main():
    g, owner, used = calls(sys.argv[1])
    if len(g) < 10:
        sys.exit("engine_calls: only %d files in %s" % (len(g), sys.argv[1]))
    bad = circles(g)
    for c in bad:
        print("a circle among:", " ".join(c))
        for a in c:
            for b in c:
                s = sorted(x for x in used[a] if owner.get(x) == b)
                if a != b and s:
                    print("  %s -> %s: %s" % (a, b, ", ".join(s)))
    print("%d engine files, %d calls between them, %d circles"
          % (len(g), sum(len(v) for v in g.values()), len(bad)))
    sys.exit(1 if bad else 0)


main()
