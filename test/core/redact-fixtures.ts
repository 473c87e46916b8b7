import { createRedactor } from "../../src/core/ingest/redact.js";
import { Rng } from "../support/random.js";

// Fake tokens are assembled from pieces, so that this file holds no literal a scanner would flag.
export const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
export const LOWER = "abcdefghijklmnopqrstuvwxyz";
export const DIGITS = "0123456789";
export const ALNUM = UPPER + LOWER + DIGITS;

/** A deterministic pseudo-random string over `alphabet`, different for each `seed`. */
export function fake(alphabet: string, length: number, seed: number): string {
  return new Rng(seed).chars(alphabet, length);
}

export const GH = (kind: string, seed = 1) => "gh" + kind + "_" + fake(ALNUM, 36, seed);
export const GH_PAT = "github" + "_pat_" + fake(ALNUM, 22, 2) + "_" + fake(ALNUM, 59, 3);
export const NPM = "np" + "m_" + fake(ALNUM, 36, 4);
export const AWS_ID = "AK" + "IA" + fake(UPPER + DIGITS, 16, 5);
export const AWS_STS_ID = "AS" + "IA" + fake(UPPER + DIGITS, 16, 6);
export const AWS_SECRET = `Wq7/${fake(ALNUM + "/+", 36, 7)}`;
export const SLACK_BOT =
  "xo" + "xb-" + fake(DIGITS, 12, 8) + "-" + fake(DIGITS, 12, 9) + "-" + fake(ALNUM, 24, 10);
export const SLACK_USER = "xo" + "xp-" + fake(DIGITS, 11, 11) + "-" + fake(ALNUM, 30, 12);
export const SLACK_HOOK =
  "https://hooks.sl" +
  "ack.com/services/T" +
  fake(UPPER + DIGITS, 8, 13) +
  "/B" +
  fake(UPPER + DIGITS, 10, 14) +
  "/" +
  fake(ALNUM, 24, 15);
export const OPENAI_PROJ =
  "sk-" + "proj-" + fake(ALNUM + "_-", 74, 16) + "T3Blbk" + fake(ALNUM, 20, 17);
export const OPENAI_LEGACY = "sk-" + "Tq" + fake(ALNUM, 46, 18);
export const OPENAI_DIGITS = "sk-" + fake(DIGITS, 48, 24);
export const ANTHROPIC = "sk-" + "ant-api03-" + fake(ALNUM + "_-", 93, 19) + "AA";
export const PEM_BODY = [0, 1, 2, 3].map((i) => fake(ALNUM + "+/", 64, 20 + i)).join("\n");
export const pem = (kind: string, body = PEM_BODY) =>
  `-----BEGIN ${kind}PRIV` + `ATE KEY-----\n${body}\n-----END ${kind}PRIV` + "ATE KEY-----";
export const PEM_HEAD = "-----BEGIN RSA PRIV" + "ATE KEY-----";
export const PEM_TAIL = "-----END RSA PRIV" + "ATE KEY-----";
export const JWT =
  "ey" +
  "JhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." +
  "ey" +
  "J" +
  fake(ALNUM, 40, 30) +
  "." +
  fake(ALNUM + "_-", 43, 31);

export const redactor = createRedactor();
// REDACT_FUZZ_SCALE=50 runs the properties longer when hunting for a counterexample.
export const SCALE = Number(process.env.REDACT_FUZZ_SCALE ?? "1");
