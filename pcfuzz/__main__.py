"""``python -m pcfuzz``: the same as the ``pcfuzz`` command."""

from pcfuzz.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
