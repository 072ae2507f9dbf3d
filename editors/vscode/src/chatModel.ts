/**
 * What the Chat view shows, as data: the conversation along the path (`sessionTree/transcript`,
 * display blocks rendered by the server) followed by what the agent is streaming now
 * (`sessionTree/agentEvent`: deltas appended to their message's block, tool progress, notices),
 * and the agent's state. Pure (no `vscode` import): the view feeds it answers and events and
 * draws `entries()`. The streamed messages give way to the transcript once it holds them.
 */
import type { AgentEventParams, AgentStatus, DisplayBlock, TranscriptItem, TranscriptResult } from './protocol';

/** One thing drawn in the conversation, with a key that stays the same while it changes. */
export type ChatEntry =
  | { kind: 'message'; key: string; item: TranscriptItem; streaming: boolean }
  | { kind: 'tool'; key: string; id: string; name: string; output: string; done: boolean; isError: boolean }
  | { kind: 'notice'; key: string; text: string; level: 'info' | 'warning' | 'error' };

/** A message the agent is streaming (or has just finished, until the transcript shows it). */
interface LiveMessage {
  kind: 'message';
  key: string;
  number: number;
  role: string;
  blocks: (DisplayBlock | undefined)[];
  /** The finished message (`messageEnd`), which replaces what streamed. */
  item: TranscriptItem | undefined;
}
type LiveTool = Extract<ChatEntry, { kind: 'tool' }>;
type LiveNotice = Extract<ChatEntry, { kind: 'notice' }>;
type Live = LiveMessage | LiveTool | LiveNotice;

/** What an event changed: nothing, one entry (by key), the whole list, or only the state. */
export type Change = { kind: 'none' } | { kind: 'entry'; key: string } | { kind: 'entries' } | { kind: 'status' };

/** The messages of the transcript the streamed ones are compared with (the newest). */
const MATCH_WINDOW = 32;

function sameMessage(a: TranscriptItem, b: TranscriptItem): boolean {
  return a.role === b.role && JSON.stringify(a.blocks) === JSON.stringify(b.blocks);
}

export class Conversation {
  uri: string | undefined;
  transcript: TranscriptItem[] = [];
  /** Messages on the path before the first one given. */
  omitted = 0;
  revision: number | undefined;
  status: AgentStatus | undefined;
  /** Between the agent's `agentStart` and `agentEnd`. */
  running = false;
  /** Deltas received since the last prompt (tests read it). */
  deltas = 0;
  private live: Live[] = [];
  private notices = 0;

  /** Another session (or none): everything shown belongs to the old one. */
  reset(uri: string | undefined): void {
    this.uri = uri;
    this.transcript = [];
    this.omitted = 0;
    this.revision = undefined;
    this.status = undefined;
    this.running = false;
    this.live = [];
  }

  /** The finished live messages now: the view passes them back with the transcript asked after. */
  endedKeys(): Set<string> {
    return new Set(this.live.filter((l) => l.kind === 'message' && l.item).map((l) => l.key));
  }

  /**
   * A transcript arrived, asked for when `ended` were the finished live messages. Those it holds
   * leave the live part; once the agent is done, all of them do (the file has what it wrote),
   * and so do finished tools.
   */
  setTranscript(t: TranscriptResult, ended: Set<string>): void {
    this.transcript = t.items;
    this.omitted = t.omitted;
    this.revision = t.revision;
    const recent = t.items.slice(-MATCH_WINDOW);
    this.live = this.live.filter((l) => {
      if (l.kind === 'message') {
        if (!l.item || !ended.has(l.key)) return true;
        const item = l.item;
        return this.running && !recent.some((r) => sameMessage(r, item));
      }
      if (l.kind === 'tool') return this.running || !l.done;
      return true;
    });
  }

  /** A prompt was sent: last turn's notices and errors go. */
  startTurn(): void {
    this.live = this.live.filter((l) => l.kind !== 'notice');
    this.deltas = 0;
  }

  /** A notice of the view's own (an append without an answer, a failed prompt). */
  notice(text: string, level: LiveNotice['level']): Change {
    this.live.push({ kind: 'notice', key: `n:${++this.notices}`, text, level });
    return { kind: 'entries' };
  }

  /** Applies one `agentEvent` of this session. */
  apply(p: AgentEventParams): Change {
    if (p.uri !== this.uri) return { kind: 'none' };
    const e = p.event;
    switch (e.kind) {
      case 'status':
        this.status = e.status;
        if (e.status.state !== 'running') this.running = false;
        return { kind: 'status' };
      case 'agentStart':
        this.running = true;
        if (this.status) this.status = { ...this.status, state: 'running' };
        return { kind: 'status' };
      case 'agentEnd':
        this.running = false;
        if (this.status?.state === 'running') this.status = { ...this.status, state: 'idle' };
        return { kind: 'status' };
      case 'messageStart': {
        const existing = this.message(e.message);
        if (existing) return { kind: 'none' };
        this.live.push({ kind: 'message', key: `m:${e.message}`, number: e.message, role: e.role, blocks: [], item: undefined });
        return { kind: 'entries' };
      }
      case 'delta': {
        let m = this.message(e.message);
        const fresh = !m;
        if (!m) {
          m = { kind: 'message', key: `m:${e.message}`, number: e.message, role: 'assistant', blocks: [], item: undefined };
          this.live.push(m);
        }
        if (m.item) return { kind: 'none' };
        const kind = e.delta === 'thinking' ? 'thinking' : 'markdown';
        const block = m.blocks[e.block];
        m.blocks[e.block] = { kind, text: (block && 'text' in block ? block.text : '') + e.text } as DisplayBlock;
        this.deltas++;
        return fresh ? { kind: 'entries' } : { kind: 'entry', key: m.key };
      }
      case 'messageEnd': {
        let m = this.message(e.message);
        if (!m) {
          m = { kind: 'message', key: `m:${e.message}`, number: e.message, role: e.item.role, blocks: [], item: undefined };
          this.live.push(m);
        }
        m.item = e.item;
        m.role = e.item.role;
        // A tool's result arrived as a message: its progress line has done its job.
        const results = new Set(e.item.blocks.filter((b) => b.kind === 'toolResult').map((b) => (b as { id: string }).id));
        const before = this.live.length;
        this.live = this.live.filter((l) => !(l.kind === 'tool' && results.has(l.id)));
        return this.live.length !== before ? { kind: 'entries' } : { kind: 'entry', key: m.key };
      }
      case 'toolStart':
        this.live.push({ kind: 'tool', key: `tool:${e.toolCallId}`, id: e.toolCallId, name: e.name, output: '', done: false, isError: false });
        return { kind: 'entries' };
      case 'toolUpdate': {
        const t = this.tool(e.toolCallId);
        if (!t) return { kind: 'none' };
        t.output = e.text;
        return { kind: 'entry', key: t.key };
      }
      case 'toolEnd': {
        const t = this.tool(e.toolCallId);
        if (!t) return { kind: 'none' };
        t.done = true;
        t.isError = e.isError ?? false;
        return { kind: 'entry', key: t.key };
      }
      case 'notice':
        return this.notice(e.text, e.level);
      case 'error':
        return this.notice(e.message, 'error');
      case 'exited': {
        const tail = (e.stderrTail ?? []).join('\n');
        const code = e.code === null || e.code === undefined ? 'a signal' : `code ${e.code}`;
        this.running = false;
        return this.notice(`The agent exited (${code}).${tail ? `\n${tail}` : ''}`, 'error');
      }
      case 'leaf':
        return { kind: 'none' };
    }
  }

  /** Everything to draw, oldest first. */
  entries(): ChatEntry[] {
    const out: ChatEntry[] = this.transcript.map((item, i) => ({
      kind: 'message' as const,
      key: item.entryId ? `e:${item.entryId}` : `t:${i}`,
      item,
      streaming: false,
    }));
    for (const l of this.live) out.push(this.entryOf(l));
    return out;
  }

  /** The entry with `key`, as drawn now. */
  entry(key: string): ChatEntry | undefined {
    const l = this.live.find((x) => x.key === key);
    return l ? this.entryOf(l) : this.entries().find((x) => x.key === key);
  }

  private entryOf(l: Live): ChatEntry {
    if (l.kind !== 'message') return { ...l };
    if (l.item) return { kind: 'message', key: l.key, item: l.item, streaming: false };
    const blocks = l.blocks.filter((b): b is DisplayBlock => b !== undefined);
    return { kind: 'message', key: l.key, item: { entryId: null, role: l.role, detail: null, blocks }, streaming: true };
  }

  private message(n: number): LiveMessage | undefined {
    return this.live.find((l): l is LiveMessage => l.kind === 'message' && l.number === n);
  }

  private tool(id: string): LiveTool | undefined {
    return this.live.find((l): l is LiveTool => l.kind === 'tool' && l.id === id);
  }
}
