"""Claude Code SessionStart hook for vaultrag: a one-line notice to the user when the other hooks
cannot work (no vault, no index). Thin: the logic lives in vaultrag.session_start. Always exits 0."""
import os
import sys

# Its own deadline (a guard against hangs, under the 5 s it is registered with), set here so that a
# broken config file is reported instead of failing the timeout lookup in vaultrag.hooks.main.
os.environ.setdefault("VAULTRAG_HOOK_TIMEOUT_MS", "3000")
try:
    from vaultrag.hooks import main
except Exception:  # not installed for this interpreter: try the checkout this script sits in
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    try:
        from vaultrag.hooks import main
    except Exception:  # fail open, silently: never break the session
        sys.exit(0)

sys.exit(main("SessionStart"))
