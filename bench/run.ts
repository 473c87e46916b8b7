/**
 * `npm run bench`: every scenario in turn, progress on stderr, ONE JSON document on stdout.
 *
 *   1. ingest       100,000 envelopes into the durable buffer (in process and via the CLI)
 *   2. compaction   a 100,000-event (~50 MB) buffer compacted by one forced Director cycle
 *   3. noop_cycle   a Director cycle with nothing to do, on 10,000 engrams
 *   4. recall       ranked recall on 10,000 engrams (in process and via the CLI)
 *   5. peak_memory  peak RSS of the ingest and compaction steps, each in its own process
 *   6. reference_mcp_memory  the reference MCP memory server on the same engrams and queries
 *   7. transports   events/s and end-to-end latency of the TCP hub, NATS JetStream and git refs;
 *                   50 concurrent `worker emit --bus tcp://` acknowledged vs spooled
 *   8. github       API calls per engram pull request, against the local GitHub-compatible server
 *   9. from_git     a bootstrap from 10,000 generated commits: ingest --from-git and one run
 *  10. graph        memory_recall over MCP stdio, worker context (process wall), freshness cost
 *  11. startup      process wall of worker emit, recall, check and director status against
 *                   `node -e 0`; worker emit throughput, sequential and concurrent
 *  12. ingest_cli   director ingest FILE against the durable floor, single- and multi-threaded,
 *                   on the swarm stream and on one of long notes with secrets,
 *                   and into a buffer whose hard budget makes it compact as it goes
 *  13. graphiti     20 markdown memory files to the local Graphiti MCP stand-in, and its
 *                   health check
 *  14. sessions     one director run consolidating 100 ended sessions of 50 items (one version
 *                   each), and the process wall of worker session start, write and end
 *  15. tana         100 learnings to the Tana stand-in, its one-call-a-second limit on and off
 *  16. retrieval    labelled questions over real notes and histories: engram's `worker recall`
 *                   against BM25, R@1, R@5, MRR and tokens of the top 5 (test/fixtures/retrieval)
 *  17. dashboard    director dashboard on 10,000 engrams, and the page opened in headless chromium
 *
 * `--only NAME,NAME` runs only those scenarios (the others are reported as skipped).
 */
import { cpus, loadavg, platform, release, totalmem } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { type CompactionScenarioResult, runCompactionScenario } from "./compaction.js";
import { type DashboardScenarioResult, runDashboardScenario } from "./dashboard.js";
import { generateQueries } from "./fixtures.js";
import { type FromGitScenarioResult, runFromGitScenario } from "./from-git.js";
import { type GitHubScenarioResult, runGitHubScenario } from "./github.js";
import { type GraphScenarioResult, runGraphScenario } from "./graph.js";
import { type GraphitiScenarioResult, runGraphitiScenario } from "./graphiti.js";
import { type IngestScenarioResult, runIngestScenario } from "./ingest.js";
import { type IngestCliScenarioResult, runIngestCliScenario } from "./ingest-cli.js";
import { type NoopScenarioResult, runNoopScenario } from "./noop.js";
import { type RecallTimings, runRecallScenario } from "./recall.js";
import { type ReferenceScenarioResult, runReferenceScenario } from "./reference.js";
import { generateEngrams, initBenchRepo, ROOMY_BUDGETS, writeEngramRepo } from "./repo-fixtures.js";
import { type RetrievalScenarioResult, runRetrieval } from "./retrieval.js";
import { type RoomScenarioResult, runRoomScenario } from "./room.js";
import { runSessionsScenario, type SessionsScenarioResult } from "./sessions.js";
import { runStartupScenario, type StartupScenarioResult } from "./startup.js";
import {
  type NoopSyncResult,
  runNoopSyncScenario,
  runSyncScenario,
  type SyncScenarioResult,
} from "./sync.js";
import { runTanaScenario, type TanaScenarioResult } from "./tana.js";
import { type GitTransportScenarioResult, runGitTransportScenario } from "./transport-git.js";
import { runNatsTransportScenario } from "./transport-nats.js";
import { runTcpTransportScenario, type TcpTransportResult } from "./transport-tcp.js";
import { runTcpEmitScenario, type TcpEmitScenarioResult } from "./transport-tcp-emit.js";
import { gc, log, mb, removeDir, round, tempDir } from "./util.js";
import { runVersionSnapshotScenario, type VersionSnapshotResult } from "./versions.js";

export const PEAK_MEMORY_TARGET_MB = 300;
const EVENTS = 100_000;
const ENGRAMS = 10_000;
/** Thrown to leave the engram fixture out when no scenario needs it. */
const SKIP = new Error("skip");

type Failed = { error: string; pass: false; skipped?: true };

const ONLY = onlyScenarios(process.argv.slice(2));

function onlyScenarios(argv: readonly string[]): Set<string> | undefined {
  const at = argv.indexOf("--only");
  if (at === -1) return undefined;
  return new Set((argv[at + 1] ?? "").split(",").filter(Boolean));
}

function wanted(name: string): boolean {
  return ONLY === undefined || ONLY.has(name);
}

async function attempt<T>(name: string, run: () => Promise<T>): Promise<T | Failed> {
  if (!wanted(name)) return { error: "skipped (--only)", pass: false, skipped: true };
  try {
    return await run();
  } catch (error) {
    log(`${name} FAILED: ${(error as Error).stack ?? error}`);
    return { error: (error as Error).message, pass: false };
  }
}

function failed(value: unknown): value is Failed {
  return typeof value === "object" && value !== null && "error" in value;
}

async function main(): Promise<void> {
  const t0 = performance.now();
  const cpu = cpus();
  const machine = {
    cpus: cpu.length,
    cpu_model: cpu[0]?.model ?? "unknown",
    node: process.version,
    platform: `${platform()} ${release()}`,
    arch: process.arch,
    memory_mb: Math.round(totalmem() / (1024 * 1024)),
    load_average_at_start: loadavg().map((l) => round(l, 2)),
    load_average_at_end: [] as number[],
  };
  log(
    `machine: ${machine.cpus} CPUs (${machine.cpu_model}), node ${machine.node}, ${machine.platform}`,
  );

  const ingest = await attempt<IngestScenarioResult>("ingest", () => runIngestScenario(EVENTS));
  gc();
  const compaction = await attempt<CompactionScenarioResult>("compaction", () =>
    runCompactionScenario(EVENTS),
  );
  gc();

  const work = tempDir("engrams");
  const skipped = (): Failed => ({ error: "skipped (--only)", pass: false, skipped: true });
  let noop: NoopScenarioResult | Failed = skipped();
  let recall: RecallTimings | Failed = skipped();
  let reference: ReferenceScenarioResult | Failed = skipped();
  let graph: GraphScenarioResult | Failed = skipped();
  let noopSync: NoopSyncResult | Failed = skipped();
  let dashboard: DashboardScenarioResult | Failed = skipped();
  let fixture: Record<string, unknown> = {};
  try {
    const onEngrams = ["noop_cycle", "noop_sync", "recall", "reference_mcp_memory", "graph"];
    if (![...onEngrams, "dashboard"].some(wanted)) {
      throw SKIP;
    }
    const setup = performance.now();
    const ctx = await initBenchRepo(join(work, "repo"), ROOMY_BUDGETS);
    const engrams = generateEngrams(ENGRAMS);
    const stats = writeEngramRepo(ctx, engrams);
    fixture = {
      engrams: stats.engrams,
      st: stats.st,
      lt: stats.lt,
      engram_files_mb: mb(stats.bytes),
      catalog_mb: mb(stats.catalog_bytes),
      memory_md_bytes: stats.memory_md_bytes,
      setup_seconds: round((performance.now() - setup) / 1000),
    };
    log(
      `fixture: ${stats.engrams} engrams (${mb(stats.bytes)} MB), catalog ${mb(stats.catalog_bytes)} MB`,
    );
    const queries = generateQueries(200);

    noop = await attempt("noop_cycle", () => runNoopScenario(ctx, stats.engrams));
    gc();
    noopSync = await attempt("noop_sync", () => runNoopSyncScenario(ctx, stats.engrams));
    gc();
    recall = await attempt("recall", () => runRecallScenario(ctx, queries));
    gc();
    // The same ~50 queries on both sides: every 4th of the 200 (all query kinds appear).
    const picked = queries.map((q, i) => ({ q, i })).filter(({ i }) => i % 4 === 0);
    const timings = recall;
    reference = await attempt("reference_mcp_memory", () => {
      if (failed(timings)) throw new Error("needs the recall timings");
      return runReferenceScenario(
        work,
        engrams,
        picked.map(({ q }) => q),
        picked.map(({ i }) => timings.perQueryMs[i] as number),
      );
    });
    gc();
    graph = await attempt("graph", () =>
      runGraphScenario(
        ctx,
        picked.map(({ q }) => q),
      ),
    );
    gc();
    dashboard = await attempt("dashboard", () => runDashboardScenario(ctx, stats.engrams, work));
  } catch (error) {
    if (error !== SKIP) throw error;
  } finally {
    removeDir(work);
  }

  const startup = await attempt<StartupScenarioResult>("startup", () => runStartupScenario());
  gc();
  const ingestCli = await attempt<IngestCliScenarioResult>("ingest_cli", () =>
    runIngestCliScenario(EVENTS),
  );
  gc();
  const room = await attempt<RoomScenarioResult>("room", () => runRoomScenario(EVENTS));
  gc();
  const tcp = await attempt<TcpTransportResult>("transport_tcp", () => runTcpTransportScenario());
  gc();
  const tcpEmit = await attempt<TcpEmitScenarioResult>("transport_tcp_emit", () =>
    runTcpEmitScenario(),
  );
  const nats = await attempt("transport_nats", () => runNatsTransportScenario());
  gc();
  const gitRefs = await attempt<GitTransportScenarioResult>("transport_git", () =>
    runGitTransportScenario(),
  );
  gc();
  const github = await attempt<GitHubScenarioResult>("github", () => runGitHubScenario());
  const sync = await attempt<SyncScenarioResult>("sync", () => runSyncScenario());
  const tana = await attempt<TanaScenarioResult>("tana", () => runTanaScenario());
  gc();
  const graphiti = await attempt<GraphitiScenarioResult>("graphiti", () => runGraphitiScenario());
  gc();
  const fromGit = await attempt<FromGitScenarioResult>("from_git", () =>
    runFromGitScenario(10_000),
  );
  gc();
  const snapshots = await attempt<VersionSnapshotResult>("version_snapshot", () =>
    runVersionSnapshotScenario(),
  );

  gc();
  const sessions = await attempt<SessionsScenarioResult>("sessions", () => runSessionsScenario());
  gc();
  const retrieval = await attempt<RetrievalScenarioResult>("retrieval", () => runRetrieval());

  const rss = {
    ingest_mb: failed(ingest) ? null : ingest.max_rss_mb,
    compaction_mb: failed(compaction) ? null : compaction.max_rss_mb,
  };
  const peakValues = [rss.ingest_mb, rss.compaction_mb].filter((v): v is number => v !== null);
  const peak = {
    ...rss,
    max_mb: peakValues.length > 0 ? Math.max(...peakValues) : null,
    how: "process.resourceUsage().maxRSS of a child process (node dist/bench/step.js ingest|compaction) that runs only that step",
    target: `< ${PEAK_MEMORY_TARGET_MB} MB for each step`,
    pass: peakValues.length === 2 && peakValues.every((v) => v < PEAK_MEMORY_TARGET_MB),
  };

  const recallResult = failed(recall) ? recall : recall.result;
  const results = {
    ingest,
    compaction,
    noop_cycle: failed(noop) ? noop : { ...noop, fixture },
    recall: recallResult,
    peak_memory: peak,
    reference_mcp_memory: reference,
    graph,
    transports: { tcp, tcp_emit: tcpEmit, nats, git: gitRefs },
    github,
    sync: { notion: sync, noop: noopSync, tana },
    graphiti,
    from_git: fromGit,
    startup,
    ingest_cli: ingestCli,
    room,
    sessions,
    version_snapshot: snapshots,
    retrieval,
    dashboard,
  };
  const judged = [
    ingest,
    compaction,
    noop,
    recallResult,
    ...(ONLY === undefined ? [peak] : []),
    graph,
    tcp,
    tcpEmit,
    nats,
    gitRefs,
    github,
    sync,
    tana,
    noopSync,
    graphiti,
    fromGit,
    startup,
    ingestCli,
    room,
    sessions,
    snapshots,
    retrieval,
    dashboard,
  ].filter((r) => (r as { skipped?: unknown }).skipped !== true);
  const passes = judged.map((r) => (r as { pass?: unknown }).pass === true);
  machine.load_average_at_end = loadavg().map((l) => round(l, 2));
  const report = {
    machine,
    results,
    targets_met: passes.every(Boolean) && (!failed(reference) || reference.skipped === true),
    total_seconds: round((performance.now() - t0) / 1000, 1),
  };
  log(`done in ${report.total_seconds} s; targets met: ${report.targets_met}`);
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
}

await main();
