"""Atheris fuzz targets and the ``pcfuzz`` command."""
