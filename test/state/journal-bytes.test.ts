import { describe, expect, it } from "vitest";
import { JournalBytes, journalLineBytes } from "../../src/state/journal-lines.js";

/** What `append` wrote before the lines were laid out as bytes: one string per line, joined. */
function asStrings(lines: readonly [number, string][]): Buffer {
  return Buffer.from(lines.map(([seq, body]) => `{"seq":${seq},${body.slice(1)}\n`).join(""));
}

function written(lines: readonly [number, string][]): {
  bytes: Buffer;
  sizes: number[];
  writes: number;
} {
  const pieces: Buffer[] = [];
  const out = new JournalBytes((data, length) =>
    pieces.push(Buffer.from(data.subarray(0, length))),
  );
  const sizes = lines.map(([seq, body]) => out.add(seq, body));
  out.flush();
  return { bytes: Buffer.concat(pieces), sizes, writes: pieces.length };
}

describe("journal lines laid out as bytes", () => {
  it("are the bytes of the lines as strings, sized as journalLineBytes counts them", () => {
    const lines: [number, string][] = [
      [1, JSON.stringify({ key: "a", text: "plain" })],
      [22, JSON.stringify({ key: "b", text: 'é, ß, 日本, 🙂 and a "quote"\n' })],
      [333_333, JSON.stringify({ key: "c", text: "x".repeat(100_000) })],
      [9_007_199_254_740_991, JSON.stringify({ key: "d" })],
      [0, JSON.stringify({ key: "e" })],
      [1e21, JSON.stringify({ key: "f" })],
    ];
    const { bytes, sizes } = written(lines);
    expect(bytes.equals(asStrings(lines))).toBe(true);
    expect(sizes).toEqual(lines.map(([seq, body]) => journalLineBytes(body, seq)));
  });

  it("write a batch larger than what they hold in pieces that split no line", () => {
    const body = JSON.stringify({ key: "k", text: "ü".repeat(200_000) });
    const lines: [number, string][] = Array.from({ length: 40 }, (_, i) => [i + 1, body]);
    const { bytes, writes } = written(lines);
    expect(writes).toBeGreaterThan(1);
    expect(bytes.equals(asStrings(lines))).toBe(true);
  });
});
