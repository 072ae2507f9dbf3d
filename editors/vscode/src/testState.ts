/**
 * For the end-to-end test only: when `SESSIONTREE_TEST_STATE` names a file, the extension writes
 * what it shows there (rows, filter, leaf, chat input, the last flow results) as JSON, so the test
 * can check state that the DOM hides (webview inputs, notifications dropped as spam). A no-op
 * otherwise.
 */
import * as fs from 'node:fs';

export class TestState {
  private readonly data: Record<string, unknown> = {};
  constructor(private readonly file: string | undefined) {}

  set(key: string, value: unknown): void {
    if (!this.file) return;
    this.data[key] = value;
    try {
      const tmp = `${this.file}.tmp`;
      fs.writeFileSync(tmp, JSON.stringify(this.data, null, 2));
      fs.renameSync(tmp, this.file);
    } catch {
      // A test harness problem must never break the extension.
    }
  }
}
