"""python -m funes_py.server: the same as `funes-py serve`."""

import sys

from .cli import serve_main

if __name__ == "__main__":  # the ingest worker processes import this module too (spawn) and must not serve
    sys.exit(serve_main())
