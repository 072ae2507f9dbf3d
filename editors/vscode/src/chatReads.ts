/**
 * When the chat reads the transcript again after the agent's answer ended. The tree's rows of a
 * change are asked for as soon as the server announces it, and the chat reads the transcript
 * once they are drawn; the server answers one session's requests in order, so a transcript asked
 * for at the answer's end would go before the rows of the answer's last entry (whose change the
 * server announces just after the end) and hold the tree behind a long conversation, and it
 * would be a second read of the same answer. So the end owes a read that the next one serves: a
 * change coming within `graceMs` hands it to the read after its rows; without one it goes when
 * `graceMs` ends; an end while a read is on its way joins that read (its answer is then kept with
 * every message finished by now, as a read sent after the end would be).
 */

/** How long an answer's end waits for the change of its last entry (ms). */
export const END_GRACE_MS = 50;
/** How long, with the rows of a change on their way, the end's read waits for them (ms). */
export const END_FALLBACK_MS = 2000;

export interface Timers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

const realTimers: Timers = {
  set: (fn, ms) => setTimeout(fn, ms),
  clear: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

export class ChatReads {
  private inflight = 0;
  private againEnd = false;
  private rowsOwed = false;
  private endTimer: unknown;

  constructor(
    /** Reads the transcript (the chat's rebuild, which calls `started`). */
    private readonly read: () => void,
    private readonly timers: Timers = realTimers,
    private readonly graceMs = END_GRACE_MS,
    private readonly fallbackMs = END_FALLBACK_MS,
  ) {}

  /** The server announced a change of the chat's session: its rows are on their way. */
  changed(): void {
    this.rowsOwed = true;
    if (this.endTimer !== undefined) this.arm(this.fallbackMs);
  }

  /** The agent's answer ended. */
  ended(): void {
    if (this.inflight > 0) {
      this.againEnd = true;
      return;
    }
    if (this.endTimer === undefined) this.arm(this.rowsOwed ? this.fallbackMs : this.graceMs);
  }

  /**
   * A read starts (for whatever reason): it serves an owed end. Call the function returned when
   * its answer arrives: true when the answer ended meanwhile, so the finished messages are to be
   * taken as they are now.
   */
  started(): () => boolean {
    this.disarm();
    this.rowsOwed = false;
    this.inflight++;
    let done = false;
    return () => {
      if (done) return false;
      done = true;
      this.inflight--;
      if (this.inflight > 0 || !this.againEnd) return false;
      this.againEnd = false;
      return true;
    };
  }

  /** Whether an end's read is owed, not yet sent (tests). */
  get owed(): boolean {
    return this.endTimer !== undefined;
  }

  dispose(): void {
    this.disarm();
  }

  private arm(ms: number): void {
    this.disarm();
    this.endTimer = this.timers.set(() => {
      this.endTimer = undefined;
      this.read();
    }, ms);
  }

  private disarm(): void {
    if (this.endTimer !== undefined) this.timers.clear(this.endTimer);
    this.endTimer = undefined;
  }
}
