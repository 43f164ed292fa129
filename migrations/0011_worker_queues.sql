-- The worker queues that exist (a TaskQueue object per task name and domain, '' for the default one): each lists
-- itself once, when it is first pushed to or polled, so that every queue can be listed (Conductor's
-- /api/tasks/queue/all and /api/tasks/queue/polldata/all) without a registry object on the polling path.
CREATE TABLE worker_queues (
  task_name TEXT NOT NULL,
  domain TEXT NOT NULL,
  PRIMARY KEY (task_name, domain)
);
