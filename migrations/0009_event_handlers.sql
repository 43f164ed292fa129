-- Event handlers (Conductor's EventHandler), by name: what to do when an EVENT task publishes an event
-- (`conductor:<workflow>:<queue>`). The handler is kept as sent (normalised); `event` and `active` are
-- columns for the lookup an EVENT task makes of the active handlers of its event.
CREATE TABLE event_handlers (
  name TEXT NOT NULL PRIMARY KEY,
  event TEXT NOT NULL,
  active INTEGER NOT NULL,
  handler TEXT NOT NULL,
  create_time INTEGER NOT NULL,
  update_time INTEGER NOT NULL
);
CREATE INDEX event_handlers_by_event ON event_handlers (event, active);
