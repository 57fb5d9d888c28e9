#!/usr/bin/env python3
"""The batch tail study (docs/popsim.md "Study: batch tails"): runs a popsim
scenario over seeds with tail acceleration off and on, and prints the batch
makespan's median and 95th percentile over the seeds (each with a bootstrap
95% confidence interval), the CPU hours spent (mean, Student-t 95% CI), and
the changes.

    python3 scripts/popsim_tail_study.py [--volsched PATH] [--seeds N] [SCENARIO]
"""
import argparse
import json
import random
import statistics
import subprocess
import sys

T95 = {2: 12.71, 3: 4.30, 4: 3.18, 5: 2.78, 6: 2.57, 8: 2.36, 10: 2.26, 15: 2.14, 20: 2.09,
       30: 2.05, 40: 2.02, 60: 2.00}


def t95(n):
    keys = sorted(k for k in T95 if k <= n)
    return T95[keys[-1]] if keys else 12.71


def quantile(xs, q):
    s = sorted(xs)
    pos = q * (len(s) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def boot_ci(xs, q, rng, n=2000):
    est = sorted(quantile([rng.choice(xs) for _ in xs], q) for _ in range(n))
    return est[int(0.025 * n)], est[int(0.975 * n)]


def run(volsched, scenario, tail, seed):
    text = open(scenario).read()
    lines = [l for l in text.splitlines() if not l.strip().startswith("tail_acceleration")]
    lines.append(f"tail_acceleration = {'true' if tail else 'false'}")
    path = f"/tmp/vs_tail_study_{tail}.pop"
    open(path, "w").write("\n".join(lines) + "\n")
    out = subprocess.run([volsched, "popsim", path, "--json", "--seed", str(seed), "--no-progress"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario", nargs="?", default="examples/popsim/tail.pop")
    ap.add_argument("--volsched", default="build/dev/volsched")
    ap.add_argument("--seeds", type=int, default=20)
    a = ap.parse_args()
    rng = random.Random(1)
    res = {}
    for tail in (False, True):
        runs = [run(a.volsched, a.scenario, tail, s) for s in range(1, a.seeds + 1)]
        if any(r["makespan_h"] < 0 for r in runs):
            sys.exit("some run did not finish its batch: raise duration")
        ms = [r["makespan_h"] for r in runs]
        cpu = [r["cpu_hours_to_end"] for r in runs]
        res[tail] = (ms, cpu, runs)
        name = "with tail acceleration" if tail else "without"
        med, p95 = quantile(ms, 0.5), quantile(ms, 0.95)
        ml, mh = boot_ci(ms, 0.5, rng)
        pl, ph = boot_ci(ms, 0.95, rng)
        cm = statistics.mean(cpu)
        ch = t95(len(cpu)) * statistics.stdev(cpu) / len(cpu) ** 0.5
        extra = statistics.mean(r.get("tail_replicas", 0) for r in runs)
        print(f"{name:24s} makespan median {med:6.1f} h [{ml:6.1f}, {mh:6.1f}]  "
              f"p95 {p95:6.1f} h [{pl:6.1f}, {ph:6.1f}]  CPU {cm:8.0f} h +- {ch:5.0f}  "
              f"extra instances {extra:6.1f}")
    (m0, c0, _), (m1, c1, _) = res[False], res[True]
    # Paired by seed (same hosts and jobs): the per-seed ratios.
    rm = [b / a_ for a_, b in zip(m0, m1)]
    rc = [b / a_ for a_, b in zip(c0, c1)]
    h_m = t95(len(rm)) * statistics.stdev(rm) / len(rm) ** 0.5
    h_c = t95(len(rc)) * statistics.stdev(rc) / len(rc) ** 0.5
    print(f"makespan, with/without (paired by seed): {statistics.mean(rm):.3f} +- {h_m:.3f}; "
          f"median {quantile(m1, .5) / quantile(m0, .5):.3f}, p95 "
          f"{quantile(m1, .95) / quantile(m0, .95):.3f}")
    print(f"CPU hours, with/without (paired by seed): {statistics.mean(rc):.4f} +- {h_c:.4f}")


if __name__ == "__main__":
    main()
