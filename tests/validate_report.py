#!/usr/bin/env python3
"""Validates dtsim run --json reports against docs/report.schema.json (JSON Schema draft 7, python3-jsonschema).
usage: tests/validate_report.py SCHEMA REPORT.json...   Prints one line per invalid report; exit 1 if any."""
import json
import sys

import jsonschema


def main():
    if len(sys.argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    with open(sys.argv[1]) as f:
        schema = json.load(f)
    jsonschema.Draft7Validator.check_schema(schema)
    validator = jsonschema.Draft7Validator(schema)
    bad = 0
    for path in sys.argv[2:]:
        try:
            with open(path) as f:
                report = json.load(f)
        except (OSError, ValueError) as e:
            print(f"{path}: not JSON: {e}")
            bad += 1
            continue
        errors = sorted(validator.iter_errors(report), key=lambda e: list(e.path))
        for e in errors[:5]:
            where = "/".join(str(p) for p in e.path) or "(top)"
            print(f"{path}: {where}: {e.message[:300]}")
        bad += bool(errors)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
