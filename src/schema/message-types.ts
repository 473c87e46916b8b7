/** The envelope's version and message types, apart from the zod schemas that check them. */
export const ENVELOPE_SCHEMA_VERSION = "agentbus-envelope/v1" as const;

export const MESSAGE_TYPES = [
  "protocol_hello.v1",
  "protocol_welcome.v1",
  "heartbeat.v1",
  "task_progress.v1",
  "worker_error.v1",
  "project_state_snapshot.v1",
  "memory_event.v1",
  "engram_announce.v1",
  "engram_catalog_snapshot.v1",
  "engram_catalog_delta.v1",
  "sync_required.v1",
  "protocol_incompatibility.v1",
  "memory_note.v1",
  "bus_ack.v1",
  "session_end.v1",
] as const;
export type MessageType = (typeof MESSAGE_TYPES)[number];
