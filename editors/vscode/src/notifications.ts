/**
 * Many listeners of one server notification. The language client keeps one handler per method
 * (a second `onNotification` for the same method replaces the first), so each method is
 * registered with the client once, and its notifications are handed to every listener here.
 */
import * as vscode from 'vscode';

type Register = (method: string, handler: (params: unknown) => void) => unknown;

export class NotificationFanOut {
  private readonly listeners = new Map<string, Set<(params: unknown) => void>>();

  constructor(
    private readonly register: Register,
    private readonly onError: (method: string, error: unknown) => void = () => {},
  ) {}

  /** Calls `listener` with each `method` notification until the returned disposable is disposed. */
  on<T>(method: string, listener: (params: T) => void): vscode.Disposable {
    let set = this.listeners.get(method);
    if (!set) {
      const all = new Set<(params: unknown) => void>();
      set = all;
      this.listeners.set(method, all);
      this.register(method, (params) => {
        for (const l of [...all]) {
          // One listener's failure does not keep the notification from the others.
          try {
            l(params);
          } catch (e) {
            this.onError(method, e);
          }
        }
      });
    }
    const own = listener as (params: unknown) => void;
    set.add(own);
    const from = set;
    return new vscode.Disposable(() => from.delete(own));
  }
}
