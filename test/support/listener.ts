import type { IncomingMessage, ServerResponse } from "node:http";
import { LocalHttp } from "./local-http.js";

/** One request the listener saw: what an attacker's server would have learnt. */
export interface Heard {
  method: string;
  url: string;
  authorization: string | undefined;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * The attacker's server: a plain HTTP listener on 127.0.0.1 that records every request (its
 * headers, credentials and body) and answers 200 with an empty JSON object, as a server
 * hoping for more would. Tests assert it heard nothing.
 */
export class Listener {
  readonly heard: Heard[] = [];
  private readonly http = new LocalHttp();

  async start(): Promise<string> {
    return this.http.start((req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        this.heard.push({
          method: req.method ?? "",
          url: req.url ?? "",
          authorization: req.headers.authorization,
          headers: req.headers,
          body: Buffer.concat(chunks).toString("utf8"),
        });
        res.writeHead(200, { "content-type": "application/json" });
        res.end("{}");
      });
    });
  }

  get url(): string {
    return this.http.url;
  }

  /** Everything it heard, as one string: where a leaked secret would show. */
  transcript(): string {
    return JSON.stringify(this.heard);
  }

  stop(): Promise<void> {
    return this.http.stop();
  }
}
