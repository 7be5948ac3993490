#!/usr/bin/env python3
"""Sorts perf samples of a net/http server (see serverperf.sh) by what the
sampled stack is doing, the first matching rule winning.

    python3 serverstacks.py wake wheel.data runtime.data   # sched_wakeup: by waker
    python3 serverstacks.py cpu wheel.data runtime.data    # cpu-clock samples
"""
import collections
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


def main():
    mode, files = sys.argv[1], sys.argv[2:]
    for f in files:
        out = subprocess.run(["perf", "report", "-i", f, "--stdio", "--no-children", "-g",
                              "folded,0,caller,count", "--sort", "comm"],
                             capture_output=True, text=True, check=True).stdout
        cats, total = collections.Counter(), 0
        for line in out.splitlines():
            m = re.match(r"^(\d+) (.*)$", line)
            if m:
                n = int(m.group(1))
                cats[category(mode, m.group(2))] += n
                total += n
        print(f"{f}: {total} samples")
        for c, n in cats.most_common():
            print(f"  {n:6d} {100 * n / total:5.1f}%  {c}")


if __name__ == "__main__":
    main()
