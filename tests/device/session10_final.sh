#!/usr/bin/env bash
# Session 10's closing call: the GPU tests of the final binary. From a `build_drop.sh` folder
# holding device_lib.sh. $OUT: tests*.txt, nvidia-smi.txt.
set -uo pipefail
source ./device_lib.sh
device_setup s10f
gpu_tests
