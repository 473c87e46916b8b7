import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * An HTTP(S) proxy on 127.0.0.1 that forwards nothing: a child started with `HTTPS_PROXY`
 * and `HTTP_PROXY` naming it reaches no outside host, and every host it tried is recorded
 * (a `CONNECT` for HTTPS, the absolute URL for HTTP). A test that runs a real host offline
 * asserts it heard nothing.
 */
export class DeadEndProxy {
  readonly tried: string[] = [];
  private server: Server | undefined;
  url = "";

  async start(): Promise<string> {
    const server = createServer((req, res) => {
      this.tried.push(`${req.method} ${req.url}`);
      res.writeHead(502, { "content-type": "text/plain" });
      res.end("offline: the test's proxy forwards nothing\n");
    });
    server.on("connect", (req, socket) => {
      this.tried.push(`CONNECT ${req.url}`);
      socket.end("HTTP/1.1 502 Bad Gateway\r\n\r\n");
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return this.url;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
