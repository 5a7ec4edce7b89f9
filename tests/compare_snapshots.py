#!/usr/bin/env python3
"""Compares two folders written by tests/snapshot_outputs.sh.

Prints how many files are byte-identical, the files that differ only in numbers within a
relative tolerance (floating-point rounding), and the files that really differ; exits 1 when any
file really differs or is missing on one side.

  tests/compare_snapshots.py BEFORE AFTER [--rel 1e-8]
"""
import os
import re
import sys

NUM = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def files(root):
    out = set()
    for d, _, fs in os.walk(root):
        for f in fs:
            out.add(os.path.relpath(os.path.join(d, f), root))
    return out


def close(a, b, rel):
    ta, tb = NUM.split(a), NUM.split(b)
    if ta != tb:
        return False
    na, nb = NUM.findall(a), NUM.findall(b)
    if len(na) != len(nb):
        return False
    for x, y in zip(na, nb):
        fx, fy = float(x), float(y)
        if abs(fx - fy) > rel * max(abs(fx), abs(fy), 1e-300):
            return False
    return True


def main():
    args = sys.argv[1:]
    rel = 1e-8
    if "--rel" in args:
        i = args.index("--rel")
        rel = float(args[i + 1])
        del args[i : i + 2]
    before, after = args
    fb, fa = files(before), files(after)
    same, rounding, differ = 0, [], []
    for f in sorted(fb | fa):
        if f not in fb or f not in fa:
            differ.append(f + " (only in " + (before if f in fb else after) + ")")
            continue
        a = open(os.path.join(before, f), "rb").read()
        b = open(os.path.join(after, f), "rb").read()
        if a == b:
            same += 1
        elif close(a.decode("utf-8", "replace"), b.decode("utf-8", "replace"), rel):
            rounding.append(f)
        else:
            differ.append(f)
    print(f"{same} of {len(fb | fa)} files byte-identical")
    if rounding:
        print(f"{len(rounding)} differ only in numbers within {rel:g} relative:")
        for f in rounding:
            print("  " + f)
    if differ:
        print(f"{len(differ)} differ:")
        for f in differ:
            print("  " + f)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
