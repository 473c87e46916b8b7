/**
 * RFC 8785 (JCS) canonical JSON: object keys sorted by UTF-16 code units, no whitespace,
 * ECMAScript number and string forms (which `JSON.stringify` already produces).
 */
export function canonicalJson(value: unknown): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false";
    case "number":
      if (!Number.isFinite(value)) throw new TypeError(`canonicalJson: non-finite number ${value}`);
      return JSON.stringify(value);
    case "string":
      return JSON.stringify(value);
    case "object": {
      if (Array.isArray(value)) {
        // A list of strings (facts, topics, senders) is already canonical as JSON.stringify
        // writes it: one native call instead of one per item.
        if (value.every(isPlainScalar)) return JSON.stringify(value);
        let out = "[";
        for (let i = 0; i < value.length; i++) {
          const item: unknown = value[i];
          out += `${i > 0 ? "," : ""}${item === undefined ? "null" : canonicalJson(item)}`;
        }
        return `${out}]`;
      }
      const record = value as Record<string, unknown>;
      // Default sort compares UTF-16 code units, exactly what RFC 8785 asks for.
      let out = "{";
      for (const key of Object.keys(record).sort()) {
        const field = record[key];
        if (field === undefined) continue;
        out += `${out.length > 1 ? "," : ""}${JSON.stringify(key)}:${canonicalJson(field)}`;
      }
      return `${out}}`;
    }
    default:
      throw new TypeError(`canonicalJson: unsupported type ${typeof value}`);
  }
}

/** A value JSON.stringify writes in canonical form as an array item: no object, no -0 trap. */
function isPlainScalar(item: unknown): boolean {
  return (
    typeof item === "string" ||
    typeof item === "boolean" ||
    item === null ||
    (typeof item === "number" && Number.isFinite(item))
  );
}

export function sha256Hex(text: string | Uint8Array): string {
  // The one-shot `hash` is about twice as fast as createHash for short input: ingest hashes
  // every event id. Node's crypto is taken when first used (Node 20.16+, hence the engines
  // field), not imported: a command that never hashes does not load it (start-up, issue 39).
  return process.getBuiltinModule("node:crypto").hash("sha256", text, "hex");
}

/** `sha256Hex` of the parts joined, without joining them: a large part is hashed in place. */
export function sha256HexOfParts(parts: readonly string[]): string {
  const digest = process.getBuiltinModule("node:crypto").createHash("sha256");
  for (const part of parts) digest.update(part, "utf8");
  return digest.digest("hex");
}

/** `sha256:<hex>` of the canonical JSON of `value` without the named fields. */
export function contentHash(value: Record<string, unknown>, without: readonly string[]): string {
  // No prototype: a `__proto__` key (JSON.parse makes it an own key) is copied as a key, so
  // it changes the hash, instead of silently setting the copy's prototype.
  const copy: Record<string, unknown> = Object.create(null);
  for (const [key, field] of Object.entries(value)) {
    if (!without.includes(key)) copy[key] = field;
  }
  return `sha256:${sha256Hex(canonicalJson(copy))}`;
}
