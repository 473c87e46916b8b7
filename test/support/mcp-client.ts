import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { childEnv, type Env, WORKER_BIN } from "./bins.js";

/** The SDK client connected to `worker mcp` over stdio, in the repository `dir`. */
export async function stdioMcpClient(dir: string, env: Env): Promise<Client> {
  const client = new Client({ name: "engram-test", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [WORKER_BIN, "mcp", "--repo", dir],
      env: childEnv(env) as Record<string, string>,
      stderr: "pipe",
    }),
  );
  return client;
}
