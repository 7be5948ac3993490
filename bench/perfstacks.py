#!/usr/bin/env python3
"""Where a purgatory run's CPU goes, per request, from perf's cpu-clock samples.

This VM exposes no hardware counters (perf stat -e instructions: not
supported) and pprof samples at 100 Hz, so docs/bench/purgatory.md uses
perf's software clock at 4 kHz with call stacks, which sees the kernel too
(futex, epoll, nanosleep), and sorts every sample into one category by the
first rule below whose function is on its stack (a|b: b called under a).

    cd /tmp/p && perf record -e cpu-clock -F 4000 -g -o wheel.data \\
        ./purgatory -lib wheel -duration 10s > wheel.json
    python3 perfstacks.py none runtime wheel   # reads NAME.data and NAME.json

Prints nanoseconds of CPU per request (samples x 250 us / requests).
"""
import collections
import json
import subprocess
import sys

RULES = [
    ("callback body", ["main.run.func2"]),
    ("AfterFunc: malloc", ["AfterFunc|runtime.newobject", "AfterFunc|runtime.mallocgc"]),
    ("AfterFunc: go f() for due callbacks", ["AfterFunc|runtime.newproc"]),
    ("AfterFunc: advancing the wheel, other", ["timingwheel.(*TimingWheel).help"]),
    ("AfterFunc: clock read", ["AfterFunc|runtime.nanotime", "AfterFunc|time.Since",
                               "AfterFunc|time.runtimeNano", "AfterFunc|time.when"]),
    ("AfterFunc: rest", ["timingwheel.(*TimingWheel).AfterFunc", "time.AfterFunc",
                         "lib.(*Wheel).AfterFunc", "lib.Runtime.AfterFunc"]),
    ("Stop", ["timingwheel.(*Timer).Stop", "time.(*Timer).Stop"]),
    ("wheel's poller goroutine", ["timingwheel.(*TimingWheel).poll"]),
    ("runtime timers: go f() (goFunc)", ["runtime.(*timers).run|runtime.newproc"]),
    ("runtime timers: check/adjust/run", ["runtime.(*timers).check", "runtime.(*timers).adjust",
                                          "runtime.(*timers).run"]),
    ("goroutine start/exit", ["runtime.goexit0", "runtime.newproc"]),
    ("driver: its heap (container/heap)", ["container/heap."]),
    ("driver: other", ["main.run"]),
    ("GC mark", ["runtime.gcBgMarkWorker"]),
    ("GC sweep/scavenge", ["runtime.bgsweep", "runtime.bgscavenge"]),
    ("GC other", ["runtime.gcStart", "runtime.gcMarkDone", "runtime.gcMarkTermination",
                  "runtime.stopTheWorld"]),
    ("sched: thread sleeps (stopm, futex)", ["runtime.stopm"]),
    ("sched: thread wake-ups (wakep, futex)", ["runtime.wakep", "runtime.startm", "runtime.notewakeup"]),
    ("sched: netpoll (epoll)", ["runtime.netpoll"]),
    ("sched: stealing, spinning", ["runtime.stealWork", "runtime.runqsteal"]),
    ("sched: other", ["runtime.schedule", "runtime.findRunnable", "runtime.mcall", "runtime.park_m"]),
    ("sysmon", ["runtime.sysmon"]),
    ("heap sampler", ["main.sampleHeap", "runtime.ReadMemStats"]),
]


def classify(frames):  # frames: root first
    for name, pats in RULES:
        for p in pats:
            if "|" in p:
                a, b = p.split("|")
                at = [i for i, f in enumerate(frames) if a in f]
                if at and any(b in f for f in frames[at[0]:]):
                    return name
            elif any(p in f for f in frames):
                return name
    return "other: " + (frames[-1] if frames else "?")


def count(path):
    out = subprocess.run(["perf", "script", "-i", path, "-F", "period,ip,sym"],
                         capture_output=True, text=True, check=True).stdout
    c = collections.Counter()
    for block in out.split("\n\n"):
        lines = [l.strip() for l in block.strip().split("\n") if l.strip()]
        if not lines:
            continue
        frames = [l.split(None, 1)[1] for l in lines[1:] if len(l.split(None, 1)) == 2]
        c[classify(frames[::-1])] += 1
    return c


def main(names):
    per = {}
    for n in names:
        reqs = json.load(open(n + ".json"))["requests"]
        c = count(n + ".data")
        per[n] = {k: v * 250e3 / reqs for k, v in c.items()}  # 4 kHz: 250 us a sample
        per[n]["total"] = sum(c.values()) * 250e3 / reqs
    cats = sorted({k for n in names for k in per[n]}, key=lambda k: -max(per[n].get(k, 0) for n in names))
    print("%-40s" % "ns of CPU per request" + "".join("%12s" % n[-12:] for n in names))
    for k in cats:
        if max(per[n].get(k, 0) for n in names) >= 3:
            print("%-40s" % k[:40] + "".join("%12.0f" % per[n].get(k, 0) for n in names))


if __name__ == "__main__":
    main(sys.argv[1:])
