/**
 * Shapes that once came through every channel (issue 40), each with true and false
 * positives. Secrets are assembled at run time, so this file holds no literal a scanner flags.
 */
import { describe, expect, it } from "vitest";
import { createRedactor } from "../../src/core/ingest/redact.js";

const redactor = createRedactor();
const j = (...parts: string[]) => parts.join("");
const hex64 = "3f9a0c7e".repeat(8);
const awsId = j("AK", "IA", "Z7XQ4B2N5M3K8J6H");
const awsSecret = "wJalrXUtnFEMIK7MDENGbPxRfiCYz9Xk2Lq3Pv8T";

describe("shapes that survive every channel", () => {
  it.each([
    [j("whsec", "_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6"), "[REDACTED:stripe-webhook-secret]"],
    [
      `https://b.s3.amazonaws.com/k?X-Amz-Credential=x&X-Amz-Signature=${hex64}`,
      "https://b.s3.amazonaws.com/k?X-Amz-Credential=x&X-Amz-Signature=[REDACTED:aws-presigned-signature]",
    ],
    [
      "https://a.blob.core.windows.net/c?sv=2022-11-02&sr=b&sig=AbCdEf1234567890abcdefGHIJKLmnop%2Bqrs%3D",
      "https://a.blob.core.windows.net/c?sv=2022-11-02&sr=b&sig=[REDACTED:azure-sas-signature]",
    ],
    [`SECRET_KEY_BASE=${hex64}`, "SECRET_KEY_BASE=[REDACTED:generic-api-key]"],
    ["DB_PASS=s3cr3tPa55", "DB_PASS=[REDACTED:password-assignment]"],
    ["smtp.pass: Hunter2-Mail", "smtp.pass: [REDACTED:password-assignment]"],
    [`${awsId} ${awsSecret}`, "[REDACTED:aws-access-token] [REDACTED:aws-secret-key-pair]"],
    [`${awsId},${awsSecret}`, "[REDACTED:aws-access-token],[REDACTED:aws-secret-key-pair]"],
    ["mysql -uroot -pS3cretPw shop", "mysql -uroot -p[REDACTED:cli-password-flag] shop"],
    [
      "docker login -u bob -p S3cretPw registry.example.com",
      "docker login -u bob -p [REDACTED:cli-password-flag] registry.example.com",
    ],
    [
      `{"auths":{"registry.example.com":{"auth":"${Buffer.from("bob:S3cretPw9").toString("base64")}"}}}`,
      '{"auths":{"registry.example.com":{"auth":"[REDACTED:docker-config-auth]"}}}',
    ],
  ])("redacts %s", (text, expected) => {
    expect(redactor.redact(text).text).toBe(expected);
    expect(redactor.redact(expected)).toEqual({ text: expected, count: 0 });
  });

  it.each([
    "compass=north and bypass=true",
    "mysql -u root -p shop",
    "mysql -p",
    "docker login -u bob --password-stdin registry.example.com",
    "docker ps -p 8080",
    "the sig=short of a link",
    "whsec_ is the prefix of Stripe's webhook secrets",
    "X-Amz-Signature=... in the pre-signed URL",
    j("SMTP_PASS: $", "{SMTP_PASS}"),
    "SECRET_KEY_BASE: required",
    `{"auth": "${Buffer.from("just text here").toString("base64")}"}`,
    `${awsId.slice(0, 4)} keys start with four letters, for example a word`,
  ])("keeps %s", (text) => {
    expect(redactor.redact(text)).toEqual({ text, count: 0 });
  });
});
