"""Claude Code SessionEnd hook for vaultrag (registered async): starts the indexing of the session
that just ended in a detached process and returns at once. Thin: the logic lives in
vaultrag.sessions.hook. Always exits 0."""
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

sys.exit(main("SessionEnd"))
