import type { Sealed } from "../../schema/common.js";

/**
 * AES-256-GCM for `sensitive` text. The IV is an HMAC of the plaintext under the same key
 * (synthetic IV), so the same text sealed twice gives the same bytes: engram files stay
 * deterministic, and two Directors sharing a key produce identical trees. The cost is that
 * equal plaintexts are recognisable as equal, which is acceptable for memory notes.
 */
export function sealText(key: Uint8Array, field: string, plaintext: string): Sealed {
  if (key.length !== 32) throw new RangeError("sealText: key must be 32 bytes");
  const iv = process
    .getBuiltinModule("node:crypto")
    .createHmac("sha256", key)
    .update(`${field}\u0000${plaintext}`)
    .digest()
    .subarray(0, 12);
  const cipher = process.getBuiltinModule("node:crypto").createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(field, "utf8"));
  const ct = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return {
    alg: "A256GCM",
    field,
    iv: iv.toString("base64"),
    ct: ct.toString("base64"),
    tag: cipher.getAuthTag().toString("base64"),
  };
}

export function openSealed(key: Uint8Array, sealed: Sealed): string {
  const decipher = process
    .getBuiltinModule("node:crypto")
    .createDecipheriv("aes-256-gcm", key, Buffer.from(sealed.iv, "base64"));
  decipher.setAAD(Buffer.from(sealed.field, "utf8"));
  decipher.setAuthTag(Buffer.from(sealed.tag, "base64"));
  return Buffer.concat([
    decipher.update(Buffer.from(sealed.ct, "base64")),
    decipher.final(),
  ]).toString("utf8");
}
