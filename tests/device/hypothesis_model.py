"""A hypothesis' constants file: the shipped cost_model/model.toml with extra [global] constants
(session 28; used by session28_select_jobs.py and cost_model/dram_accuracy.py)."""
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def write(path, overrides):
    """Writes the shipped constants with `overrides` ({key: value}) under [global] to `path`
    (a key the file already sets is replaced in place, its comment dropped) and returns it."""
    text = open(os.path.join(ROOT, "cost_model", "model.toml")).read()
    assert "\n[global]\n" in text, "cost_model/model.toml has no [global] table"
    head, rest = text.split("\n[global]\n", 1)
    table, sep, tail = rest.partition("\n[")
    lines = table.split("\n")
    added = []
    for key, value in overrides.items():
        at = [i for i, x in enumerate(lines) if x.split("=")[0].strip() == key]
        if at:
            lines[at[0]] = "%s = %r" % (key, value)
        else:
            added.append("%s = %r" % (key, value))
    table = "\n".join(added + lines)
    with open(path, "w") as f:
        f.write(head + "\n[global]\n" + table + sep + tail)
    return path
