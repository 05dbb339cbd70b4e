"""Claude Code PostToolUseFailure hook for vaultrag. Thin: the logic lives in vaultrag.hooks. Always exits 0."""
import os
import sys

try:
    from vaultrag.hooks import main
except Exception:  # not installed for this interpreter: try the checkout this script sits in
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    try:
        from vaultrag.hooks import main
    except Exception:  # fail open, silently: never break the session
        sys.exit(0)

sys.exit(main("PostToolUseFailure"))
