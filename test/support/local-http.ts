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
