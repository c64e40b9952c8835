"""A hypothesis' constants file: the shipped cost_model/model.toml with extra [global] constants
(session 28; used by session28_select_jobs.py and cost_model/dram_accuracy.py)."""
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def write(path, overrides):
    """Writes the shipped constants with `overrides` ({key: value}) added under [global] to
    `path` and returns it."""
    text = open(os.path.join(ROOT, "cost_model", "model.toml")).read()
    assert "\n[global]\n" in text, "cost_model/model.toml has no [global] table"
    lines = "".join("%s = %r\n" % kv for kv in overrides.items())
    with open(path, "w") as f:
        f.write(text.replace("\n[global]\n", "\n[global]\n" + lines, 1))
    return path
