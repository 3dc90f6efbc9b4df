"""``python -m pcfuzz``: the same as the ``pcfuzz`` command."""

from pcfuzz.cli import main

if __name__ == "__main__":
    status = main()
    # CPython marks a KeyboardInterrupt that leaves an ``exec``/``eval`` of a string
    # as unhandled even when the program catches it later (dataclasses and namedtuples
    # define their methods that way, so Ctrl-C during an import is enough), and
    # ``python -m`` then ends by SIGINT whatever status was raised: ``main`` already
    # gave every ending, an interrupt included, its status. Each ``exec`` of a string
    # clears that mark when it starts (and sets it only if an interrupt leaves it).
    # The ``pcfuzz`` console script runs as a file, whose exit status CPython keeps.
    exec("pass")  # noqa: S102 - a constant: clears the mark, see above
    raise SystemExit(status)
