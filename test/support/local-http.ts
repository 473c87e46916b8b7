import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";

/**
 * An HTTP server on 127.0.0.1 and a free port that a stand-in can take down (open
 * connections cut, new ones refused) and bring back, as a store that stops answering does.
 */
export class LocalHttp {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private down = false;
  url = "";

  async start(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
    this.server = createServer(handle);
    this.server.on("connection", (socket) => {
      if (this.down) {
        socket.destroy();
        return;
      }
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    const address = this.server.address();
    if (address === null || typeof address === "string") throw new Error("no address");
    this.url = `http://127.0.0.1:${address.port}`;
    return this.url;
  }

  setDown(down: boolean): void {
    this.down = down;
    if (down) for (const socket of this.sockets) socket.destroy();
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}

/**
 * A model API stand-in on loopback (Anthropic's, OpenAI's, Gemini's): it reads each request's
 * whole body, then answers it as the service would (`answer`).
 */
export abstract class ModelStandIn {
  private readonly http = new LocalHttp();

  start(): Promise<string> {
    return this.http.start((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => this.answer(req, res, Buffer.concat(chunks).toString("utf8")));
    });
  }

  get url(): string {
    return this.http.url;
  }

  /** Stops it; a stand-in never started has nothing to stop. */
  async stop(): Promise<void> {
    if (this.http.url !== "") await this.http.stop();
  }

  protected abstract answer(req: IncomingMessage, res: ServerResponse, text: string): void;
}
