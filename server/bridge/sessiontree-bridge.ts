/**
 * sessiontree bridge: lets the sessiontree language server drive a running pi or omp agent.
 *
 * One file, loaded unchanged by both agents (`pi -e FILE`, `omp -e FILE`, or from
 * `~/.pi/agent/extensions/` and `~/.omp/agent/extensions/`). It listens on a private Unix socket
 * (never a network address) and speaks newline-delimited JSON:
 *
 *   server → bridge  {"id": 1, "op": "hello", "token": "…"}   (first message; anything else closes)
 *                    {"id": 2, "op": "state" | "navigate" | "prompt" | "abort" | "branch" | "label" | "name" | "relocate", …}
 *   bridge → server  {"id": 1, "ok": true, "result": {…}}  or  {"id": 1, "ok": false, "error": {"kind", "message"}}
 *                    {"event": "…", …}                      (agent events, leaf moves, session changes)
 *
 * Where the socket is:
 *   - started by sessiontree (RPC mode): `SESSIONTREE_BRIDGE_SOCKET` and `SESSIONTREE_BRIDGE_TOKEN`
 *     name it; no discovery file is written.
 *   - started by the user (a terminal): `$XDG_RUNTIME_DIR/sessiontree/` (else
 *     `<tmpdir>/sessiontree-<uid>/`), folder 0700, socket 0600, a random token, and a discovery file
 *     `<sha256 of the session file's path, 32 hex>.json` (0600) naming the socket, the token, the
 *     agent and the session file, rewritten when the agent moves to another session file.
 *   - `SESSIONTREE_BRIDGE=off` turns the bridge off.
 *
 * Rewind points (docs/rewind.md): every user message gets the workspace's files as they were
 * before the agent acted on it, every turn-ending assistant message the files after the turn. The
 * snapshot of a user message starts when the agent emits the message (before the model is asked)
 * and every tool call waits for it in the `tool_call` hook (awaited by both agents before a tool
 * runs), so the point is exact whoever sent the prompt: the editor, `sessiontree continue` or the
 * user typing here. The store's logic is the `sessiontree` binary's: `sessiontree rewind-point
 * take` snapshots, `sessiontree rewind-point bind` records the point once the agent has written the
 * entry. The binary is `SESSIONTREE_BIN` (the server sets it for the agents it starts), else
 * `sessiontree` on PATH; `SESSIONTREE_REWIND=off` turns the points off. A snapshot that fails is
 * said once in the agent's UI and never stops the turn.
 *
 * Moving the leaf and /branch are only possible from a command handler's context in both agents,
 * so the bridge registers `/sessiontree`: running it once (the server does it over RPC; in a
 * terminal, the user types it when the editor asks) arms the bridge with that context, which stays
 * valid until the agent switches to another session.
 */

import * as childProcess from "node:child_process";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";

const PROTOCOL = 1;
const COMMAND = "sessiontree";
const ACTIVE = Symbol.for("sessiontree.bridge.active");
const HANDOFF = Symbol.for("sessiontree.bridge.handoff");

type Json = null | boolean | number | string | Json[] | { [key: string]: Json | undefined };
type Obj = { [key: string]: any };

/** An error the server sees with a kind it can act on. */
class BridgeError extends Error {
  constructor(
    readonly kind: string,
    message: string,
  ) {
    super(message);
  }
}

export default function sessiontreeBridge(pi: any): void {
  if (process.env.SESSIONTREE_BRIDGE === "off") return;
  const shared = globalThis as any;
  // Loaded twice in one runtime (installed globally and passed with -e): the first copy serves.
  if (shared[ACTIVE]) return;
  const instance = Symbol("bridge");
  shared[ACTIVE] = instance;

  const agent: "pi" | "omp" = typeof pi.registerComposerShape === "function" ? "omp" : "pi";
  const spawnedSocket = process.env.SESSIONTREE_BRIDGE_SOCKET || "";
  const token = process.env.SESSIONTREE_BRIDGE_TOKEN || crypto.randomBytes(24).toString("hex");
  const clients = new Set<net.Socket>();
  let server: net.Server | undefined;
  let socketPath = "";
  let discoveryPath = "";
  /** The latest context an event handed us (read-only use: state, abort, the session manager). */
  let ctx: Obj | undefined;
  /** A command context (arms navigate and /branch); valid until the session is replaced. */
  let commandCtx: Obj | undefined = shared[HANDOFF];
  shared[HANDOFF] = undefined;

  // ------------------------------------------------------------------ helpers

  function sessionManager(): Obj {
    const sm = (commandCtx && safe(() => commandCtx!.sessionManager)) || (ctx && ctx.sessionManager);
    if (!sm) throw new BridgeError("notReady", "the agent has not started its session yet");
    return sm;
  }

  function safe<T>(f: () => T): T | undefined {
    try {
      return f();
    } catch {
      return undefined;
    }
  }

  function sessionFile(): string | null {
    return safe(() => sessionManager().getSessionFile()) ?? null;
  }

  function busy(): boolean {
    const c = commandCtx ?? ctx;
    return c ? !safe(() => c.isIdle()) : false;
  }

  function modelName(): string | null {
    const m = safe(() => (commandCtx ?? ctx)?.model);
    return m ? `${m.provider}/${m.id}` : null;
  }

  function state(): Obj {
    const sm = safe(() => sessionManager());
    return {
      protocol: PROTOCOL,
      agent,
      pid: process.pid,
      mode: spawnedSocket ? "rpc" : "terminal",
      sessionFile: sm ? (safe(() => sm.getSessionFile()) ?? null) : null,
      sessionId: sm ? (safe(() => sm.getSessionId()) ?? null) : null,
      leafId: sm ? (safe(() => sm.getLeafId()) ?? null) : null,
      cwd: safe(() => (commandCtx ?? ctx)?.cwd) ?? process.cwd(),
      busy: busy(),
      model: modelName(),
      armed: commandCtx !== undefined && safe(() => commandCtx!.sessionManager) !== undefined,
      rewindPoints: rewind.recording(),
    };
  }

  function send(socket: net.Socket, message: Obj): void {
    if (!socket.destroyed) socket.write(`${JSON.stringify(message)}\n`);
  }

  function broadcast(message: Obj): void {
    for (const socket of clients) send(socket, message);
  }

  function armed(): Obj {
    if (commandCtx && safe(() => commandCtx!.sessionManager) !== undefined) return commandCtx;
    commandCtx = undefined;
    if (!spawnedSocket) {
      // A terminal agent: ask the user, where they look, to allow it once.
      safe(() => {
        const ui = ctx?.ui;
        if (ui && !safe(() => ui.getEditorText())) ui.setEditorText(`/${COMMAND}`);
        ui?.notify(`sessiontree wants to move this session's leaf: press Enter on /${COMMAND} to allow it`, "info");
      });
    }
    throw new BridgeError(
      "notArmed",
      spawnedSocket
        ? `the bridge is not armed yet (run /${COMMAND})`
        : `the agent in the terminal has not allowed it yet: run /${COMMAND} there (it is typed in its input; press Enter)`,
    );
  }

  function idle(): void {
    if (busy()) throw new BridgeError("agentBusy", "the agent is answering; wait for the turn to end or abort it");
  }

  function requireString(params: Obj, key: string): string {
    const value = params[key];
    if (typeof value !== "string" || value === "") throw new BridgeError("invalidParams", `${key} must be a non-empty string`);
    return value;
  }

  // ------------------------------------------------------------------ operations

  const ops: Record<string, (params: Obj) => Promise<Obj> | Obj> = {
    state: () => state(),

    async navigate(params) {
      const c = armed();
      idle();
      const targetId = requireString(params, "targetId");
      const sm = sessionManager();
      if (!sm.getEntry(targetId)) throw new BridgeError("entryNotFound", `entry ${targetId} is not in the agent's session`);
      const oldLeafId = sm.getLeafId() ?? null;
      const options: Obj = { summarize: params.summarize === true };
      if (typeof params.customInstructions === "string" && params.customInstructions !== "") {
        if (agent === "omp") {
          throw new BridgeError("unsupported", "omp's extension API does not pass custom summary instructions");
        }
        options.customInstructions = params.customInstructions;
        options.replaceInstructions = params.replaceInstructions === true;
      }
      if (typeof params.label === "string" && agent === "pi") options.label = params.label;
      const result = await c.navigateTree(targetId, options);
      const leafId = sessionManager().getLeafId() ?? null;
      const leaf = leafId ? sessionManager().getEntry(leafId) : undefined;
      return {
        cancelled: result?.cancelled === true,
        oldLeafId,
        leafId,
        summaryEntryId: options.summarize && leaf && leaf.type === "branch_summary" && leafId !== oldLeafId ? leafId : null,
      };
    },

    async prompt(params) {
      const text = requireString(params, "text");
      const deliverAs = params.deliverAs;
      if (deliverAs !== undefined && deliverAs !== "steer" && deliverAs !== "followUp") {
        throw new BridgeError("invalidParams", "deliverAs must be steer or followUp");
      }
      if (!deliverAs) idle();
      pi.sendUserMessage(text, deliverAs ? { deliverAs } : undefined);
      return { accepted: true };
    },

    abort() {
      const wasBusy = busy();
      const c = commandCtx ?? ctx;
      if (!c) throw new BridgeError("notReady", "the agent has not started its session yet");
      c.abort();
      return { aborted: wasBusy };
    },

    async branch(params) {
      const c = armed();
      idle();
      const entryId = requireString(params, "entryId");
      if (!sessionManager().getEntry(entryId)) throw new BridgeError("entryNotFound", `entry ${entryId} is not in the agent's session`);
      const before = sessionFile();
      let result: Obj;
      if (agent === "omp") {
        result = await c.branch(entryId);
      } else {
        result = await c.fork(entryId, {
          position: "before",
          // The replacement session's extension instance takes over the armed context.
          withSession: async (next: Obj) => {
            shared[HANDOFF] = next;
          },
        });
      }
      return { cancelled: result?.cancelled === true, oldSessionFile: before, sessionFile: safe(() => sessionFile()) ?? null };
    },

    /**
     * A session whose file is not written yet (pi writes a new or forked session's file only with
     * its first assistant message): the server starts pi on a private copy of its header and
     * entries (`from`), which pi loads as any session, and this moves pi's session to the path it
     * belongs at (`to`), as pi's own fork leaves its manager: nothing flushed, so pi writes the
     * header and every entry there itself with its first assistant message, then appends. Only
     * while pi has written nothing, with `to` still absent and every line of the copy one that pi
     * writes back byte for byte.
     */
    relocate(params) {
      if (agent !== "pi") throw new BridgeError("unsupported", "only pi defers writing a session's file");
      idle();
      const from = path.resolve(requireString(params, "from"));
      const to = path.resolve(requireString(params, "to"));
      const sm = sessionManager();
      const current = safe(() => sm.getSessionFile());
      if (typeof current !== "string" || path.resolve(current) !== from) {
        throw new BridgeError("invalidParams", `the agent's session file is ${String(current)}, not ${from}`);
      }
      if (fs.existsSync(to)) throw new BridgeError("fileExists", `${to} exists already: the agent was not moved there`);
      if (typeof sm.flushed !== "boolean" || !Array.isArray(sm.fileEntries)) {
        throw new BridgeError("unsupported", "this pi's session manager cannot be moved to another file");
      }
      const entries: Obj[] = sm.fileEntries;
      if (entries.some((e) => e?.type === "message" && e.message?.role === "assistant")) {
        throw new BridgeError("agentBusy", "the agent has answered in this session already");
      }
      // pi writes JSON.stringify of each entry: the copy must be exactly that, and unchanged.
      const copy = fs.readFileSync(from, "utf8");
      const count = copy.split("\n").length - 1;
      const loaded = entries.slice(0, count).map((e) => `${JSON.stringify(e)}\n`).join("");
      if (loaded !== copy) {
        throw new BridgeError("notExact", "pi would not write this session's lines byte for byte as they are");
      }
      sm.sessionFile = to;
      sm.sessionDir = path.dirname(to);
      sm.flushed = false;
      // pi, loading a session without messages, records its model and thinking level after the
      // copy's last entry (its startup rule): the leaf the copy ended on says where those hang.
      return { ...state(), loadedLeafId: count > 1 ? (entries[count - 1]?.id ?? null) : null };
    },

    label(params) {
      const entryId = requireString(params, "entryId");
      const sm = sessionManager();
      if (!sm.getEntry(entryId)) throw new BridgeError("entryNotFound", `entry ${entryId} is not in the agent's session`);
      const label = typeof params.label === "string" && params.label.trim() !== "" ? params.label : undefined;
      const id = sm.appendLabelChange(entryId, label);
      return { labelEntryId: typeof id === "string" ? id : (sm.getLeafId() ?? null) };
    },

    async name(params) {
      const name = typeof params.name === "string" ? params.name : "";
      await pi.setSessionName(name);
      return { name: safe(() => pi.getSessionName()) ?? null };
    },
  };

  async function handle(socket: net.Socket, authed: { ok: boolean }, line: string): Promise<void> {
    let message: Obj;
    try {
      message = JSON.parse(line);
    } catch {
      send(socket, { id: null, ok: false, error: { kind: "invalidMessage", message: "not JSON" } });
      return;
    }
    const id = message.id ?? null;
    if (!authed.ok) {
      if (message.op !== "hello" || message.token !== token) {
        send(socket, { id, ok: false, error: { kind: "unauthorized", message: "hello with the token first" } });
        socket.end();
        return;
      }
      authed.ok = true;
      clients.add(socket);
      send(socket, { id, ok: true, result: state() });
      return;
    }
    const op = ops[message.op];
    if (!op) {
      send(socket, { id, ok: false, error: { kind: "unknownOp", message: `no operation ${String(message.op)}` } });
      return;
    }
    try {
      const result = await op(message);
      send(socket, { id, ok: true, result });
    } catch (error: any) {
      const kind = error instanceof BridgeError ? error.kind : "agentError";
      send(socket, { id, ok: false, error: { kind, message: String(error?.message ?? error) } });
    }
  }

  // ------------------------------------------------------------------ the socket

  function runtimeDir(): string {
    const base = process.env.XDG_RUNTIME_DIR
      ? path.join(process.env.XDG_RUNTIME_DIR, "sessiontree")
      : path.join(os.tmpdir(), `sessiontree-${typeof process.getuid === "function" ? process.getuid() : "user"}`);
    fs.mkdirSync(base, { recursive: true, mode: 0o700 });
    fs.chmodSync(base, 0o700);
    return base;
  }

  function discoveryFileFor(file: string): string {
    const key = crypto.createHash("sha256").update(path.resolve(file)).digest("hex").slice(0, 32);
    return path.join(runtimeDir(), `${key}.json`);
  }

  function writeDiscovery(): void {
    if (spawnedSocket) return;
    const file = sessionFile();
    const next = file ? discoveryFileFor(file) : "";
    if (discoveryPath && discoveryPath !== next) safe(() => fs.unlinkSync(discoveryPath));
    discoveryPath = next;
    if (!next) return;
    const body = JSON.stringify({ protocol: PROTOCOL, agent, pid: process.pid, socket: socketPath, token, sessionFile: path.resolve(file!) });
    const temp = `${next}.${process.pid}.tmp`;
    fs.writeFileSync(temp, body, { mode: 0o600 });
    fs.renameSync(temp, next);
  }

  function listen(): void {
    if (server) return;
    socketPath = spawnedSocket || path.join(runtimeDir(), `b-${process.pid}.sock`);
    safe(() => fs.unlinkSync(socketPath));
    server = net.createServer((socket) => {
      socket.setEncoding("utf8");
      const authed = { ok: false };
      let buffered = "";
      // Requests of one connection are answered in order.
      let queue = Promise.resolve();
      socket.on("data", (chunk: string) => {
        buffered += chunk;
        let newline: number;
        while ((newline = buffered.indexOf("\n")) >= 0) {
          const line = buffered.slice(0, newline).replace(/\r$/, "");
          buffered = buffered.slice(newline + 1);
          if (line.trim() === "") continue;
          queue = queue.then(() => handle(socket, authed, line));
        }
      });
      socket.on("close", () => clients.delete(socket));
      socket.on("error", () => clients.delete(socket));
    });
    const previousMask = process.umask(0o177);
    try {
      server.listen(socketPath, () => {
        safe(() => fs.chmodSync(socketPath, 0o600));
      });
    } finally {
      process.umask(previousMask);
    }
    server.unref();
    server.on("error", (error) => {
      safe(() => ctx?.ui?.notify(`sessiontree bridge: ${String(error)}`, "error"));
    });
  }

  function stop(): void {
    for (const socket of clients) socket.destroy();
    clients.clear();
    safe(() => server?.close());
    server = undefined;
    if (discoveryPath) safe(() => fs.unlinkSync(discoveryPath));
    discoveryPath = "";
    if (!spawnedSocket && socketPath) safe(() => fs.unlinkSync(socketPath));
  }

  process.once("exit", stop);

  // ------------------------------------------------------------------ rewind points

  const rewind = rewindPoints({
    sessionManager: () => safe(() => sessionManager()),
    cwd: () => safe(() => (commandCtx ?? ctx)?.cwd) ?? process.cwd(),
    broadcast,
    notify: (text) => safe(() => ctx?.ui?.notify(text, "warning")),
    statusChanged: () => broadcast({ event: "status", state: state() }),
  });
  // Every tool call waits for the snapshot of the user message it answers (never longer than the
  // agent lets a hook run), so the point holds the files before the agent acted.
  pi.on("tool_call", async () => {
    await rewind.beforeTools();
    return undefined;
  });

  // ------------------------------------------------------------------ the command

  pi.registerCommand(COMMAND, {
    description: "Let sessiontree (the editor) drive this session: move its leaf, /branch, prompt",
    handler: async (_args: string, commandContext: Obj) => {
      commandCtx = commandContext;
      ctx = commandContext;
      broadcast({ event: "armed", state: state() });
      safe(() => {
        if (!spawnedSocket) commandContext.ui?.notify("sessiontree may now drive this session", "info");
      });
    },
  });

  // ------------------------------------------------------------------ events

  function on(name: string, handler: (event: Obj) => void): void {
    pi.on(name, (event: Obj, eventCtx: Obj) => {
      if (eventCtx) ctx = eventCtx;
      try {
        handler(event ?? {});
      } catch {
        // An event the bridge cannot forward never disturbs the agent.
      }
    });
  }

  const sessionStarted = () => {
    try {
      listen();
      writeDiscovery();
    } catch (error) {
      // A folder that cannot be made private (or a socket that cannot be made): no bridge, said.
      safe(() => ctx?.ui?.notify(`sessiontree bridge: ${String(error)}`, "error"));
      return;
    }
    broadcast({ event: "session", state: state() });
  };
  on("session_start", sessionStarted);
  on("session_switch", sessionStarted);
  on("session_branch", sessionStarted);
  pi.on("session_shutdown", async (_event: Obj, eventCtx: Obj) => {
    if (eventCtx) ctx = eventCtx;
    // The last turn's point is recorded before the agent goes (omp gives this hook 2 s).
    await rewind.settle(1500);
    broadcast({ event: "shutdown" });
    stop();
    if (shared[ACTIVE] === instance) shared[ACTIVE] = undefined;
  });
  on("session_tree", (event) => {
    broadcast({
      event: "leaf",
      leafId: event.newLeafId ?? null,
      oldLeafId: event.oldLeafId ?? null,
      summaryEntryId: event.summaryEntry?.id ?? null,
      fromExtension: event.fromExtension === true,
    });
  });
  on("model_select", () => broadcast({ event: "status", state: state() }));
  on("agent_start", () => broadcast({ event: "agentStart" }));
  on("agent_end", () => broadcast({ event: "agentEnd" }));
  on("turn_start", () => broadcast({ event: "turnStart" }));
  on("turn_end", () => broadcast({ event: "turnEnd" }));
  // The answer's text is sent as what each of its blocks gained since last time, read from the
  // message itself: an agent that hands updates to extensions out of order (omp does) still
  // gives the editor the text in order, and the deltas joined equal the final message.
  let streaming: { key: unknown; sent: string[]; ended: boolean } | undefined;
  const keyOf = (message: Obj | undefined) => message?.timestamp ?? message;

  function flush(message: Obj | undefined): void {
    if (!streaming || !Array.isArray(message?.content)) return;
    message!.content.forEach((block: Obj, index: number) => {
      const kind = block?.type === "text" ? "text" : block?.type === "thinking" ? "thinking" : undefined;
      if (!kind) return;
      const full = String((kind === "text" ? block.text : block.thinking) ?? "");
      const have = streaming!.sent[index] ?? "";
      if (full.length <= have.length || !full.startsWith(have)) return;
      let piece = full.slice(have.length);
      // Never end a delta between the two halves of a surrogate pair.
      const last = piece.charCodeAt(piece.length - 1);
      if (last >= 0xd800 && last <= 0xdbff) piece = piece.slice(0, -1);
      if (piece === "") return;
      streaming!.sent[index] = have + piece;
      broadcast({ event: "delta", kind, index, text: piece });
    });
  }

  on("message_start", (event) => {
    if (event.message?.role === "user") rewind.userMessage(event.message);
    if (event.message?.role === "assistant") streaming = { key: keyOf(event.message), sent: [], ended: false };
    broadcast({ event: "messageStart", role: event.message?.role ?? null });
  });
  on("message_update", (event) => {
    if (streaming && !streaming.ended && keyOf(event.message) === streaming.key) flush(event.message);
    const update = event.assistantMessageEvent ?? {};
    if (update.type === "error") {
      broadcast({ event: "error", reason: update.reason ?? "error", message: update.error?.errorMessage ?? null });
    }
  });
  on("message_end", (event) => {
    if (event.message?.role === "assistant" && streaming && !streaming.ended) {
      flush(event.message);
      streaming.ended = true;
    }
    if (event.message?.role === "assistant" && event.message.stopReason !== "toolUse") rewind.turnEnded(event.message);
    broadcast({ event: "messageEnd", message: (event.message ?? null) as Json });
  });
  on("tool_execution_start", (event) =>
    broadcast({ event: "toolStart", toolCallId: event.toolCallId ?? null, toolName: event.toolName ?? null, args: event.args ?? null }),
  );
  on("tool_execution_update", (event) =>
    broadcast({ event: "toolUpdate", toolCallId: event.toolCallId ?? null, partialResult: event.partialResult ?? null }),
  );
  on("tool_execution_end", (event) =>
    broadcast({
      event: "toolEnd",
      toolCallId: event.toolCallId ?? null,
      toolName: event.toolName ?? null,
      result: event.result ?? null,
      isError: event.isError === true,
    }),
  );
}

// -------------------------------------------------------------------- rewind points

/** What the rewind points need of the bridge. */
interface RewindHost {
  sessionManager(): Obj | undefined;
  cwd(): string;
  broadcast(message: Obj): void;
  notify(text: string): void;
  statusChanged(): void;
}

/** A boundary whose snapshot is taken or being taken. */
interface Boundary {
  moment: "before" | "after";
  role: string;
  timestamp: unknown;
  sm: Obj;
  cwd: string;
  sessionFile: string | null;
  sessionId: string | null;
  /** The snapshot is done (or failed). */
  done: boolean;
  /** Tools went on before it was done: the point is approximate. */
  waitedOut: boolean;
  taken: Promise<unknown>;
}

/** How long a tool waits for its user message's snapshot (omp cancels a hook after 30 s). */
const TOOL_WAIT_MS = 20_000;
/** How long a point waits for the agent to write its entry. */
const BIND_WAIT_MS = 60_000;

/**
 * Rewind points at the agent's own boundaries, recorded by the `sessiontree` binary. Snapshots run
 * one after another (a turn's end before the next message's start); binding waits for the entry.
 */
function rewindPoints(host: RewindHost) {
  const enabled = process.env.SESSIONTREE_REWIND !== "off";
  const binary = process.env.SESSIONTREE_BIN || "sessiontree";
  let chain: Promise<unknown> = Promise.resolve();
  let lastBefore: Boundary | undefined;
  const work = new Set<Promise<unknown>>();
  /** Whether the binary could be run at the last attempt. */
  let runnable = enabled;
  let lastProblem = "";

  function sessiontree(args: string[]): Promise<Obj> {
    return new Promise((resolve, reject) => {
      childProcess.execFile(binary, args, { timeout: 120_000, maxBuffer: 1 << 20 }, (error: any, stdout: any, stderr: any) => {
        let answer: Obj | undefined;
        try {
          answer = JSON.parse(String(stdout ?? "").trim().split("\n").pop() || "null");
        } catch {
          answer = undefined;
        }
        const started = !error || typeof error.code === "number";
        setRunnable(started);
        if (!error && answer && !answer.error) return resolve(answer);
        if (answer?.error) return reject(new BridgeError(String(answer.error.kind), String(answer.error.message)));
        const why = error?.code === "ENOENT" ? `${binary} was not found (put sessiontree on PATH or set SESSIONTREE_BIN)` : String(stderr || error?.message || error).trim();
        reject(new BridgeError(started ? "failed" : "notFound", why));
      });
    });
  }

  function setRunnable(now: boolean): void {
    if (now === runnable) return;
    runnable = now;
    host.statusChanged();
  }

  function report(error: any): void {
    if (error instanceof BridgeError && error.kind === "notARepository") return; // only git workspaces have points
    const problem = `rewind point not recorded: ${String(error?.message ?? error)}`;
    if (problem === lastProblem) return;
    lastProblem = problem;
    host.notify(`sessiontree: ${problem}`);
    host.broadcast({ event: "rewindProblem", message: problem });
  }

  function track<T>(promise: Promise<T>): Promise<T> {
    work.add(promise);
    void promise.finally(() => work.delete(promise)).catch(() => {});
    return promise;
  }

  /** Starts the snapshot of a boundary (after the ones already started). */
  function start(message: Obj, moment: "before" | "after"): Boundary | undefined {
    if (!enabled) return undefined;
    const sm = host.sessionManager();
    if (!sm) return undefined;
    const call = <T>(f: () => T): T | null => {
      try {
        return f() ?? null;
      } catch {
        return null;
      }
    };
    const boundary: Boundary = {
      moment,
      role: String(message.role),
      timestamp: message.timestamp,
      sm,
      cwd: call(() => sm.getCwd()) ?? host.cwd(),
      sessionFile: call(() => sm.getSessionFile()),
      sessionId: call(() => sm.getSessionId()),
      done: false,
      waitedOut: false,
      taken: Promise.resolve(),
    };
    const args = ["rewind-point", "take", "--cwd", boundary.cwd];
    if (boundary.sessionFile) args.push("--session-file", boundary.sessionFile);
    const taken = chain.then(() => sessiontree(args));
    chain = taken.catch(() => undefined);
    boundary.taken = taken.then(
      () => undefined,
      () => undefined,
    );
    track(
      taken
        .then(
          (answer) => {
            boundary.done = true;
            return bind(boundary, answer, !boundary.waitedOut);
          },
          (error) => {
            boundary.done = true;
            throw error;
          },
        )
        .catch(report),
    );
    return boundary;
  }

  /** The entry the agent wrote for the boundary's message, once it has. */
  function entryOf(boundary: Boundary): Obj | undefined {
    const sm = boundary.sm;
    let entry: Obj | undefined;
    try {
      entry = sm.getLeafEntry();
    } catch {
      return undefined;
    }
    for (let steps = 0; entry && steps < 2000; steps++) {
      const m = entry.type === "message" ? entry.message : undefined;
      if (m && m.role === boundary.role && m.timestamp === boundary.timestamp) return entry;
      const parent = entry.parentId;
      try {
        entry = parent ? sm.getEntry(parent) : undefined;
      } catch {
        entry = undefined;
      }
    }
    return undefined;
  }

  async function bind(boundary: Boundary, taken: Obj, exact: boolean): Promise<void> {
    const deadline = Date.now() + BIND_WAIT_MS;
    let entry = entryOf(boundary);
    for (let pause = 10; !entry; pause = Math.min(pause * 2, 500)) {
      if (Date.now() > deadline) throw new Error(`the agent did not write the ${boundary.role} message within ${BIND_WAIT_MS / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, pause));
      entry = entryOf(boundary);
    }
    if (!boundary.sessionId) throw new Error("the agent's session has no id");
    const args = ["rewind-point", "bind", "--cwd", boundary.cwd, "--snapshot", String(taken.snapshot)];
    args.push("--session-id", boundary.sessionId, "--entry", String(entry.id), "--moment", boundary.moment);
    if (boundary.sessionFile) args.push("--session-file", boundary.sessionFile);
    if (typeof entry.timestamp === "string") args.push("--entry-time", entry.timestamp);
    if (!exact) args.push("--approximate");
    await sessiontree(args);
    lastProblem = "";
    host.broadcast({
      event: "rewindPoint",
      sessionFile: boundary.sessionFile ? path.resolve(boundary.sessionFile) : null,
      entryId: entry.id,
      moment: boundary.moment,
      snapshot: taken.snapshot,
      exact,
      takeMs: typeof taken.ms === "number" ? taken.ms : null,
    });
  }

  return {
    /** Whether this bridge records the points (the server then records none of its own). */
    recording(): boolean {
      return enabled && runnable;
    },
    /** A user message is about to be processed: its "before" snapshot starts now. */
    userMessage(message: Obj): void {
      lastBefore = start(message, "before") ?? lastBefore;
    },
    /** A turn-ending assistant message ended: its "after" snapshot. */
    turnEnded(message: Obj): void {
      start(message, "after");
    },
    /** Resolves once the latest user message's snapshot is done (or after TOOL_WAIT_MS). */
    async beforeTools(): Promise<void> {
      const boundary = lastBefore;
      if (!boundary || boundary.done) return;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = await Promise.race([
        boundary.taken.then(() => false),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(true), TOOL_WAIT_MS);
        }),
      ]);
      if (timer) clearTimeout(timer);
      if (late && !boundary.done) {
        boundary.waitedOut = true;
        report(new Error(`the snapshot took longer than ${TOOL_WAIT_MS / 1000} s; the agent's tools went on, and that point is approximate`));
      }
    },
    /** Waits (at most `ms`) for the points still being recorded. */
    async settle(ms: number): Promise<void> {
      if (work.size === 0) return;
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        Promise.allSettled([...work]),
        new Promise((resolve) => {
          timer = setTimeout(resolve, ms);
        }),
      ]);
      if (timer) clearTimeout(timer);
    },
  };
}
