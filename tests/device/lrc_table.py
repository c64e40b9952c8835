"""Session 26, issue #13 (CPU): the L2 request coalescer's table from Nsight Compute reports of
`session6_ncu.sh` run with the `lrc__` metrics (tests/device/README.md, session 26): per kernel
the time, the read sectors the SMs requested, the share the coalescer merged with another SM's
request for the same sector, and the sectors that reached the L2 slices.
  python3 tests/device/lrc_table.py NCU_TGZ_OR_FOLDER ...
"""
import glob
import os
import re
import sys
import tarfile
import tempfile

METRICS = {
    "Duration": "us",  # the SpeedOfLight section's
    "lrc__request_sectors_op_read_coalescable.sum": "requested",
    "lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum": "merged",
    "lrc__lts2lrc_sectors_op_read.sum": "to_l2",
}
NAME = re.compile(r"ncu_own_(\d+x\d+x\d+)_(\S+)\.txt$")


def reports(path, tmp):
    if os.path.isdir(path):
        return sorted(glob.glob(os.path.join(path, "ncu_own_*.txt")))
    with tarfile.open(path) as t:
        t.extractall(tmp, filter="data")
    return sorted(glob.glob(os.path.join(tmp, "**", "ncu_own_*.txt"), recursive=True))


def read(report):
    """{column: value} of one report (µs for the time, sectors for the counters)."""
    row = {}
    for line in open(report, errors="replace"):
        f = line.split()
        if len(f) >= 3 and f[0] in METRICS:
            value = float(f[-1].replace(",", ""))
            # ncu picks the time's unit ("Duration  us  580.38"; ns and ms on other kernels).
            scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3}[f[1]] if f[0] == "Duration" else 1.0
            row[METRICS[f[0]]] = value * scale
    return row


def main():
    print("| shape | schedule | µs | requested (M sectors) | merged | to L2 (M sectors) |")
    print("|---|---|---:|---:|---:|---:|")
    for path in sys.argv[1:]:
        with tempfile.TemporaryDirectory() as tmp:
            for report in reports(path, tmp):
                m = NAME.search(os.path.basename(report))
                row = read(report)
                if not m or "requested" not in row:
                    continue
                shape, sched = m.groups()
                print("| %s | %s | %.1f | %.1f | %.1f%% | %.1f |" % (
                    shape, sched.replace("wgmma_tf32_", ""), row.get("us", float("nan")),
                    row["requested"] / 1e6, 100 * row["merged"] / row["requested"],
                    row["to_l2"] / 1e6))


if __name__ == "__main__":
    main()
