"""`python -m funes_py.convert SRC_DIR [--out DIR] [--name NAME]`: convert a model, print its directory.

The directory is the only thing on stdout (so scripts can capture it); errors go to stderr, exit status 1.
`--list` prints the shipped and cached models as JSON lines instead.
"""

from __future__ import annotations

import argparse
import json
import sys

from .build import build_model
from .registry import list_models


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m funes_py.convert", description=__doc__.splitlines()[0])
    parser.add_argument(
        "src_dir",
        nargs="?",
        help="HF model directory (config.json, model.safetensors, tokenizer.json)"
        " or a directory with model.onnx + tokenizer.json",
    )
    parser.add_argument("--out", help="output directory (default: the models cache, $FUNES_MODELS_DIR)")
    parser.add_argument("--name", help="model name recorded in funes_model.json (default: from the model card)")
    parser.add_argument("--list", action="store_true", help="list shipped and cached models and exit")
    args = parser.parse_args(argv)
    if args.list:
        for m in list_models():
            print(json.dumps(m))
        return 0
    if not args.src_dir:
        parser.error("SRC_DIR is required (or --list)")
    try:
        print(build_model(args.src_dir, out_dir=args.out, name=args.name))
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
