/**
 * The live agent as the user meets it: its settings (user level only), its state in one line,
 * what Send will do, and a clear sentence (with the setting to open, where one helps) for each of
 * the agent's error kinds. The Neovim plugin says the same (editors/nvim/lua/sessiontree/
 * agent_text.lua). Pure: no `vscode`.
 */
import type { AgentKind, AgentSettings, AgentStatus, ErrorKind } from './protocol';

/** The user setting that chooses the agent's executable. */
export function pathSetting(agent: AgentKind): string {
  return agent === 'pi' ? 'sessiontree.agent.piPath' : 'sessiontree.agent.ompPath';
}

/** Whether Send goes to the agent (else it appends without an answer). */
export function agentAvailable(status: AgentStatus | undefined): boolean {
  return status === undefined || status.state !== 'unavailable';
}

/** The agent's state in one line: `pi · idle · provider/model`. */
export function statusLine(s: AgentStatus | undefined): string {
  if (!s) return '';
  const who = s.source === 'terminal' ? `${s.agent} (in your terminal)` : s.agent;
  const model = s.model ? ` · ${s.model}` : '';
  switch (s.state) {
    case 'none':
      return `${who} · not running (Send starts it)`;
    case 'starting':
      return `${who} · starting…`;
    case 'idle':
      return `${who} · idle${model}`;
    case 'running':
      return `${who} · answering…${model}`;
    case 'exited':
      return `${who} · exited${s.message ? `: ${s.message}` : ''}`;
    case 'unavailable':
      return `${who} · unavailable`;
  }
}

/** What to change so that the agent runs (for an unavailable status). */
export function statusAdvice(s: AgentStatus): string {
  return isTurnedOff(s.message)
    ? 'sessiontree.agent.disabled is on in your user settings'
    : `set ${pathSetting(s.agent)} in your user settings to run the agent`;
}

function isTurnedOff(message: string | null | undefined): boolean {
  return /disabled|turned off/.test(message ?? '');
}

/** A second line when something needs the user: why the agent cannot run, its last words. */
export function statusDetail(s: AgentStatus | undefined): string {
  if (!s) return '';
  if (s.state === 'unavailable') {
    return `${s.message ?? `${s.agent} cannot run`}. Send appends your message without an answer; ${statusAdvice(s)}.`;
  }
  if (s.state === 'exited' && s.stderrTail.length) return s.stderrTail.slice(-5).join('\n');
  if (s.source === 'terminal' && !s.armed) {
    return 'The agent in your terminal has not let the editor move its leaf yet: press Enter on /sessiontree in its terminal.';
  }
  return '';
}

function disabledOrPath(s: AgentStatus): string {
  return isTurnedOff(s.message) ? 'sessiontree.agent.disabled' : pathSetting(s.agent);
}

/** The setting to open for a status that needs one. */
export function statusSetting(s: AgentStatus | undefined): string | undefined {
  return s?.state === 'unavailable' ? disabledOrPath(s) : undefined;
}

/** A failed prompt (or stop, or abort), as the user should read it, and the setting to open. */
export function agentErrorText(
  kind: ErrorKind | undefined,
  message: string,
  agent: AgentKind | undefined,
): { text: string; setting?: string } {
  const name = agent ?? 'the agent';
  switch (kind) {
    case 'agentNotInstalled': {
      if (isTurnedOff(message)) return { text: `${message}: sessiontree.agent.disabled is on in your user settings.`, setting: 'sessiontree.agent.disabled' };
      const setting = agent ? pathSetting(agent) : 'sessiontree.agent';
      return { text: `${message}. Set ${setting} in your user settings.`, setting };
    }
    case 'agentFailed':
      return { text: `${name} failed: ${message}` };
    case 'agentBusy':
      return { text: `${name} is still answering: wait for it to finish, or press Stop.` };
    case 'agentNotArmed':
      return {
        text: `${name} in your terminal has not let the editor move its leaf yet: press Enter on /sessiontree in its terminal (the bridge typed it into its input), then send again.`,
      };
    case 'agentRunning':
      return {
        text: `${message}. Install the bridge (Session Tree: Install the Bridge for Terminal Agents) and restart that agent, or use Append Without Running the Agent.`,
      };
    default:
      return { text: message };
  }
}

/**
 * The live agent's settings (`sessiontree.agent.*`) from the user's own settings only: what runs
 * (the executables and their arguments) is never chosen by a repository's workspace settings.
 */
export function agentSettings(user: (key: string) => unknown): AgentSettings {
  const str = (key: string) => {
    const v = user(key);
    return typeof v === 'string' && v.trim() ? v.trim() : undefined;
  };
  const list = (key: string) => {
    const v = user(key);
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined;
  };
  const out: AgentSettings = {};
  if (user('agent.disabled') === true) out.disabled = true;
  const piPath = str('agent.piPath');
  const ompPath = str('agent.ompPath');
  const piArgs = list('agent.piArgs');
  const ompArgs = list('agent.ompArgs');
  const idle = user('agent.idleSeconds');
  if (piPath) out.piPath = piPath;
  if (ompPath) out.ompPath = ompPath;
  if (piArgs?.length) out.piArgs = piArgs;
  if (ompArgs?.length) out.ompArgs = ompArgs;
  if (typeof idle === 'number' && Number.isFinite(idle) && idle >= 0) out.idleSeconds = Math.floor(idle);
  if (user('agent.ownSummaries') === true) out.ownSummaries = true;
  return out;
}
