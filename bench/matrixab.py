"""Summarises bench/matrixab.sh's two files: matrixab.py OLD.txt NEW.txt.

Each cell is the median of its rounds. Prints, per row (operation and
pending count), each build's wheel ÷ runtime range, the cells over the
matrix's target (1.00x, 0.70x with 1k or more pending), and the median over
the row's cells of the wheel's own time new ÷ old with the number of cells
that went down; then the totals, and the cells that allocate where the
runtime does not. With -cells, one line per cell instead.
"""
import collections
import re
import statistics
import sys

LINE = re.compile(r"BenchmarkMatrix/(wheel=\w+/op=\w+/pending=(\w+)/d=\w+)/impl=(\w+)-\d+\s+\d+\s+([\d.]+) ns/op(?:.*?([\d.]+) B/op)?")


def load(path):
    ns, b = collections.defaultdict(list), collections.defaultdict(list)
    for line in open(path):
        m = LINE.match(line)
        if m:
            cell, _, impl, t, by = m.groups()
            ns[(cell, impl)].append(float(t))
            if by is not None:
                b[(cell, impl)].append(float(by))
    med = lambda d: {k: statistics.median(v) for k, v in d.items()}
    return med(ns), med(b)


def target(cell):
    return 0.70 if re.search(r"pending=(1k|1M)/", cell) else 1.00


def main():
    args = [a for a in sys.argv[1:] if a != "-cells"]
    (ons, ob), (nns, nb) = load(args[0]), load(args[1])
    cells = sorted({c for c, i in nns if i == "wheel" and (c, "runtime") in nns and (c, "wheel") in ons})
    if "-cells" in sys.argv:
        for c in cells:
            print(f"{c} old {ons[c, 'wheel'] / ons[c, 'runtime']:.2f}x new {nns[c, 'wheel'] / nns[c, 'runtime']:.2f}x "
                  f"wheel new/old {nns[c, 'wheel'] / ons[c, 'wheel']:.2f} B/op {ob.get((c, 'wheel'), 0):.0f}->{nb.get((c, 'wheel'), 0):.0f}")
        return
    rows = collections.defaultdict(list)
    for c in cells:
        op, pending = re.search(r"op=(\w+)/pending=(\w+)", c).groups()
        rows[op, pending].append(c)
    print("| operation | pending | wheel ÷ runtime, old | over target | wheel ÷ runtime, new | over target | wheel's time new ÷ old (median; cells down) |")
    print("|---|---|---|---|---|---|---|")
    over = [0, 0]
    for (op, pending), cs in sorted(rows.items()):
        ro = [ons[c, "wheel"] / ons[c, "runtime"] for c in cs]
        rn = [nns[c, "wheel"] / nns[c, "runtime"] for c in cs]
        oo = sum(r > target(c) for r, c in zip(ro, cs))
        no = sum(r > target(c) for r, c in zip(rn, cs))
        over[0] += oo
        over[1] += no
        w = [nns[c, "wheel"] / ons[c, "wheel"] for c in cs]
        print(f"| {op} | {pending} | {min(ro):.2f}–{max(ro):.2f} | {oo}/{len(cs)} | {min(rn):.2f}–{max(rn):.2f} | {no}/{len(cs)} | "
              f"{statistics.median(w):.2f} ({sum(x < 1 for x in w)}) |")
    alloc = lambda ns, b: sum(b.get((c, "wheel"), 0) > 0 and b.get((c, "runtime"), 0) == 0 for c in cells)
    print(f"\ncells {len(cells)}; over target old {over[0]} new {over[1]}; "
          f"allocating where the runtime does not: old {alloc(ons, ob)} new {alloc(nns, nb)}")


main()
