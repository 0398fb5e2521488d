"""What the Python benchmarks (convert.py, python_read.py) share with report.py: their results, shown as a
table and kept as JSON for the report."""

import json
import os


def show_and_keep(results, table, path):
    """Prints `table(results)`; when `path` is given (a script's `--json`), writes `results` there as JSON."""
    print(table(results))
    if path:
        with open(path, "w") as f:
            json.dump(results, f, indent=1)


def kept(path):
    """The results a benchmark kept at `path`, or None when it has not written any."""
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)
