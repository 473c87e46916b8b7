import { describe, expect, it } from "vitest";
import {
  destination,
  notionAccess,
  type Trust,
  tanaAccess,
  tokenVariable,
} from "../../../src/core/trust/destinations.js";
import { headBranchProblem } from "../../../src/core/trust/engram-branch.js";
import { foldersOutside, securityChanges } from "../../../src/core/trust/security-keys.js";
import { defaultConfig } from "../../../src/schema/config.js";

const trust = (env: Record<string, string> = {}, userConfig = false): Trust => ({
  env,
  userConfig,
  file: "config/dev.toml",
});

describe("destinations", () => {
  it("lets the environment win, and the config name only allowed hosts or the default's origin", () => {
    const evil = "http://127.0.0.1:4567";
    expect(destination("notion", evil, trust({ ENGRAM_NOTION_URL: "https://n.example" }))).toEqual({
      url: "https://n.example",
      from: "environment",
    });
    expect(() => destination("notion", evil, trust())).toThrow(/ENGRAM_ALLOW_HOSTS/);
    expect(
      destination("notion", evil, trust({ ENGRAM_ALLOW_HOSTS: "http://127.0.0.1:*" }))?.from,
    ).toBe("config");
    expect(
      destination("notion", evil, trust({ ENGRAM_ALLOW_HOSTS: "x, http://127.0.0.1:4567" }))?.url,
    ).toBe(evil);
    expect(() =>
      destination("notion", evil, trust({ ENGRAM_ALLOW_HOSTS: "127.0.0.1:1" })),
    ).toThrow();
    expect(destination("notion", "https://api.notion.com/v9", trust())?.from).toBe("config");
    expect(destination("notion", evil, trust({}, true))?.from).toBe("config");
    expect(destination("tana-local", undefined, trust())).toBeUndefined();
  });

  it("matches an allowed host by scheme and port as the user wrote it (https by default)", () => {
    const allows = (url: string, hosts: string) => {
      try {
        return destination("notion", url, trust({ ENGRAM_ALLOW_HOSTS: hosts }))?.from === "config";
      } catch (error) {
        if (/ENGRAM_ALLOW_HOSTS: ".*" is not/.test(String(error))) throw error;
        return false;
      }
    };
    // An https host is not allowed on plain http, nor on another port.
    expect(allows("https://example.com/v1", "example.com")).toBe(true);
    expect(allows("http://example.com/v1", "example.com")).toBe(false);
    expect(allows("https://example.com:8443/v1", "example.com")).toBe(false);
    expect(allows("http://127.0.0.1:4567", "127.0.0.1:4567")).toBe(false);
    // The default port, written or not, is the same port.
    expect(allows("https://example.com", "example.com:443")).toBe(true);
    expect(allows("https://example.com:443", "https://example.com")).toBe(true);
    expect(allows("http://example.com", "http://example.com:80")).toBe(true);
    // A scheme written means exactly that scheme and port.
    expect(allows("http://x.test:8080/mcp/", "http://x.test:8080")).toBe(true);
    expect(allows("https://x.test:8080/mcp/", "http://x.test:8080")).toBe(false);
    expect(allows("http://x.test:8081/mcp/", "http://x.test:8080")).toBe(false);
    expect(allows("http://x.test:9/", "http://x.test:*")).toBe(true);
    expect(allows("http://[::1]:9/", "http://[::1]:9")).toBe(true);
    expect(() => allows("https://example.com", "exa mple.com")).toThrow(
      /ENGRAM_ALLOW_HOSTS: "exa mple.com" is not HOST/,
    );
    expect(() => allows("https://example.com", "https://example.com/path")).toThrow(/is not HOST/);
    // The refusal names the entry that would allow it.
    expect(() => destination("notion", "http://127.0.0.1:4567", trust())).toThrow(
      /add http:\/\/127\.0\.0\.1:4567 to ENGRAM_ALLOW_HOSTS/,
    );
  });

  it("reads a token only from the service's own variable unless the environment allows another", () => {
    expect(tokenVariable("notion", "NOTION_TOKEN", trust())).toBe("NOTION_TOKEN");
    expect(() => tokenVariable("notion", "AWS_SECRET_ACCESS_KEY", trust())).toThrow(
      /\[sync\.notion\] token_env: names the variable AWS_SECRET_ACCESS_KEY/,
    );
    expect(
      tokenVariable("notion", "MY_NOTION", trust({ ENGRAM_ALLOW_TOKEN_VARS: "MY_NOTION" })),
    ).toBe("MY_NOTION");
    const config = defaultConfig();
    const env = { NOTION_TOKEN: " n ", TANA_TOKEN: "t", AWS_SECRET_ACCESS_KEY: "a" };
    expect(notionAccess(config.sync.notion, trust(env))).toMatchObject({
      url: "https://api.notion.com",
      tokenVar: "NOTION_TOKEN",
      token: "n",
    });
    expect(tanaAccess(config.sync.tana, trust(env))).toMatchObject({
      input: { tokenVar: "TANA_TOKEN", token: "t" },
      local: undefined,
    });
  });
});

describe("branches and security keys", () => {
  it("allows only an engram/ head branch other than the base", () => {
    expect(headBranchProblem("engram/memory", "main")).toBeUndefined();
    expect(headBranchProblem("main", "main")).toMatch(/is the base branch main/);
    expect(headBranchProblem("engram/x", "engram/x")).toMatch(/base branch/);
    expect(headBranchProblem("feature/x", "main")).toMatch(/not an engram\/\.\.\. branch/);
    expect(headBranchProblem("engram/", "main")).toBeDefined();
  });

  it("lists changed security keys and folders leaving the repository", () => {
    const before = defaultConfig();
    const after = defaultConfig();
    after.sync.notion.base_url = "http://127.0.0.1:9";
    after.memory.memory_md_max_items = 5;
    after.sources.markdown.folders = [
      { path: "notes", globs: ["**/*.md"], kind: "learning" },
      { path: "notes/../../up", globs: ["**/*.md"], kind: "learning" },
      { path: "/home/me", globs: ["**/*.md"], kind: "learning" },
    ];
    expect(securityChanges(before, after).map((c) => c.key)).toEqual([
      "sync.notion.base_url",
      "sources.markdown.folders",
    ]);
    expect(foldersOutside(after)).toEqual(["notes/../../up", "/home/me"]);
  });

  it("reports every key that decides where memory lands or what is redacted", () => {
    const before = defaultConfig();
    const after = defaultConfig();
    after.redaction.patterns = ["x{3}"];
    after.sync.notion.databases = { episodes: "their-episodes" };
    after.sync.notion.parent_page_id = "their-page";
    after.sync.graphiti.groups = { ...after.sync.graphiti.groups, engram: "theirs" };
    after.sync.tana.target_node_id = "LIBRARY";
    after.sync.tana.workspace_id = "their-workspace";
    after.memory.memory_md_update_cadence = "hybrid";
    expect(securityChanges(before, after).map((c) => c.key)).toEqual([
      "sync.notion.parent_page_id",
      "sync.notion.databases",
      "sync.graphiti.groups",
      "sync.tana.target_node_id",
      "sync.tana.workspace_id",
      "redaction.patterns",
      "memory.memory_md_update_cadence",
    ]);
  });
});
