-- What happened to each event an EVENT task published (Orkes' event messages) and what each handler's action did
-- with it (Orkes' event executions): written by the publishing execution once the handlers have run (a repeated
-- publication rewrites its rows). An event keeps its latest 1,000 messages, a handler its latest 1,000 executions.
CREATE TABLE event_messages (
  id TEXT NOT NULL PRIMARY KEY,
  event TEXT NOT NULL,
  created INTEGER NOT NULL,
  payload TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('HANDLED', 'RECEIVED')),
  status_description TEXT
);
CREATE INDEX event_messages_by_event ON event_messages (event, created);

CREATE TABLE event_executions (
  id TEXT NOT NULL PRIMARY KEY,
  message_id TEXT NOT NULL,
  handler_name TEXT NOT NULL,
  event TEXT NOT NULL,
  action TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('COMPLETED', 'FAILED', 'SKIPPED')),
  status_description TEXT,
  output TEXT NOT NULL,
  created INTEGER NOT NULL
);
CREATE INDEX event_executions_by_handler ON event_executions (handler_name, created);
CREATE INDEX event_executions_by_message ON event_executions (message_id);
