#!/usr/bin/env python3
"""Sorts perf samples of a net/http server (see serverperf.sh) by what the
sampled stack is doing, the first matching rule winning.

    python3 serverstacks.py wake wheel.data runtime.data   # sched_wakeup: by waker
    python3 serverstacks.py cpu wheel.data runtime.data    # cpu-clock samples
    python3 serverstacks.py cpu wheel-1.data wheel-2.data runtime-1.data runtime-2.data

Files named alike up to a '-' (wheel-1.data, wheel-2.data) are one server's
runs and are summed; with two servers, a third column is the first's
samples minus the second's.
"""
import collections
import os
import re
import subprocess
import sys

WAKE = ("wakep", "netpollBreak", "wakeNetPoller")
TIMERS = ("time.AfterFunc", "time.(*Timer)", "runtime.(*timer)", "time.stopTimer", "time.resetTimer")


def category(mode, s):
    # The wheel's packages, not the bench module's (also under go-timingwheel).
    wheel = re.search(r"go-timingwheel/timingwheel(/delayqueue|/pq)?\.", s) is not None
    runtime_timer = any(f in s for f in TIMERS) or "context.WithDeadline" in s or "context.(*timerCtx)" in s
    if mode == "wake" and ("hrtimer_interrupt" in s or "apic_timer" in s):
        return "a kernel timer interrupt, in any thread's context"
    if wheel or runtime_timer:
        lib = "the wheel's" if wheel else "the runtime's"
        if any(w in s for w in WAKE):
            how = "netpollBreak" if "netpollBreak" in s else "wakep"
            return f"timers: {lib}, waking a thread ({how})"
        if wheel and any(f in s for f in TIMERS):
            return "timers: the wheel's alarm, runtime timer operations"
        return f"timers: {lib} code"
    if "findRunnable;runtime.netpollBreak" in s:
        return "findRunnable → netpollBreak (a P going idle with an earlier timer)"
    if "checkTimers" in s or "runtime.(*timers)" in s:
        return "scheduler: running timers"
    if "runtime.sysmon" in s or "entersyscallWakeSysmon" in s:
        return "sysmon (woken by a system call, or its own)"
    if mode == "wake" and any(f in s for f in ("startBackgroundRead", "backgroundRead", "netpollgoready")):
        return "net/http's goroutines made ready"
    if any(f in s for f in ("findRunnable", "runtime.schedule", "park_m", "stopm", "mstart")):
        return "scheduler: finding work, parking, spinning"
    if any(f in s for f in ("net/http", "main.", "internal/poll", "syscall.")):
        return "serving (net/http, reads, writes)"
    return "other"


def categories(mode, f):
    out = subprocess.run(["perf", "report", "-i", f, "--stdio", "--no-children", "-g",
                          "folded,0,caller,count", "--sort", "comm"],
                         capture_output=True, text=True, check=True).stdout
    cats = collections.Counter()
    for line in out.splitlines():
        m = re.match(r"^(\d+) (.*)$", line)
        if m:
            cats[category(mode, m.group(2))] += int(m.group(1))
    return cats


def main():
    mode, files = sys.argv[1], sys.argv[2:]
    servers = {}  # server name -> summed categories, in order of first file
    runs = collections.Counter()
    for f in files:
        name = os.path.basename(f).split("-")[0].removesuffix(".data")
        servers.setdefault(name, collections.Counter()).update(categories(mode, f))
        runs[name] += 1
    for name, cats in servers.items():
        total = sum(cats.values())
        print(f"{name}: {total} samples in {runs[name]} run(s)")
        for c, n in cats.most_common():
            print(f"  {n:6d} {100 * n / total:5.1f}%  {c}")
    if len(servers) == 2:
        (a, ca), (b, cb) = servers.items()
        print(f"{a} - {b}: {sum(ca.values()) - sum(cb.values()):+d} samples")
        for c in sorted(set(ca) | set(cb), key=lambda c: -abs(ca[c] - cb[c])):
            print(f"  {ca[c]:6d} {cb[c]:6d} {ca[c] - cb[c]:+6d}  {c}")


if __name__ == "__main__":
    main()
