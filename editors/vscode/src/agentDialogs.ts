/**
 * The agent's dialogs (`sessionTree/agentDialog`: an extension inside the agent asks the user):
 * a quick pick for a choice, a modal for yes/no, an input box for text. The server sends them only
 * because the client declares `agentDialogs`; a dialog the user dismisses, or one the agent stops
 * waiting for (`timeoutMs`), answers `cancelled`.
 */
import * as vscode from 'vscode';
import type { AgentDialogParams, AgentDialogResult } from './protocol';

const CANCELLED: AgentDialogResult = { cancelled: true };

/** Shows one dialog; `record` tells the tests what was asked and answered. */
export async function showAgentDialog(
  p: AgentDialogParams,
  token: vscode.CancellationToken,
  record: (value: unknown) => void,
): Promise<AgentDialogResult> {
  // The agent gives up after `timeoutMs`: so does the dialog.
  const source = new vscode.CancellationTokenSource();
  let gaveUp = false;
  const giveUp = () => {
    gaveUp = true;
    source.cancel();
  };
  const onCancel = token.onCancellationRequested(giveUp);
  const timer = p.timeoutMs ? setTimeout(giveUp, p.timeoutMs) : undefined;
  const title = p.title || 'The agent asks';
  let answer: AgentDialogResult = CANCELLED;
  try {
    switch (p.dialog) {
      case 'select': {
        const picked = await vscode.window.showQuickPick(p.options, { title, placeHolder: p.message ?? undefined, ignoreFocusOut: true }, source.token);
        answer = picked === undefined ? CANCELLED : { value: picked };
        break;
      }
      case 'confirm': {
        const yes = 'Yes';
        const picked = await vscode.window.showWarningMessage(title, { modal: true, detail: p.message ?? undefined }, yes, 'No');
        answer = picked === undefined ? CANCELLED : { confirmed: picked === yes };
        break;
      }
      case 'input':
      case 'editor': {
        const value = await vscode.window.showInputBox(
          { title, prompt: p.message ?? undefined, placeHolder: p.placeholder ?? undefined, value: p.prefill ?? undefined, ignoreFocusOut: true },
          source.token,
        );
        answer = value === undefined ? CANCELLED : { value };
        break;
      }
    }
  } finally {
    if (timer) clearTimeout(timer);
    onCancel.dispose();
    source.dispose();
  }
  if (gaveUp) answer = CANCELLED;
  record({ dialog: p.dialog, title: p.title, options: p.options, answer });
  return answer;
}
