"""SHA-256 for the hook path without `import hashlib`. Standard library only.

`hashlib` loads OpenSSL's libcrypto and builds every algorithm's constructor at import (issue 18:
~2-3 ms of a hook's ~50 ms start on a quiet machine, 8 ms of CPU under load); the interpreter's
built-in SHA-256 module is already linked in. Digests are identical; the built-in is slower on
large inputs (no SHA-NI), which the hook path never hashes (a query, a note checked for changes).
"""
from __future__ import annotations

try:  # Python 3.12+
    from _sha2 import sha256  # type: ignore[import-not-found]
except ImportError:
    try:  # Python 3.8-3.11
        from _sha256 import sha256  # type: ignore[import-not-found,no-redef]
    except ImportError:  # a build without the built-in modules
        from hashlib import sha256  # type: ignore[assignment]

__all__ = ["sha256"]
