/**
 * Evidence that carries from one kind of project to another (issue 41, fourth round): what an
 * application's decisions change (its images, compose files, environment, stored data), what
 * any project's do (a CI job adopted, an upgrade guide, a part taken out), and the wording that
 * is a choice only where it reaches beyond code. Every message and path here is invented.
 */
import { describe, expect, it } from "vitest";
import { classifyCommit } from "../../src/core/history/classify.js";
import { DECISION_LINE } from "../../src/core/history/confidence.js";
import { type CommitChanges, pathKind, readEvidence } from "../../src/core/history/evidence.js";

const changes = (...files: string[]): CommitChanges => ({
  paths: files.map((f) => ({ status: f.slice(0, 1), path: f.slice(2) })),
});

/** The confidence of the decision read from a commit, 0 when none is read. */
const weigh = (subject: string, files: string[], body = "", lines?: [number, number]) =>
  classifyCommit({
    subject,
    body,
    changes: {
      ...changes(...files),
      ...(lines ? { added: lines[0], deleted: lines[1] } : {}),
    },
  }).decision?.confidence ?? 0;

describe("what an application is deployed and stores by", () => {
  it("reads compose files, environment templates and schema migrations", () => {
    expect(pathKind("docker-compose.yml")).toBe("runtime");
    expect(pathKind("deploy/compose.prod.yaml")).toBe("runtime");
    expect(pathKind(".env.example")).toBe("runtime");
    expect(pathKind("server/db/migrations/2026-01-04-retention.js")).toBe("migration");
    expect(pathKind("db/knex_migrations/0042-add-index.ts")).toBe("migration");
    expect(pathKind("prisma/schema.prisma")).toBe("migration");
    // A page about migrating is prose, not a schema change.
    expect(pathKind("docs/migration/v3.md")).toBe("docs");
    // A tool's own root dotfile is its configuration.
    expect(pathKind(".licensecheck.yml")).toBe("tooling");
  });

  it("makes a runtime bump a decision where what users run pins it, not where CI alone does", () => {
    const subject = "chore: bump Node.js to 22 in the container image";
    expect(weigh(subject, ["M docker/app.dockerfile"])).toBeGreaterThanOrEqual(DECISION_LINE);
    expect(weigh("Update base image to debian trixie", ["M Dockerfile"])).toBeGreaterThanOrEqual(
      DECISION_LINE,
    );
    expect(weigh(subject, ["M .github/workflows/test.yml"])).toBe(0);
    // A package named after the runtime is a dependency, and a bot's bump is upkeep.
    expect(classifyCommit({ subject: "Bump @types/node to 22.1.0", body: "" }).noise).toBe(
      "dependency",
    );
    expect(
      classifyCommit({
        subject: "Bump node to 22",
        body: "",
        author: "renovate[bot] <bot@renovate.invalid>",
      }).noise,
    ).toBe("dependency");
  });

  it("reads support ended, a default set, a setting required or renamed", () => {
    expect(weigh("Remove MySQL 5.7 support", ["M server/db.js"])).toBeGreaterThanOrEqual(
      DECISION_LINE,
    );
    expect(
      weigh("Set default retention to 30 days", ["M server/settings.js", "A db/migrations/x.js"]),
    ).toBeGreaterThanOrEqual(DECISION_LINE);
    expect(weigh("APP_SECRET is now required", ["M server/config.js"])).toBeGreaterThanOrEqual(
      DECISION_LINE,
    );
    expect(weigh("Rename DATA_DIR to APP_DATA_DIR", ["M server/config.js"])).toBeGreaterThanOrEqual(
      DECISION_LINE,
    );
    expect(weigh("Swap bcrypt for argon2", ["M server/auth.js"])).toBeGreaterThanOrEqual(
      DECISION_LINE,
    );
    // Without a name users set, a rename over code is a refactor.
    expect(weigh("Rename the data folder helper to dataRoot", ["M server/config.js"])).toBe(0);
  });

  it("reads a part of the product taken out: source files deleted, stored data or screens changed", () => {
    const subject = "feat: remove the legacy notification importer";
    const files = ["D src/importer/legacy.js", "M src/importer/index.js", "M src/lang/en.json"];
    expect(weigh(subject, files, "", [6, 410])).toBeGreaterThanOrEqual(DECISION_LINE);
    // The same words over a rework (as much added as deleted), or with nothing deleted: none.
    expect(weigh(subject, files, "", [380, 410])).toBe(0);
    expect(weigh(subject, ["M src/importer/index.js", "M src/lang/en.json"], "", [6, 410])).toBe(0);
  });

  it("reads a choice for every install in its image or compose file", () => {
    expect(weigh("Use tini as the container's init", ["M Dockerfile"])).toBeGreaterThanOrEqual(
      DECISION_LINE,
    );
    expect(weigh("Drop armv7 from the image builds", ["M docker/builder.dockerfile"])).toBe(0.7);
    expect(weigh("Only listen on localhost", ["M docker-compose.yml"])).toBe(0.7);
    // The same words over the application's code are how it works, not a choice for installs.
    expect(weigh("Use tini as the container's init", ["M server/index.js"])).toBe(0);
  });
});

describe("what any project's decisions change", () => {
  it("sees a CI workflow adopted or dropped, not one renamed", () => {
    expect(readEvidence(changes("A .github/workflows/audit.yml"))?.workflowSetUpOrDropped).toBe(
      true,
    );
    expect(readEvidence(changes("D .github/workflows/old.yml"))?.workflowSetUpOrDropped).toBe(true);
    const renamed = readEvidence(
      changes("D .github/workflows/release.yml", "A .github/workflows/publish.yml"),
    );
    expect(renamed?.workflowSetUpOrDropped).toBe(false);
    expect(
      weigh("Add licence checks", ["A .github/workflows/licences.yml", "A .licensecheck.yml"]),
    ).toBe(0.65);
    expect(weigh("Remove the nightly build", ["D .github/workflows/nightly.yml"])).toBe(0.7);
  });

  it("reads a library adopted and announced, and a change with an upgrade guide", () => {
    const installed = ["M package.json", "M package-lock.json", "M src/http.ts"];
    expect(weigh("Use undici for HTTP requests", [...installed, "M CHANGELOG.md"])).toBe(0.7);
    expect(weigh("Use undici for HTTP requests", installed)).toBe(0.55);
    const guide = ["M src/body.ts", "M docs/api.md", "M docs/upgrading-to-v5.md"];
    expect(readEvidence(changes(...guide))?.upgradeGuide).toBe(true);
    expect(weigh("Use Uint8Array for binary bodies", guide)).toBe(0.7);
    expect(weigh("Use Uint8Array for binary bodies", ["M src/body.ts", "M docs/api.md"])).toBe(0);
  });

  it("reads a platform the project starts testing on", () => {
    expect(weigh("Run the tests on macOS too", ["M .github/workflows/ci.yml"])).toBe(0.7);
    expect(weigh("Run the tests on macOS too", ["M scripts/test.sh"])).toBe(0);
  });

  it("reads breaking changes marked as people mark them", () => {
    for (const subject of [
      "💥 Drop the v1 API",
      "[BREAKING] Drop the v1 API",
      "Drop the v1 API (breaking)",
    ]) {
      expect(classifyCommit({ subject, body: "" }).breaking, subject).toBe(true);
    }
    const template = (box: string) =>
      `Reworks the settings page.\n\n## Type of change\n- [ ] Bug fix\n- ${box} Breaking change (existing installs must act)\n`;
    expect(classifyCommit({ subject: "Rework settings", body: template("[x]") }).breaking).toBe(
      true,
    );
    expect(classifyCommit({ subject: "Rework settings", body: template("[ ]") }).breaking).toBe(
      false,
    );
  });

  it("proposes wording that is a choice only where it reaches beyond code", () => {
    const code = ["M src/help.ts", "M test/help.test.ts"];
    expect(weigh("Help should not list hidden commands", code)).toBeLessThan(DECISION_LINE);
    expect(weigh("Change the error message to name the file", code)).toBeLessThan(DECISION_LINE);
    expect(weigh("Stop printing the banner twice", code)).toBeLessThan(DECISION_LINE);
    // Over CI or the docs the same wording records a choice; a default is one over code too.
    expect(
      weigh("Coverage should not count vendored code", ["M .github/workflows/ci.yml"]),
    ).toBeGreaterThanOrEqual(DECISION_LINE);
    expect(
      weigh("Change the release branch to main", ["M .github/workflows/release.yml"]),
    ).toBeGreaterThanOrEqual(DECISION_LINE);
    expect(weigh("Change the default port to 3001", ["M src/server.ts"])).toBeGreaterThanOrEqual(
      DECISION_LINE,
    );
  });
});
