import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { z } from "zod";
import { Config } from "../src/schema/config.js";
import { Catalog, Engram } from "../src/schema/engram.js";
import {
  Envelope,
  MESSAGE_TYPES,
  MemoryNotePayload,
  PAYLOAD_SCHEMAS,
} from "../src/schema/envelope.js";
import { MemoryEvent } from "../src/schema/memory-event.js";

type Json = Record<string, unknown>;

function jsonSchema(schema: z.ZodType, target?: "draft-04"): Json {
  return z.toJSONSchema(schema, { io: "input", ...(target && { target }) }) as Json;
}

/** `$schema`, `title` and `description` first, then zod's own (schema-ordered) keys. */
function titled(schema: Json, title: string, description: string): Json {
  const { $schema, ...rest } = schema;
  return { $schema, title, description, ...rest };
}

function file(schema: Json): string {
  return `${JSON.stringify(schema, null, 2)}\n`;
}

/**
 * The JSON Schema files of every engram format, generated from the zod schemas: file name
 * (in `docs/schema/`) to content. Pure and deterministic.
 */
export function schemaFiles(): Record<string, string> {
  const payloads: Json = {};
  for (const type of MESSAGE_TYPES) {
    const { $schema: _, ...rest } = jsonSchema(PAYLOAD_SCHEMAS[type]);
    payloads[type] = rest;
  }
  return {
    // Draft 4: the newest draft Taplo (Even Better TOML) validates against.
    "config.schema.json": file(
      titled(
        jsonSchema(Config, "draft-04"),
        "engram config/dev.toml",
        "engram configuration. Every key is optional; `default` is the value used when it is absent. Cross-field rules are checked by engram itself: see docs/configuration.md.",
      ),
    ),
    "envelope.schema.json": file(
      titled(
        jsonSchema(Envelope),
        "agentbus-envelope/v1",
        "One agent-bus message (one NDJSON line). The payload's shape depends on message_type: see payloads.schema.json. Unknown fields are allowed (additive extension).",
      ),
    ),
    "memory-note.schema.json": file(
      titled(
        jsonSchema(MemoryNotePayload),
        "memory_note.v1 payload",
        "What a worker wants remembered: the payload of a memory_note.v1 envelope.",
      ),
    ),
    "payloads.schema.json": file({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      title: "agent-bus payloads",
      description:
        "The payload of each message type, one definition per message_type under $defs. Types without a definition of their own accept any object.",
      $defs: payloads,
    }),
    "memory-event.schema.json": file(
      titled(
        jsonSchema(MemoryEvent),
        "MemoryEvent",
        "A normalized, redacted event in the Director's buffer (the state folder, never committed).",
      ),
    ),
    "engram.schema.json": file(
      titled(
        jsonSchema(Engram),
        "EngramDTO",
        "One engram file: memory/<scope>/<version>/engram_<engram_id>.json.",
      ),
    ),
    "catalog.schema.json": file(
      titled(
        jsonSchema(Catalog),
        "EngramCatalogDTO",
        "memory/catalog.json: the authoritative lookup table of engrams.",
      ),
    ),
  };
}

async function main(): Promise<void> {
  // Compiled to dist/scripts/gen-schema.js: the repository is two levels up.
  const dir = fileURLToPath(new URL("../../docs/schema/", import.meta.url));
  await mkdir(dir, { recursive: true });
  const files = schemaFiles();
  let changed = 0;
  for (const [name, content] of Object.entries(files)) {
    const target = path.join(dir, name);
    const old = await readFile(target, "utf8").catch(() => undefined);
    if (old === content) continue;
    await writeFile(target, content);
    changed++;
  }
  // Files of formats that no longer exist would mislead.
  for (const name of await readdir(dir)) {
    if (name.endsWith(".json") && !(name in files)) {
      await rm(path.join(dir, name));
      changed++;
    }
  }
  console.log(`docs/schema: ${Object.keys(files).length} files, ${changed} changed`);
}

const invoked = process.argv[1];
if (invoked !== undefined && import.meta.url === pathToFileURL(invoked).href) await main();
