"""Markdown speed table of `forge step` vs PyTorch from the JSON lines of one device run:
forge's (`forge step --time S --json FILE`) and step_bench.py's.

usage: python3 step_table.py FORGE.jsonl TORCH.jsonl > table.md
"""

import json
import sys


def lines(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


def main():
    forge = {}
    for r in lines(sys.argv[1]):
        if r.get("timing"):
            c = r["config"]
            forge[(c["dtype"], c["dim"], r["rows"])] = r["timing"]["steps_per_s"]
    torch = {}
    for r in lines(sys.argv[2]):
        torch[(r["dtype"], r["dim"], r["rows"], r["impl"])] = r["steps_per_s"]
    print("| dtype | D | H | B×T (rows) | forge steps/s | torch eager | torch.compile | forge ÷ eager | forge ÷ compile |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (dtype, d, rows), f in sorted(forge.items(), key=lambda kv: (kv[0][0] != "tf32", kv[0][1], kv[0][2])):
        e = torch.get((dtype, d, rows, "torch-eager"))
        c = torch.get((dtype, d, rows, "torch-compile"))
        fmt = lambda v: f"{v:.1f}" if v else "—"
        ratio = lambda v: f"{f / v:.2f}×" if v else "—"
        print(f"| {dtype} | {d} | {4 * d} | {rows} | {f:.1f} | {fmt(e)} | {fmt(c)} | {ratio(e)} | {ratio(c)} |")


if __name__ == "__main__":
    main()
