#!/usr/bin/env python3
"""Writes a static map file (static.map_file, configs/maps/README.md): trees, rocks and
resource nodes scattered over a rectangle, reproducibly from a seed.

usage: scripts/make-static-map.py [--width 2000] [--height 2000] [--min-x 0] [--min-y 0]
                                  [--count 3000] [--seed 1] [-o FILE]
Trees are 0.3-0.8 m, rocks 1-4 m, resource nodes 0.5-1 m in radius; about 70% trees,
20% rocks, 10% resources; rocks gather in a few outcrops.
"""
import argparse
import random
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--width", type=float, default=2000.0)
    ap.add_argument("--height", type=float, default=2000.0)
    ap.add_argument("--min-x", type=float, default=0.0)
    ap.add_argument("--min-y", type=float, default=0.0)
    ap.add_argument("--count", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-o", "--output", default="-")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    outcrops = [(a.min_x + rng.uniform(0, a.width), a.min_y + rng.uniform(0, a.height))
                for _ in range(max(1, a.count // 200))]
    lines = [
        "# Static map (static.map_file): objects as [kind, x, y, radius], metres.",
        f"# Made by: scripts/make-static-map.py --width {a.width:g} --height {a.height:g} "
        f"--min-x {a.min_x:g} --min-y {a.min_y:g} --count {a.count} --seed {a.seed}",
        "objects:",
    ]
    for _ in range(a.count):
        roll = rng.random()
        if roll < 0.7:
            kind, r = "tree", rng.uniform(0.3, 0.8)
            x, y = a.min_x + rng.uniform(0, a.width), a.min_y + rng.uniform(0, a.height)
        elif roll < 0.9:
            kind, r = "rock", rng.uniform(1.0, 4.0)
            cx, cy = rng.choice(outcrops)
            x = min(max(cx + rng.gauss(0, 25), a.min_x), a.min_x + a.width)
            y = min(max(cy + rng.gauss(0, 25), a.min_y), a.min_y + a.height)
        else:
            kind, r = "resource", rng.uniform(0.5, 1.0)
            x, y = a.min_x + rng.uniform(0, a.width), a.min_y + rng.uniform(0, a.height)
        lines.append(f"  - [{kind}, {x:.2f}, {y:.2f}, {r:.2f}]")
    text = "\n".join(lines) + "\n"
    if a.output == "-":
        sys.stdout.write(text)
    else:
        with open(a.output, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
