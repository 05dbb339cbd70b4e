"""Moved to vaultrag/store/sqlite/connection.py (issue 15: SQLite details behind the Store seam); this
name is kept so code written before the move keeps importing it."""
from .sqlite.connection import *  # noqa: F401,F403
