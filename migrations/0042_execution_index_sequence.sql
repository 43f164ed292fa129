-- The sequence of the search-row write that wrote an execution's row (its object numbers its writes 1, 2, ... and
-- stores the number before the write leaves): it orders two writes with the same update_time (task changes between
-- two workflow-level ones), which a late one of an evicted writer otherwise put back in the order they landed. 0 for
-- rows indexed before this column existed, and for a first row inserted by code older than it (gradual deployment),
-- which names no such column: its upsert leaves the stored number as it is. Every write of newer code numbers 1 or
-- more, so neither holds one back; a write without a number (older code) is ordered by update_time alone, as before.
ALTER TABLE executions ADD COLUMN index_sequence INTEGER NOT NULL DEFAULT 0;
