"""Session 22, issue #13: held-out set 18 for session10_select.sh (CPU), written before any of
these shapes was timed. Twelve shapes that no profile entry, calibration set, selection screen
or report of this repository holds, with M or N small (one or two tile rows or columns), where
the session-22 occupancy moves a profile's choice: the wgmma kernels claim the whole register
file (one CTA per SM, what ptxas allocates), where the session-21 model ran two or three
small-tile CTAs per SM. Roles:
  h100, h200            each profile's choice by this build's model (one CTA per SM, cluster
                        fill 2000 clocks, mma.sync register overhead 60);
  h100_prev, h200_prev  the same profiles' choices by the session-21 constants
                        (session22-select/model-prev.toml: the old occupancy);
and both models' top 8 priced for each device (split-K excluded); the table's "fresh tune" is
the best of those. Writes DEST/jobs.{txt,json}.
  PYTHONPATH=tests/device python3 tests/device/session22_select_jobs.py DEST
"""
import sys

from session23_select_jobs import write_set

if __name__ == "__main__":
    write_set(sys.argv[1], "18")
