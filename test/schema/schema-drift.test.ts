import { readdir, readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { schemaFiles } from "../../scripts/gen-schema.js";

const DIR = fileURLToPath(new URL("../../docs/schema/", import.meta.url));
const HINT = "is out of date with the zod schemas: run `npm run schema` and commit the result";

describe("docs/schema", () => {
  const files = schemaFiles();

  it("holds exactly the generated files", async () => {
    const present = (await readdir(DIR)).filter((n) => n.endsWith(".json")).sort();
    expect(present, `docs/schema ${HINT}`).toEqual(Object.keys(files).sort());
  });

  it.each(Object.keys(files))("%s matches the zod schema", async (name) => {
    const checkedIn = await readFile(`${DIR}${name}`, "utf8").catch(() => "(missing)");
    expect(checkedIn, `docs/schema/${name} ${HINT}`).toBe(files[name]);
  });

  it("is stable: 2-space JSON with a trailing newline, the same on every run", () => {
    expect(schemaFiles()).toEqual(files);
    for (const content of Object.values(files)) {
      expect(content).toBe(`${JSON.stringify(JSON.parse(content), null, 2)}\n`);
    }
  });

  it("keeps defaults in the config schema for editors", () => {
    const config = JSON.parse(files["config.schema.json"]!);
    expect(config.$schema).toBe("http://json-schema.org/draft-04/schema#");
    expect(config.properties.memory.properties.buffer_max_bytes.default).toBe(33_554_432);
    expect(config.additionalProperties).toBe(false);
  });
});
