"""`python -m sc_sim mosaic kernel.mlir program.yaml [sc-sim run options]`."""
from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    if not argv or argv[0] != "mosaic":
        print("usage: python -m sc_sim mosaic KERNEL.mlir PROGRAM.yaml [-o OUT] "
              "[--print] [sc-sim run options]", file=sys.stderr)
        return 2
    from .mosaic import main as mosaic_main
    return mosaic_main(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
