/**
 * Rewind: the workspace's files at an entry's point (`sessionTree/rewind*`). "Compare files with
 * this point" opens VS Code's multi-file diff (the point's content as read-only documents of the
 * `sessiontree-point` scheme ↔ the working tree); "Restore files to this point" and "Undo last
 * restore" ask first (with the dry run's counts) and show what changed. After a navigation, and
 * before /branch, the files can be kept or restored (setting `sessiontree.rewind.onNavigate`).
 * Rows that have a point get a mark. The server does the work; this module asks and shows.
 */
import * as vscode from 'vscode';
import type { Api } from './api';
import { errorMessage } from './errors';
import {
  type DidRecordRewindPointParams,
  Methods,
  type RewindCompareResult,
  type RewindFileResult,
  type RewindPoint,
  type RewindPointsResult,
  type RewindRestoreResult,
  type UsedRewindPoint,
} from './protocol';

/** The scheme of the read-only documents that hold a file as a point has it. */
export const POINT_SCHEME = 'sessiontree-point';
/** Drawn after the rows whose entry has a point. */
export const POINT_MARK = '◆';

/** What /branch does with the files. */
export type BranchFiles = 'conversation' | 'both' | 'files';

/** Which point was used, in words. */
export function describePoint(used: UsedRewindPoint): string {
  const p = used.point;
  const words = `${p.entryId} (${p.moment}, ${p.exact ? 'exact' : 'approximate'})`;
  return used.asked === p.entryId ? `the point of ${words}` : `the point of ${words}, the nearest above ${used.asked}`;
}

/** Counts of a restore's files by action. */
export function countActions(result: RewindRestoreResult): { added: number; changed: number; deleted: number } {
  const counts = { added: 0, changed: 0, deleted: 0 };
  for (const f of result.files) counts[f.action] += 1;
  return counts;
}

export class Rewind implements vscode.Disposable, vscode.TextDocumentContentProvider {
  private readonly points = new Map<string, Map<string, RewindPoint>>();
  private readonly fetched = new Map<string, number | undefined>();
  private readonly marksChanged = new vscode.EventEmitter<void>();
  /** Fires when the points (and so the row marks) of a session were fetched anew. */
  readonly onDidChangeMarks = this.marksChanged.event;
  private readonly subs: vscode.Disposable[] = [];

  constructor(
    private readonly api: Api,
    private readonly record: (key: string, value: unknown) => void,
  ) {
    this.subs.push(
      vscode.workspace.registerTextDocumentContentProvider(POINT_SCHEME, this),
      // Points do not change the session's revision: the server says when it recorded one.
      api.onDidRecordRewindPoint((p: DidRecordRewindPointParams) => {
        const points = this.points.get(p.uri) ?? new Map<string, RewindPoint>();
        points.set(p.point.entryId, p.point);
        this.points.set(p.uri, points);
        this.record('rewindPoints', [...points.keys()]);
        this.marksChanged.fire();
      }),
    );
  }

  private request<R>(method: string, params: unknown): Promise<R> {
    return this.api.client.sendRequest<R>(method, params);
  }

  /** A read-only document of `path` as the point of `entryId` holds it. */
  pointUri(session: string, entryId: string, path: string): vscode.Uri {
    return vscode.Uri.from({ scheme: POINT_SCHEME, path: `/${path}`, query: JSON.stringify({ session, entryId }) });
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const { session, entryId } = JSON.parse(uri.query) as { session: string; entryId: string };
    const res = await this.request<RewindFileResult>(Methods.rewindFile, {
      uri: session,
      entryId,
      path: uri.path.replace(/^\//, ''),
    });
    if (!res.exists) return '';
    return res.text ?? '(binary file)';
  }

  /** Fetches the session's points once per revision (for the marks). */
  async refreshPoints(uri: string, revision: number | undefined): Promise<void> {
    if (this.fetched.has(uri) && this.fetched.get(uri) === revision) return;
    this.fetched.set(uri, revision);
    const before = JSON.stringify([...(this.points.get(uri)?.values() ?? [])]);
    try {
      const res = await this.request<RewindPointsResult>(Methods.rewindPoints, { uri });
      this.points.set(uri, new Map(res.points.map((p) => [p.entryId, p])));
      this.record('rewindPoints', res.points.map((p) => p.entryId));
    } catch {
      this.points.set(uri, new Map());
    }
    // Only a change of the points redraws the tree: every redraw retires the rows' commands, so a
    // click landing during a needless one (each revision brings one) would be lost.
    if (JSON.stringify([...(this.points.get(uri)?.values() ?? [])]) !== before) this.marksChanged.fire();
  }

  /** Whether the entry has a point of its own (not pruned). */
  hasPoint(uri: string | undefined, id: string | null | undefined): boolean {
    if (!uri || !id) return false;
    const p = this.points.get(uri)?.get(id);
    return !!p && !p.pruned;
  }

  /** "files changed since this point" for a row's tooltip (undefined: no point). */
  async hoverLine(uri: string, id: string): Promise<string | undefined> {
    if (!this.hasPoint(uri, id)) return undefined;
    try {
      const res = await this.request<RewindCompareResult>(Methods.rewindCompare, { uri, entryId: id });
      return `${POINT_MARK} files changed since this point: ${res.files.length}`;
    } catch (e) {
      return `${POINT_MARK} ${errorMessage(e)}`;
    }
  }

  /** "Compare files with this point": VS Code's multi-file diff, point ↔ working tree. */
  async compare(uri: string, entryId: string): Promise<RewindCompareResult | undefined> {
    let res: RewindCompareResult;
    try {
      res = await this.request<RewindCompareResult>(Methods.rewindCompare, { uri, entryId });
    } catch (e) {
      this.record('rewindCompare', { error: errorMessage(e) });
      void vscode.window.showErrorMessage(`Compare failed: ${errorMessage(e)}`);
      return undefined;
    }
    this.record('rewindCompare', { point: res.point.point.entryId, files: res.files });
    if (res.files.length === 0) {
      void vscode.window.showInformationMessage(`No file differs from ${describePoint(res.point)}.`);
      return res;
    }
    const resources: [vscode.Uri, vscode.Uri | undefined, vscode.Uri | undefined][] = res.files.map((f) => {
      const file = vscode.Uri.file(`${res.workspace}/${f.path}`);
      const left = f.status === 'added' ? undefined : this.pointUri(uri, res.point.point.entryId, f.path);
      const right = f.status === 'deleted' ? undefined : file;
      return [file, left, right];
    });
    await vscode.commands.executeCommand(
      'vscode.changes',
      `Files changed since ${res.point.point.entryId} (${res.point.point.moment})`,
      resources,
    );
    return res;
  }

  /** Asks with the dry run's counts, then runs the restore or undo; shows what changed. */
  private async confirmAndRun(
    method: string,
    params: Record<string, unknown>,
    question: string,
    ask: boolean,
  ): Promise<RewindRestoreResult | undefined> {
    if (ask) {
      let preview: RewindRestoreResult;
      try {
        preview = await this.request<RewindRestoreResult>(method, { ...params, dryRun: true });
      } catch (e) {
        void vscode.window.showErrorMessage(`${question}: ${errorMessage(e)}`);
        this.record('rewindRestore', { error: errorMessage(e) });
        return undefined;
      }
      if (preview.files.length === 0) {
        void vscode.window.showInformationMessage(`${question}: no file differs; nothing to do.`);
        this.record('rewindRestore', { files: [] });
        return preview;
      }
      const c = countActions(preview);
      const pick = await vscode.window.showWarningMessage(
        `${question}? ${c.changed} changed, ${c.added} added, ${c.deleted} deleted. Your current files are kept as the undo point.`,
        { modal: true },
        'Restore',
      );
      if (pick !== 'Restore') {
        this.record('rewindRestore', { declined: true });
        return undefined;
      }
    }
    let res: RewindRestoreResult;
    try {
      res = await this.request<RewindRestoreResult>(method, params);
    } catch (e) {
      this.record('rewindRestore', { error: errorMessage(e) });
      void vscode.window.showErrorMessage(`${question} failed: ${errorMessage(e)}`);
      return undefined;
    }
    this.record('rewindRestore', { files: res.files, undo: res.undoSnapshot ?? null });
    const c = countActions(res);
    const what = res.point ? `Restored the files to ${describePoint(res.point)}` : 'Undid the last restore';
    void vscode.window
      .showInformationMessage(`${what}: ${c.changed} changed, ${c.added} added, ${c.deleted} deleted.`, 'Show files', 'Undo')
      .then((pick) => {
        if (pick === 'Undo') void vscode.commands.executeCommand('sessiontree.rewind.undo');
        if (pick === 'Show files' && res.files[0]) {
          void vscode.window.showQuickPick(res.files.map((f) => `${f.action}  ${f.path}`), { title: what });
        }
      });
    return res;
  }

  /** "Restore files to this point". */
  restore(uri: string, entryId: string, ask = true): Promise<RewindRestoreResult | undefined> {
    return this.confirmAndRun(Methods.rewindRestore, { uri, entryId }, `Restore the files to the point of ${entryId}`, ask);
  }

  /** "Undo last restore". */
  undo(uri: string, ask = true): Promise<RewindRestoreResult | undefined> {
    return this.confirmAndRun(Methods.rewindUndo, { uri }, 'Undo the last restore', ask);
  }

  /** After a navigation: keep or restore the files, as `sessiontree.rewind.onNavigate` says. */
  async afterNavigate(uri: string, entryId: string): Promise<void> {
    const mode = vscode.workspace.getConfiguration('sessiontree').get<string>('rewind.onNavigate', 'ask');
    if (mode === 'keep') return;
    let res: RewindCompareResult;
    try {
      res = await this.request<RewindCompareResult>(Methods.rewindCompare, { uri, entryId });
    } catch {
      return; // No point here (or no git workspace): nothing to offer.
    }
    if (res.files.length === 0) return;
    if (mode === 'restore') {
      await this.restore(uri, entryId, false);
      return;
    }
    const pick = await vscode.window.showQuickPick(
      [
        { label: 'Keep the current files', restore: false },
        { label: 'Restore the files to that point', restore: true, description: `${res.files.length} file(s) differ` },
        { label: 'Compare first', restore: undefined },
      ],
      { title: `Files changed since ${describePoint(res.point)}` },
    );
    this.record('rewindNavigateChoice', pick?.label ?? null);
    if (pick?.restore === true) await this.restore(uri, entryId, false);
    if (pick && pick.restore === undefined) await this.compare(uri, entryId);
  }

  /** Before /branch: conversation only, files and conversation, or files only (no point: conversation). */
  async chooseForBranch(uri: string, entryId: string): Promise<BranchFiles | undefined> {
    let res: RewindCompareResult;
    try {
      res = await this.request<RewindCompareResult>(Methods.rewindCompare, { uri, entryId });
    } catch {
      return 'conversation';
    }
    if (res.files.length === 0) return 'conversation';
    const pick = await vscode.window.showQuickPick(
      [
        { label: 'Conversation only (keep the current files)', value: 'conversation' as const },
        { label: 'Files and conversation', value: 'both' as const, description: `${res.files.length} file(s) restored` },
        { label: 'Files only (restore the files, keep the conversation)', value: 'files' as const },
      ],
      { title: `/branch — ${describePoint(res.point)}` },
    );
    return pick?.value;
  }

  dispose(): void {
    this.subs.forEach((d) => d.dispose());
    this.marksChanged.dispose();
  }
}
