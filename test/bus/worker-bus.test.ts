/** Which bus a worker sends over: --bus, ENGRAM_BUS, the trust-limited [worker] bus, the spool. */
import { describe, expect, it } from "vitest";
import { workerBus } from "../../src/bus/worker-bus.js";
import { ConfigError, UsageError } from "../../src/errors.js";
import { defaultConfig } from "../../src/schema/config.js";

const repoDir = "/work/repo";
function ctx(bus: string | undefined, configPath = `${repoDir}/config/dev.toml`) {
  const config = defaultConfig();
  return { repoDir, configPath, config: { ...config, worker: { ...config.worker, bus } } };
}

describe("workerBus", () => {
  it("takes --bus, else ENGRAM_BUS, else [worker] bus, else the spool", () => {
    const env = { ENGRAM_BUS: "git:upstream" };
    expect(workerBus(ctx("git:origin"), "nats://127.0.0.1:4222", env)).toEqual({
      url: { kind: "nats", servers: "127.0.0.1:4222" },
      from: "flag",
    });
    expect(workerBus(ctx("git:origin"), undefined, env)).toEqual({
      url: { kind: "git", remote: "upstream" },
      from: "environment",
    });
    expect(workerBus(ctx("git:origin"), undefined, {})).toEqual({
      url: { kind: "git", remote: "origin" },
      from: "config",
    });
    expect(workerBus(ctx(undefined), undefined, {})).toEqual({
      url: { kind: "spool" },
      from: "default",
    });
  });

  it("names ENGRAM_BUS when it is malformed", () => {
    expect(() => workerBus(ctx(undefined), undefined, { ENGRAM_BUS: "tcp://x" })).toThrow(
      UsageError,
    );
    expect(() => workerBus(ctx(undefined), undefined, { ENGRAM_BUS: "tcp://x" })).toThrow(
      /^ENGRAM_BUS: /,
    );
  });

  it("lets the repository's config name a remote by name or an allowed host, nothing else", () => {
    for (const bus of ["git:https://elsewhere.invalid/x.git", "git:../other.git"]) {
      expect(() => workerBus(ctx(bus), undefined, {})).toThrow(/not a remote of this repository/);
    }
    expect(() => workerBus(ctx("tcp://elsewhere.invalid:7070"), undefined, {})).toThrow(
      ConfigError,
    );
    expect(() => workerBus(ctx("tls://elsewhere.invalid:7070"), undefined, {})).toThrow(
      /config\/dev.toml: \[worker\] bus: names elsewhere.invalid:7070, a host the environment does not allow.*ENGRAM_BUS=tls:\/\/elsewhere.invalid:7070/,
    );
    const allowed = { ENGRAM_ALLOW_HOSTS: "tcp://elsewhere.invalid:7070" };
    expect(workerBus(ctx("tcp://elsewhere.invalid:7070"), undefined, allowed).from).toBe("config");
    // The scheme as written: plain tcp:// is not the encrypted tls://, nor a bare host.
    expect(() => workerBus(ctx("tls://elsewhere.invalid:7070"), undefined, allowed)).toThrow(
      /add tls:\/\/elsewhere\.invalid:7070 to ENGRAM_ALLOW_HOSTS/,
    );
    const bare = { ENGRAM_ALLOW_HOSTS: "elsewhere.invalid:7070" };
    expect(workerBus(ctx("tls://elsewhere.invalid:7070"), undefined, bare).from).toBe("config");
    expect(() => workerBus(ctx("tcp://elsewhere.invalid:7070"), undefined, bare)).toThrow(
      ConfigError,
    );
    expect(
      workerBus(ctx("nats://127.0.0.1:4222"), undefined, { ENGRAM_ALLOW_HOSTS: "nats://127.0.0.1" })
        .from,
    ).toBe("config");
    // A config of the user's own, outside the repository, may name anything.
    const own = ctx("tcp://elsewhere.invalid:7070", "/home/me/engram.toml");
    expect(workerBus(own, undefined, {}).url).toMatchObject({ kind: "tcp", port: 7070 });
  });
});
