"""python -m funes_py.server: the same as `funes-py serve`."""

import sys

from .cli import serve_main

sys.exit(serve_main())
