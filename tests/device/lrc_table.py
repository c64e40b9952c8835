"""Session 26, issue #13 (CPU): the L2 request coalescer's table from Nsight Compute reports of
`session6_ncu.sh` run with the `lrc__` metrics (tests/device/README.md, session 26): per kernel
the time, the read sectors the SMs requested, the share the coalescer merged with another SM's
request for the same sector, the sectors that reached the L2 slices, and (session 27) the
bytes read from DRAM.
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
    "dram__bytes_read.sum": "dram_read",  # session6_ncu.sh's default metrics
}
# ncu's byte units (dram__bytes_read.sum prints Kbyte, Mbyte or Gbyte), in MB.
BYTES = {"byte": 1e-6, "Kbyte": 1e-3, "Mbyte": 1.0, "Gbyte": 1e3}
NAME = re.compile(r"ncu_own_(\d+x\d+x\d+)_(\S+)\.txt$")


def reports(path, tmp):
    if os.path.isdir(path):
        return sorted(glob.glob(os.path.join(path, "ncu_own_*.txt")))
    with tarfile.open(path) as t:
        t.extractall(tmp, filter="data")
    return sorted(glob.glob(os.path.join(tmp, "**", "ncu_own_*.txt"), recursive=True))


def read(report):
    """{column: value} of one report (µs for the time, MB for DRAM, sectors for the rest)."""
    row = {}
    for line in open(report, errors="replace"):
        f = line.split()
        if len(f) >= 3 and f[0] in METRICS:
            value = float(f[-1].replace(",", ""))
            # ncu picks the time's unit ("Duration  us  580.38"; ns and ms on other kernels).
            if f[0] == "Duration":
                scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3}[f[1]]
            elif f[0] == "dram__bytes_read.sum":
                scale = BYTES[f[1]]
            else:
                scale = 1.0
            row[METRICS[f[0]]] = value * scale
    return row


def main():
    print("| shape | schedule | µs | requested (M sectors) | merged | to L2 (M sectors) |"
          " DRAM read (MB) |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for path in sys.argv[1:]:
        with tempfile.TemporaryDirectory() as tmp:
            for report in reports(path, tmp):
                m = NAME.search(os.path.basename(report))
                row = read(report)
                if not m or "requested" not in row:
                    continue
                shape, sched = m.groups()
                print("| %s | %s | %.1f | %.1f | %.1f%% | %.1f | %.0f |" % (
                    shape, sched.replace("wgmma_tf32_", ""), row.get("us", float("nan")),
                    row["requested"] / 1e6, 100 * row["merged"] / row["requested"],
                    row["to_l2"] / 1e6, row.get("dram_read", float("nan"))))


if __name__ == "__main__":
    main()
