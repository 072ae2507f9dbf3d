/**
 * The chat's input text, kept per session: text typed or prefilled (a chosen message, a /branch)
 * in one session stays with it and never goes to another; switching back brings it back.
 */
export class ChatDraft {
  text = '';
  /** Text put in by the extension that the page has not shown yet. */
  pendingPrefill: string | undefined;
  /** The session the text belongs to. */
  private uri: string | undefined;
  /** The other sessions' texts. */
  private readonly kept = new Map<string, string>();

  /** Another session is on screen: keeps this one's text and returns that session's own. */
  sessionChanged(uri: string | undefined): string {
    if (uri === this.uri) return this.text;
    if (this.uri !== undefined) {
      if (this.text) this.kept.set(this.uri, this.text);
      else this.kept.delete(this.uri);
    }
    this.uri = uri;
    this.text = (uri !== undefined ? this.kept.get(uri) : undefined) ?? '';
    this.kept.delete(uri ?? '');
    this.pendingPrefill = undefined;
    return this.text;
  }

  /** The text of `uri` was sent: it leaves that session's input (and no other's). */
  sentFrom(uri: string): boolean {
    this.kept.delete(uri);
    if (uri !== this.uri) return false;
    this.text = '';
    this.pendingPrefill = undefined;
    return true;
  }
}
