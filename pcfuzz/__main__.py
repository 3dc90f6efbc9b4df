"""``python -m pcfuzz``: the same as the ``pcfuzz`` command."""

from pcfuzz.fuzz.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
