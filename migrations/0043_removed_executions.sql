-- Tombstones of removed executions: a search-row write of one still on its way when it was removed (a batch of an index
-- writer reset before D1 answered, landing after the removal's delete) is refused instead of putting its rows back
-- (`upsertIndexRow` and the metrics' counting check here, by the primary key). `create_time` is the removed execution's
-- (its last start's): its rows were all made at or before it, while an execution started later under the same id (an
-- event redelivered once the object's own tombstone is gone) has a later one, and is indexed. `removed_at` is when the
-- writer deleted its rows; a batch with a removal prunes the tombstones older than a day (`REMOVED_TOMBSTONE_KEEP_MS`).
CREATE TABLE removed_executions (
  workflow_id TEXT PRIMARY KEY,
  create_time INTEGER NOT NULL,
  removed_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX removed_executions_by_time ON removed_executions (removed_at);
