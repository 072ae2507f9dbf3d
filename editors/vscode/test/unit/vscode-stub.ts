// The few `vscode` APIs the session controller touches, for unit tests under plain node
// (esbuild aliases `vscode` to this file when it bundles the tests).
export class Disposable {
  constructor(private readonly fn: () => void = () => {}) {}
  dispose(): void {
    this.fn();
  }
}

export class EventEmitter<T> {
  private listeners: ((e: T) => void)[] = [];
  readonly event = (listener: (e: T) => void): Disposable => {
    this.listeners.push(listener);
    return new Disposable(() => (this.listeners = this.listeners.filter((l) => l !== listener)));
  };
  fire(e: T): void {
    for (const l of [...this.listeners]) l(e);
  }
  dispose(): void {
    this.listeners = [];
  }
}

export const settings: Record<string, unknown> = {};
export const workspace = {
  getConfiguration: (section: string) => ({
    get: <T>(key: string, dflt?: T): T | undefined => (`${section}.${key}` in settings ? (settings[`${section}.${key}`] as T) : dflt),
  }),
};

/** A tree view that records what its provider reveals and selects (the provider is under test). */
export class FakeTreeView<T> {
  visible = true;
  selection: T[] = [];
  description: string | undefined;
  message: string | undefined;
  readonly reveals: { node: T; options?: { select?: boolean; focus?: boolean } }[] = [];
  private readonly selectionEmitter = new EventEmitter<{ selection: T[] }>();
  readonly onDidChangeSelection = this.selectionEmitter.event;
  async reveal(node: T, options?: { select?: boolean; focus?: boolean }): Promise<void> {
    this.reveals.push({ node, options });
    if (options?.select) {
      this.selection = [node];
      this.selectionEmitter.fire({ selection: [node] });
    }
  }
  dispose(): void {}
}

/** The tree views created, newest last. */
export const treeViews: FakeTreeView<unknown>[] = [];
export const window = {
  createTreeView: <T>(): FakeTreeView<T> => {
    const view = new FakeTreeView<T>();
    treeViews.push(view as FakeTreeView<unknown>);
    return view;
  },
};

/** Commands run by the code under test (context keys, focus) do nothing here. */
export const commands = {
  executeCommand: async (): Promise<undefined> => undefined,
};
