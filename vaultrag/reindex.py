"""`python -m vaultrag.reindex [--vault PATH] [--full] [--json]`: same as `vaultrag reindex`."""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main(["reindex", *sys.argv[1:]]))
