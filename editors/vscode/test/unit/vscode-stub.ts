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
