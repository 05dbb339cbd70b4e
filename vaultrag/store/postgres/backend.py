"""A collection as a writer sees it: the advisory lock, the shadow-generation rebuild.

- Lock: `pg_try_advisory_lock` on the collection's name, held by one connection for the whole
  reindex. A killed indexer's connection drops and the server releases the lock by itself.
- Rebuild: a new generation is written beside the live one (readers keep using the live one),
  then `collections.live` is switched in one transaction. An interrupted or killed rebuild leaves
  an unpublished generation that no reader ever sees; the next writer to take the lock deletes it.
"""
from __future__ import annotations

import time

from ...errors import IndexLocked, redact_url
from ..base import Backend, Rebuild
from .connection import connect, ensure_schema, release
from .store import PgStore, drop_generation, new_generation

LOCK_NAMESPACE = "vaultrag:"  # advisory lock key: hashtext(namespace || collection name)
LOCK_POLL_S = 0.2
# After a rebuild is published, the old generation is deleted this much later: a search that
# started just before the switch (it resolved the live generation at its start) finishes first.
RETIRE_GRACE_S = 2.0


class PgLock:
    def __init__(self, url: str, name: str, wait_s: float):
        self.url, self.name, self.wait_s = url, name, wait_s
        self.conn = None

    def __enter__(self) -> "PgLock":
        self.conn = connect(self.url)
        deadline = time.monotonic() + self.wait_s
        key = LOCK_NAMESPACE + self.name
        while not self.conn.execute("SELECT pg_try_advisory_lock(hashtext(%s))", (key,)).fetchone()[0]:
            if time.monotonic() >= deadline:
                release(self.url, self.conn)
                self.conn = None
                raise IndexLocked(f"another reindex holds collection {self.name!r} in {redact_url(self.url)}; waited "
                                  f"{self.wait_s:.0f} s. Let it finish, or retry later.")
            time.sleep(LOCK_POLL_S)
        self._drop_orphans()
        return self

    def _drop_orphans(self) -> None:
        """Generations of this collection that are not live: left by a killed or failed rebuild
        (only the lock holder creates them, and we hold the lock)."""
        ensure_schema(self.url, self.conn, create=True)
        rows = self.conn.execute("SELECT g.id FROM generations g JOIN collections c ON c.id = g.collection_id "
                                 "WHERE c.name = %s AND g.id IS DISTINCT FROM c.live", (self.name,)).fetchall()
        for (gen,) in rows:
            drop_generation(self.conn, gen)

    def __exit__(self, *exc) -> None:
        if self.conn is not None:
            try:
                self.conn.execute("SELECT pg_advisory_unlock(hashtext(%s))", (LOCK_NAMESPACE + self.name,))
            finally:
                release(self.url, self.conn)
                self.conn = None


class PgRebuild(Rebuild):
    def __init__(self, url: str, name: str):
        self.url, self.name = url, name
        self.store: PgStore | None = None
        self.published = False

    def __enter__(self) -> "PgRebuild":
        live_store = PgStore(self.url, collection=self.name)  # creates schema and collection if needed
        try:
            with live_store.transaction():
                self.shadow = new_generation(live_store.conn, live_store.collection_id)
        finally:
            live_store.close()
        self.store = PgStore(self.url, collection=self.name, generation=self.shadow, defer_index=True)
        return self

    def publish(self) -> None:
        store = self.store
        store.optimize()  # the shadow's HNSW index, if the indexer did not build it already
        with store.transaction():
            old = store.conn.execute("SELECT live FROM collections WHERE id = %s FOR UPDATE",
                                     (store.collection_id,)).fetchone()[0]
            store.conn.execute("UPDATE collections SET live = %s WHERE id = %s", (self.shadow, store.collection_id))
        self.published = True
        if old is not None and old != self.shadow:
            time.sleep(RETIRE_GRACE_S)
            drop_generation(store.conn, old)

    def __exit__(self, *exc) -> None:
        store, self.store = self.store, None
        if store is None:
            return
        try:
            if not self.published:
                drop_generation(store.conn, self.shadow)
        finally:
            store.close()


class PgBackend(Backend):
    def __init__(self, url: str, name: str):
        self.url, self.name = url, name

    @property
    def location(self) -> str:
        return f"{redact_url(self.url)} (collection {self.name})"

    def open(self, *, readonly: bool = False) -> PgStore:
        return PgStore(self.url, collection=self.name, readonly=readonly)

    def lock(self, wait_s: float) -> PgLock:
        return PgLock(self.url, self.name, wait_s)

    def rebuild(self) -> PgRebuild:
        return PgRebuild(self.url, self.name)
