import { ServiceError } from "../errors.js";
import type { Envelope } from "../schema/envelope.js";

/** A hub that refused this worker for good (its certificate): nothing is owed, nothing spooled. */
export class HubRefusedError extends ServiceError {
  constructor(readonly reason: string) {
    super(reason, "bus");
  }
}

/** A send the hub did not acknowledge in time; `unacked` are the envelopes still owed. */
export class HubUnavailableError extends ServiceError {
  constructor(
    readonly reason: string,
    readonly unacked: Envelope[],
  ) {
    super(`the hub is unavailable: ${reason}`, "bus");
  }
}
