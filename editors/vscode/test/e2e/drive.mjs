// End-to-end test of the extension in a real VS Code (code-server) driven by Debian's Chromium
// through playwright-core, against the real `sessiontree lsp` and a real session file.
// Started by scripts/test-vscode.sh, which starts code-server and passes:
//   node drive.mjs <url> <state.json> <session file> <artifacts dir>
// env: PLAYWRIGHT_DIR = a folder whose node_modules holds playwright-core.
// The extension writes what it shows to <state.json> (SESSIONTREE_TEST_STATE); the checks read
// the DOM where VS Code renders it and that file where the DOM hides it (webview input, toasts).
// Last line: "e2e: N passed, M failed".
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { Buffer } from 'node:buffer';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const [url, stateFile, sessionFile, outDir] = process.argv.slice(2);
const sessionDir = path.dirname(sessionFile);
const { chromium } = createRequire(path.join(process.env.PLAYWRIGHT_DIR ?? process.cwd(), 'x.js'))('playwright-core');
fs.mkdirSync(outDir, { recursive: true });
const t0 = Date.now();
let passed = 0;
let failed = 0;
const pending = [];
const log = (tag, msg) => console.log(`${tag} ${String(Date.now() - t0).padStart(6)}ms  ${msg}`);

// E2E_ONLY=<regex> runs only the checks whose names match it (and the first three, which load
// the workbench and the extension): for working on one block; the whole run is the test.
const only = process.env.E2E_ONLY ? new RegExp(process.env.E2E_ONLY) : undefined;
let skipped = 0;
const SET_UP = /^(workbench loads|extension activates|activity bar opens)/;
async function check(name, fn) {
  if (only && !only.test(name) && !SET_UP.test(name)) {
    skipped++;
    return undefined;
  }
  try {
    const r = await fn();
    passed++;
    log('ok  ', name + (r !== undefined ? ` -> ${JSON.stringify(r).slice(0, 200)}` : ''));
    return r;
  } catch (e) {
    failed++;
    log('FAIL', `${name}: ${String(e?.message ?? e).split('\n').slice(0, 3).join(' | ')}`);
    await page?.screenshot({ path: path.join(outDir, `vscode-fail-${passed + failed}.png`) }).catch(() => {});
    return undefined;
  }
}

const readState = () => {
  try {
    return JSON.parse(fs.readFileSync(stateFile, 'utf8'));
  } catch {
    return {};
  }
};
async function waitState(pred, what, ms = 15000) {
  const end = Date.now() + ms;
  for (;;) {
    const s = readState();
    if (pred(s)) return s;
    if (Date.now() > end) {
      const short = { ...s, lines: s.lines?.length };
      throw new Error(`timeout waiting for ${what}; state: ${JSON.stringify(short).slice(0, 600)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'st-chromium-'));
const ctx = await chromium.launchPersistentContext(userDataDir, {
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  headless: true,
  viewport: { width: 1280, height: 1100 },
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
const page = ctx.pages()[0] ?? (await ctx.newPage());
const consoleErrors = [];
page.on('console', (m) => m.type() === 'error' && consoleErrors.push(m.text()));

const sidebar = page.locator('.part.sidebar');
const treeRows = () => sidebar.locator('.pane:has(.pane-header:has-text("Tree")) .monaco-list-row');
const treeRow = (text) => treeRows().filter({ hasText: text }).first();
const rowTexts = async () => (await treeRows().allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());
/** The rows of a list as drawn, top to bottom (the DOM keeps rows in any order; `data-index` is their place). */
async function listInOrder(rows) {
  const all = await rows.evaluateAll((els) => els.map((e) => ({ i: Number(e.getAttribute('data-index')), text: e.textContent ?? '', focused: e.classList.contains('focused'), aria: e.getAttribute('aria-label') ?? '', html: e.innerHTML })));
  return all.sort((a, b) => a.i - b.i).map((r) => ({ ...r, text: r.text.replace(/\s+/g, ' ').trim() }));
}
const sessionRows = () => sidebar.locator('.pane:has(.pane-header:has-text("Sessions")) .monaco-list-row');
/** Control characters, which must never reach the screen raw (tab, bell, ...). */
// eslint-disable-next-line no-control-regex -- the point is to find them
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

async function palette(cmd, pick = cmd) {
  const input = page.locator('.quick-input-widget input');
  for (let attempt = 0; ; attempt++) {
    try {
      // A terminal taking focus can close the palette or keep F1: focus the editor area and retry.
      if (attempt > 0) {
        await page.keyboard.press('Escape');
        await page.locator('.part.editor').click({ position: { x: 200, y: 200 } }).catch(() => {});
      }
      await page.keyboard.press('F1');
      await input.waitFor({ state: 'visible', timeout: 3000 });
      await input.fill('>' + cmd, { timeout: 3000 });
      await page.locator('.quick-input-list .monaco-list-row', { hasText: pick }).first().waitFor({ timeout: 5000 });
      break;
    } catch (e) {
      if (attempt >= 2) throw e;
    }
  }
  // Click (not Enter: the palette may rank another command first), once: the command runs on it.
  await page.locator('.quick-input-list .monaco-list-row', { hasText: pick }).first().click({ noWaitAfter: true });
}
async function quickInput(text) {
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 10000 });
  await input.fill(text);
}
/** A picture of the activity bar and the side bar. */
async function shootPanel(name) {
  await page.mouse.move(900, 700);
  await page.waitForTimeout(400);
  const box = await sidebar.boundingBox();
  const width = Math.round((box?.x ?? 0) + (box?.width ?? 600));
  await page.screenshot({ path: path.join(outDir, name), clip: { x: 0, y: 0, width, height: 1100 } });
}
const sessionsHeader = () => sidebar.locator('.pane-header', { hasText: 'Sessions' }).first();
async function expandSessions() {
  if ((await sessionsHeader().getAttribute('aria-expanded')) !== 'true') await sessionsHeader().click();
  await page.waitForTimeout(800); // the view lists the sessions again when it comes into sight
}
async function collapseSessions() {
  if ((await sessionsHeader().getAttribute('aria-expanded')) === 'true') await sessionsHeader().click();
}
/**
 * Clicks a row of the Sessions view until `pred` holds (a click landing while the view redraws,
 * e.g. as a session's "live" mark changes, is lost: the redraw retires the items' commands).
 */
async function openFromSessions(row, pred, what, ms = 20000) {
  await row.waitFor({ timeout: 10000 });
  const end = Date.now() + ms;
  for (;;) {
    await row.click();
    try {
      return await waitState(pred, what, Math.min(7000, Math.max(1000, end - Date.now())));
    } catch (e) {
      if (Date.now() > end) throw e;
    }
  }
}
/**
 * The Sessions view's row reading `text`, scrolled into sight: a list draws only the rows in
 * sight, and by the later checks the view holds more sessions than its pane has room for (the
 * ones the checks wrote, some dated old to list last). From the top, down a step at a time.
 */
async function sessionRowInSight(text) {
  const row = sessionRows().filter({ hasText: text }).first();
  if (await row.isVisible()) return row;
  await sessionRows().first().waitFor({ timeout: 10000 });
  await sessionRows().first().hover();
  await page.mouse.wheel(0, -100000);
  await page.waitForTimeout(250);
  for (let i = 0; i < 40 && !(await row.isVisible()); i++) {
    await sessionRows().first().hover();
    await page.mouse.wheel(0, 120);
    await page.waitForTimeout(250);
  }
  return row;
}
async function focusTree() {
  await palette('Session Tree: /tree');
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 5000 }).catch(() => {});
  // Keys go where the DOM focus is: wait until it is inside the Tree's list (a busy machine lags).
  await page
    // eslint-disable-next-line no-undef -- runs in the page
    .waitForFunction(() => !!document.activeElement?.closest('.pane-body')?.parentElement?.querySelector('.pane-header')?.textContent?.includes('Tree'), null, { timeout: 5000 })
    .catch(() => {});
  await page.waitForTimeout(200);
}
/** The chat webview's document (VS Code nests it: iframe.webview > iframe#active-frame). */
function chatFrame() {
  return page.frameLocator('iframe.webview.ready').last().frameLocator('#active-frame');
}

await check('workbench loads', async () => {
  await page.goto(url, { waitUntil: 'domcontentloaded' });
  await page.locator('.monaco-workbench').waitFor({ timeout: 60000 });
  await page.locator('.part.activitybar').waitFor({ timeout: 60000 });
  return await page.title();
});

await check('extension activates, starts the server, lists and opens the session', async () => {
  const s = await waitState((s) => s.activatedOk || s.startError, 'activation', 40000);
  if (s.startError) throw new Error(s.startError);
  if (!s.sessions?.length) throw new Error('no sessions listed: ' + JSON.stringify(s.listError ?? s.sessions));
  if (!s.session) throw new Error('no session opened');
  return { server: s.serverInfo, sessions: s.sessions.length, rows: s.lines.length };
});

await check('activity bar opens the Session Tree container (Sessions, Tree, Chat)', async () => {
  const item = page.locator('.part.activitybar [aria-label^="Session Tree"]').first();
  await item.waitFor({ timeout: 20000 });
  await item.click();
  for (const name of ['Sessions', 'Tree', 'Chat']) {
    await sidebar.locator('.pane-header', { hasText: name }).first().waitFor({ timeout: 10000 });
  }
  // Widen the side bar (drag its sash) so rows are readable in the screenshot.
  const box = await sidebar.boundingBox();
  if (box) {
    await page.mouse.move(box.x + box.width + 1, box.y + 300);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width + 260, box.y + 300, { steps: 8 });
    await page.mouse.up();
  }
  return await sidebar.locator('.pane-header h3').allInnerTexts();
});

await check('Sessions view lists the session by its name', async () => {
  const row = sidebar.locator('.pane:has(.pane-header:has-text("Sessions")) .monaco-list-row', { hasText: 'CSV importer quoted commas' });
  await row.first().waitFor({ timeout: 10000 });
  const text = (await row.first().innerText()).replace(/\s+/g, ' ');
  // Give the Tree the room (the Sessions view stays one click away).
  await sidebar.locator('.pane-header', { hasText: 'Sessions' }).first().click();
  return text;
});

await check('Sessions view: entry counts, and a name\'s tab and bell drawn visibly (not raw)', async () => {
  await expandSessions();
  await sessionRows().filter({ hasText: 'commas' }).first().waitFor({ timeout: 10000 });
  const rows = await listInOrder(sessionRows());
  const pi = rows.find((r) => r.text.includes('in pi'));
  if (!pi) throw new Error('the pi session is not listed: ' + JSON.stringify(rows.map((r) => r.text)));
  if (CONTROL.test(pi.text)) throw new Error('control characters drawn raw: ' + JSON.stringify(pi.text));
  if (!pi.text.includes('Quoted\u2409commas\u2407 in pi')) throw new Error('the name is not drawn as the rows draw it: ' + JSON.stringify(pi.text));
  const counts = rows.filter((r) => /\b\d[\d,]* entries\b/.test(r.text));
  if (counts.length !== rows.length) throw new Error('rows without an entry count: ' + JSON.stringify(rows.map((r) => r.text)));
  await collapseSessions();
  return rows.map((r) => r.text.slice(0, 90));
});

await check('Tree view renders the server rows (labels, active path, leaf)', async () => {
  await treeRow('PR opened').waitFor({ timeout: 15000 });
  const texts = await rowTexts();
  const s = readState();
  for (const want of ['[bug report] user: The CSV importer', '[csv crate] assistant: Switched', 'user: Write the state machine by hand.', 'branch summary']) {
    if (!texts.some((t) => t.includes(want))) throw new Error(`missing row "${want}" in ${JSON.stringify(texts)}`);
  }
  if (texts.length !== s.lines.length) throw new Error(`DOM has ${texts.length} rows, server sent ${s.lines.length}`);
  if (!(await treeRow('PR opened').innerText()).includes('leaf')) throw new Error('leaf not marked');
  return { rows: texts.length, first: texts[0] };
});

await check('tooltip is the entry, resolved lazily from the server', async () => {
  const hovers = page.locator('.monaco-hover, .workbench-hover');
  const hover = hovers.filter({ hasText: 'line ' }).filter({ hasText: 'Let me look at the parser' }).first();
  // VS Code shows a hover only after the pointer rests on the row; on a busy machine a rest can be
  // missed, so leave the row and rest on it again, a little further along each time (Playwright
  // scrolls it into view first), up to five times before calling it a failure, and then say
  // which hovers were on the screen.
  for (let attempt = 1; ; attempt++) {
    await page.mouse.move(900, 700);
    await treeRow('Let me look at the parser').hover({ position: { x: 30 + attempt * 12, y: 8 } });
    try {
      await hover.waitFor({ timeout: 8000 });
      break;
    } catch (e) {
      if (attempt >= 5) {
        const seen = await hovers.allInnerTexts().catch(() => []);
        throw new Error(`no tooltip of the row after ${attempt} rests; hovers on screen: ${JSON.stringify(seen.map((t) => t.slice(0, 120)))}`, { cause: e });
      }
    }
  }
  const text = (await hover.innerText()).replace(/\s+/g, ' ');
  if (!text.includes('line ')) throw new Error('tooltip without its line: ' + text);
  await page.mouse.move(900, 700);
  return text.slice(0, 80);
});

await check('filter keys: Alt+U shows user messages only, Ctrl+O cycles, Alt+D returns', async () => {
  await focusTree();
  await page.keyboard.press('Alt+KeyU');
  await waitState((s) => s.filter === 'userOnly', 'filter userOnly', 5000);
  await treeRow('Let me look at the parser').waitFor({ state: 'detached', timeout: 5000 });
  const userOnly = await rowTexts();
  if (!userOnly.every((t) => t.includes('user:'))) throw new Error('non-user rows: ' + JSON.stringify(userOnly));
  const desc = await sidebar.locator('.pane-header:has-text("Tree") .description').first().innerText().catch(() => '');
  if (!desc.includes('[user]')) throw new Error(`view description "${desc}" lacks [user]`);
  await page.keyboard.press('Control+KeyO');
  await waitState((s) => s.filter === 'labeledOnly', 'filter labeledOnly', 5000);
  await page.keyboard.press('Alt+KeyD');
  await waitState((s) => s.filter === 'default', 'filter default', 5000);
  await treeRow('Let me look at the parser').waitFor({ timeout: 5000 });
  return { userOnly: userOnly.length, description: desc };
});

const leaf0 = readState().leaf;
await check('selecting a user message moves the leaf and prefills the chat input', async () => {
  await treeRow('user: Benchmark it against the old splitter.').click();
  const s = await waitState((s) => s.navigate?.targetId && s.leaf !== leaf0 && s.chatInput, 'navigate', 10000);
  if (s.navigate.decision !== 'parent') throw new Error('decision ' + s.navigate.decision);
  if (s.chatInput !== 'Benchmark it against the old splitter.') throw new Error('chat input: ' + JSON.stringify(s.chatInput));
  const inDom = await chatFrame().locator('#input').inputValue({ timeout: 5000 }).catch((e) => `(webview not readable: ${e.message.split('\n')[0]})`);
  if (inDom !== s.chatInput) throw new Error('webview input: ' + inDom);
  const leafRow = treeRows().filter({ hasText: '● leaf' }).first();
  await leafRow.filter({ hasText: /compaction/i }).waitFor({ timeout: 5000 });
  // The panel with labels, the active path, the leaf, the conversation and the prefilled input:
  // the README's picture.
  await shootPanel('vscode-panel.png');
  return { from: leaf0, to: s.leaf, decision: s.navigate.decision, input: inDom };
});

await check('selecting the leaf says "Already at this point"', async () => {
  await page.waitForTimeout(500);
  await treeRows().filter({ hasText: '● leaf' }).first().click();
  const s = await waitState((s) => s.navigate?.alreadyAtThisPoint === true, 'alreadyAtThisPoint', 8000);
  await page.locator('.notifications-toasts', { hasText: 'Already at this point' }).first().waitFor({ timeout: 5000 }).catch(() => {});
  return { decision: s.navigate.decision };
});

const pickRow = (text) => page.locator('.quick-input-list .monaco-list-row', { hasText: text }).first();

/** Opens the row's context menu from the keyboard (focus moves up `ups` rows from the leaf) and runs `item`. */
const contextMenu = async (ups, item) => {
  await focusTree();
  for (let i = 0; i < ups; i++) await page.keyboard.press('ArrowUp');
  await page.keyboard.press('Shift+F10');
  const menu = page.locator('.context-view .monaco-menu');
  await menu.waitFor({ timeout: 5000 });
  for (let i = 0; i < 10; i++) {
    const focused = await menu.locator('.action-item.focused').first().innerText({ timeout: 300 }).catch(() => '');
    if (focused.includes(item)) break;
    await page.keyboard.press('ArrowDown');
  }
  await page.keyboard.press('Enter');
};
const withSummary = () => contextMenu(2, 'Navigate Here With Summary'); // the leaf is [compaction]; 2 up = "Write the state machine"
await check('summary prompt: Escape returns; an empty custom prompt returns to the choice; Summarize without a model moves nothing', async () => {
  const leaf = readState().leaf;
  await withSummary();
  await pickRow('No summary').waitFor({ timeout: 8000 });
  await page.keyboard.press('Escape');
  await waitState((s) => s.navigate?.backedOut, 'backed out', 5000);
  await page.waitForTimeout(500);
  await withSummary();
  await pickRow('Summarize with custom prompt').waitFor({ timeout: 8000 });
  await pickRow('Summarize with custom prompt').click();
  await page.locator('.quick-input-widget', { hasText: 'Custom summarization instructions' }).waitFor({ timeout: 5000 });
  await page.keyboard.press('Enter'); // empty → back to the choice
  await pickRow('No summary').waitFor({ timeout: 5000 });
  await page.locator('.quick-input-list .monaco-list-row .label-name').filter({ hasText: /^Summarize$/ }).first().click();
  const s = await waitState((s) => s.navigate && !s.navigate.backedOut, 'navigate with summary', 20000);
  if (s.navigate.error) {
    if (readState().leaf !== leaf) throw new Error('the leaf moved although the summary failed');
    if (!/noModel|model/i.test(s.navigate.error)) throw new Error('unexpected error: ' + s.navigate.error);
    return { error: s.navigate.error.slice(0, 120), leaf: 'unchanged' };
  }
  return { decision: s.navigate.decision, summaryEntryId: s.navigate.summaryEntryId ?? null };
});

/** Runs "Navigate Here With Summary…" → "Summarize with custom prompt" → `prompt` on the row `ups` above the leaf. */
async function summarizeCustom(ups, prompt) {
  await contextMenu(ups, 'Navigate Here With Summary');
  await pickRow('Summarize with custom prompt').waitFor({ timeout: 8000 });
  await pickRow('Summarize with custom prompt').click();
  await quickInput(prompt);
  await page.keyboard.press('Enter');
}
const progressToast = () => page.locator('.notifications-toasts .notification-toast', { hasText: 'Summarizing branch' }).first();

await check('cancelling the summary progress sends $/cancelRequest and nothing moves', async () => {
  const before = readState();
  const file = new URL(before.session).pathname;
  const size = fs.statSync(file).size;
  await summarizeCustom(2, 'focus on the parser');
  await progressToast().waitFor({ timeout: 8000 });
  await progressToast().locator('.monaco-button, a.monaco-button', { hasText: 'Cancel' }).first().click();
  const s = await waitState((s) => s.navigate?.cancelled === true && JSON.stringify(s.navigate) !== JSON.stringify(before.navigate), 'cancelled', 10000);
  await page.waitForTimeout(500);
  if (readState().leaf !== before.leaf) throw new Error('the leaf moved');
  if (fs.statSync(file).size !== size) throw new Error('the file changed');
  return { navigate: s.navigate, leaf: 'unchanged', bytes: size };
});

await check('a summary supplied through the beforeTree hook lands as a branch summary under progress', async () => {
  await page.waitForTimeout(500);
  await summarizeCustom(2, 'focus on the parser');
  await progressToast().waitFor({ timeout: 8000 });
  const s = await waitState((s) => s.navigate?.summaryEntryId, 'summary entry', 15000);
  await treeRow('E2E summary of').waitFor({ timeout: 8000 });
  return { decision: s.navigate.decision, summaryEntryId: s.navigate.summaryEntryId };
});

await check('Shift+L labels the row the keyboard is on, not the selected one', async () => {
  await focusTree();
  await page.waitForTimeout(300);
  const before = readState();
  // Move the keyboard off the selection: arrows move the focus, not the selection.
  await page.keyboard.press('ArrowUp');
  await page.keyboard.press('ArrowUp');
  await page.waitForTimeout(300);
  // A row's aria-label is its text without the label (and "leaf, " / "active path, " before it).
  const entryText = (aria) => aria.replace(/^(leaf, |active path, )/, '');
  const focused = entryText((await listInOrder(treeRows())).find((r) => r.focused)?.aria ?? '');
  if (!focused) throw new Error('no focused row');
  await page.keyboard.press('Shift+KeyL');
  await quickInput('bench-start');
  await page.keyboard.press('Enter');
  await treeRow('[bench-start]').waitFor({ timeout: 8000 });
  const s = await waitState((s) => s.labels?.some((l) => l.label === 'bench-start'), 'label in rows', 5000);
  const labelled = s.labels.find((l) => l.label === 'bench-start').id;
  if (labelled === before.selected) throw new Error(`labelled the selected row ${labelled}, not the focused one ("${focused}")`);
  const row = entryText((await listInOrder(treeRows())).find((r) => r.text.includes('[bench-start]'))?.aria ?? '');
  if (row !== focused) throw new Error(`the label went to "${row}", the keyboard was on "${focused}"`);
  await shootPanel('vscode-label.png');
  return { focused, labelled, selected: before.selected };
});

await check('the leaf stays marked where it cannot be cut: its icon (or the nearest shown row above a hidden leaf)', async () => {
  // The label entry just written is the leaf now, hidden by the default filter: the row above it carries the mark.
  const s = readState();
  if (s.labels.some((l) => l.id === s.leaf) || s.lines.some((l) => l.includes(s.leaf))) throw new Error('expected the leaf (the label entry) hidden');
  await page.waitForTimeout(300);
  const rows = await listInOrder(treeRows());
  const marked = rows.filter((r) => r.html.includes('codicon-circle-filled'));
  if (marked.length !== 1) throw new Error(`${marked.length} rows marked as the leaf: ${JSON.stringify(rows.map((r) => r.text.slice(0, 50)))}`);
  // The nearest shown entry above the leaf: the last row on the active path.
  const active = rows.filter((r) => /^(leaf|active path), /.test(r.aria));
  if (active.at(-1) !== marked[0]) throw new Error(`marked "${marked[0].text}", the last active row is "${active.at(-1)?.text}"`);
  return { leaf: s.leaf, marked: marked[0].text.slice(0, 60) };
});

await check('Enter on a row selects it (navigates)', async () => {
  await focusTree();
  const before = readState().navigate;
  await page.waitForTimeout(500); // the previous move's redraw
  await focusTree();
  const leaf = readState().leaf;
  const focusedRow = sidebar.locator('.pane:has(.pane-header:has-text("Tree")) .monaco-list-row.focused').first();
  // Move off the leaf (up, or down when the leaf is the first row).
  for (const key of ['ArrowUp', 'ArrowDown', 'ArrowDown']) {
    await page.keyboard.press(key);
    await page.waitForTimeout(150);
    if (!(await focusedRow.innerText({ timeout: 1000 }).catch(() => '')).includes('● leaf')) break;
  }
  await page.keyboard.press('Enter');
  const s = await waitState((s) => s.navigate && JSON.stringify(s.navigate) !== JSON.stringify(before), 'navigate by Enter', 8000);
  if (s.navigate.error) throw new Error(s.navigate.error);
  if (s.navigate.targetId === leaf) throw new Error('Enter navigated to the leaf, not the focused row');
  return { targetId: s.navigate.targetId, decision: s.navigate.decision };
});

await check('search as you type: the tree narrows with each key, before Enter; highlights and the description follow', async () => {
  await focusTree();
  await page.keyboard.press('Control+KeyF');
  await page.locator('.quick-input-widget input').waitFor({ state: 'visible', timeout: 5000 });
  await page.keyboard.type('spl', { delay: 80 });
  // No Enter yet: the rows are already those of "spl".
  await waitState((s) => s.search === 'spl', 'search "spl" while typing', 5000);
  await treeRow('PR opened').waitFor({ state: 'detached', timeout: 5000 });
  if (!(await page.locator('.quick-input-widget input').isVisible())) throw new Error('the search box closed while typing');
  await page.keyboard.type('itter', { delay: 80 });
  await waitState((s) => s.search === 'splitter', 'search "splitter" while typing', 5000);
  await page.keyboard.press('Enter');
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 5000 });
  // VS Code draws a tree change up to 200 ms after the extension reports it (it debounces them).
  let hl = [];
  for (let i = 0; i < 30; i++) {
    hl = await treeRows().locator('.highlight').allInnerTexts();
    if (hl.length && hl.every((t) => t.toLowerCase() === 'splitter')) break;
    await page.waitForTimeout(100);
  }
  if (!hl.length || !hl.every((t) => t.toLowerCase() === 'splitter')) throw new Error('highlights: ' + JSON.stringify(hl));
  const desc = await sidebar.locator('.pane-header:has-text("Tree") .description').first().innerText();
  if (!desc.includes('splitter')) throw new Error('description: ' + desc);
  await shootPanel('vscode-search.png');
  // Escape in the box puts back the search it opened with.
  await focusTree();
  await page.keyboard.press('Control+KeyF');
  await page.locator('.quick-input-widget input').waitFor({ state: 'visible', timeout: 5000 });
  await page.keyboard.press('End'); // the box opens with its text selected
  await page.keyboard.type(' xyzzy', { delay: 50 });
  await waitState((s) => s.search === 'splitter xyzzy', 'search while typing', 5000);
  await page.keyboard.press('Escape');
  await waitState((s) => s.search === 'splitter', 'Escape restores the search', 5000);
  await palette('Session Tree: Clear Search');
  await waitState((s) => s.search === '', 'search cleared', 5000);
  return { highlights: hl.length, description: desc };
});

const before = readState();
await check('/branch keeps the server\'s order as you type; Enter forks at the highlighted row', async () => {
  await palette('/branch');
  await quickInput('user');
  const pick = await waitState((s) => s.pick?.value === 'user', 'the server\'s rows for "user"', 8000);
  const items = page.locator('.quick-input-list .monaco-list-row');
  await items.first().waitFor({ timeout: 8000 });
  await page.waitForTimeout(300);
  const shown = (await listInOrder(items)).map((r) => r.text);
  const want = pick.pick.labels;
  if (shown.length !== want.length || !want.every((w, i) => shown[i].startsWith(w))) {
    throw new Error(`the list is not in the server's order:\n  shown ${JSON.stringify(shown)}\n  server ${JSON.stringify(want)}`);
  }
  // Walk the highlight down to "Use the csv crate instead." (the server ranks the active branch first).
  const k = want.findIndex((w) => w.includes('Use the csv crate instead.'));
  if (k < 1) throw new Error(`expected "Use the csv crate instead." below the first row: ${JSON.stringify(want)}`);
  for (let i = 0; i < k; i++) await page.keyboard.press('ArrowDown');
  await page.waitForTimeout(200);
  const highlighted = (await listInOrder(items)).find((r) => r.focused)?.text ?? '';
  if (!highlighted.startsWith(want[k])) throw new Error(`ArrowDown highlighted "${highlighted}", expected the server's row ${k} "${want[k]}"`);
  await page.keyboard.press('Enter');
  const s = await waitState((s) => s.branch && s.session !== before.session, 'branch', 10000);
  if (s.branch.error) throw new Error(s.branch.error);
  if (s.branch.entryId !== pick.pick.ids[k]) throw new Error(`forked at ${s.branch.entryId}, the highlighted row is ${pick.pick.ids[k]}`);
  if (!s.branch.newPath || !fs.existsSync(s.branch.newPath)) throw new Error('new file missing: ' + s.branch.newPath);
  if (path.dirname(s.branch.newPath) !== sessionDir) throw new Error('new file is not beside the source: ' + s.branch.newPath);
  await waitState((s) => s.chatInput === 'Use the csv crate instead.', 'chat prefill', 5000);
  // The fork holds the path before the chosen message (up to the branch summary), not the message.
  await treeRow('branch summary').waitFor({ timeout: 5000 });
  await treeRow('Use the csv crate instead.').waitFor({ state: 'detached', timeout: 5000 });
  return { newPath: path.basename(s.branch.newPath), rows: s.lines.length, highlighted };
});

// ---------------------------------------------------------------- the chat input belongs to its session
await check('the chat input belongs to its session: the text /branch put into the fork is not in the source\'s input (the source keeps its own); back in the fork it is there again', async () => {
  const fork = readState();
  const prefilled = 'Use the csv crate instead.';
  if (fork.chatInput !== prefilled) throw new Error('the fork\'s input: ' + JSON.stringify(fork.chatInput));
  // The source's own input when /branch ran (the text of a message chosen there earlier).
  const own = before.chatInput ?? '';
  if (own === prefilled) throw new Error('the source already held the fork\'s text');
  await expandSessions();
  const source = sessionRows().filter({ hasText: 'CSV importer quoted commas' }).filter({ hasNotText: 'fork of' }).first();
  const s = await openFromSessions(source, (s) => s.session === before.session, 'the source session on screen');
  await waitState((s) => s.chatInput === own, 'the source\'s own input', 5000).catch(() => {
    throw new Error(`the source session's input holds ${JSON.stringify(readState().chatInput)}, not its own ${JSON.stringify(own)}`);
  });
  const input = chatFrame().locator('#input');
  const shown = await input.inputValue({ timeout: 5000 });
  if (shown !== own) throw new Error('the webview input shows ' + JSON.stringify(shown));
  // Back in the fork, its text is back.
  const forkRow = sessionRows().filter({ hasText: 'fork of' }).first();
  await openFromSessions(forkRow, (x) => x.session === fork.session, 'the fork on screen');
  await waitState((x) => x.chatInput === prefilled, 'the fork with its text again', 10000);
  if ((await input.inputValue({ timeout: 5000 })) !== prefilled) throw new Error('the webview input does not show the fork\'s text');
  await collapseSessions();
  return { source: path.basename(s.session), own, fork: path.basename(new URL(fork.session).pathname) };
});

await check('Sessions view: the fork names the session it came from; Open Session… shows ages and entry counts', async () => {
  const s = readState();
  await expandSessions();
  await sessionRows().filter({ hasText: 'fork of' }).first().waitFor({ timeout: 8000 });
  const fork = (await listInOrder(sessionRows())).find((r) => r.text.includes('fork of'));
  if (!fork.text.includes('fork of CSV importer quoted commas')) throw new Error('fork row: ' + fork.text);
  await collapseSessions();
  await palette('Session Tree: Open Session…');
  const items = page.locator('.quick-input-list .monaco-list-row');
  await items.first().waitFor({ timeout: 8000 });
  // (VS Code appends its own group labels to an item's text: "recently used", "similar commands".)
  const texts = (await listInOrder(items)).map((r) => r.text.replace(/(recently used|similar commands|other commands)$/, ''));
  await page.keyboard.press('Escape');
  if (!texts.length || !texts.every((t) => / ago\b/.test(t) && /\d entries\b/.test(t))) throw new Error('items: ' + JSON.stringify(texts));
  if (!texts.some((t) => t.includes('fork of'))) throw new Error('no item names its source: ' + JSON.stringify(texts));
  if (readState().session !== s.session) throw new Error('Escape opened another session');
  return { fork: fork.text.slice(0, 100), items: texts.length };
});

await check('an agent-style append to the file shows up live (follow)', async () => {
  const s = readState();
  const file = new URL(s.session).pathname;
  const id = 'e2e0' + Date.now().toString(16).slice(-4);
  const line = {
    type: 'message', id, parentId: s.leaf, timestamp: new Date().toISOString(),
    message: { role: 'assistant', content: [{ type: 'text', text: 'Live from the agent' }], api: 'anthropic-messages', provider: 'anthropic', model: 'claude-sonnet-4', usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: 'stop', timestamp: Date.now() },
  };
  const text = fs.readFileSync(file, 'utf8');
  fs.appendFileSync(file, (text.endsWith('\n') ? '' : '\n') + JSON.stringify(line) + '\n');
  await treeRow('Live from the agent').waitFor({ timeout: 10000 });
  await waitState((s) => s.leaf === id, 'leaf follows the append', 5000);
  return { id, file: path.basename(file) };
});

await check('with follow off, an append updates the rows and keeps the selection', async () => {
  await palette('Session Tree: Stop Following the Agent');
  await sidebar.locator('.pane-header:has-text("Tree") .description', { hasText: 'follow off' }).first().waitFor({ timeout: 5000 });
  const before = readState();
  const file = new URL(before.session).pathname;
  const id = 'e2e1' + Date.now().toString(16).slice(-4);
  const line = { type: 'message', id, parentId: before.leaf, timestamp: new Date().toISOString(),
    message: { role: 'assistant', content: [{ type: 'text', text: 'Second live line' }], api: 'anthropic-messages', provider: 'anthropic', model: 'claude-sonnet-4', usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: 'stop', timestamp: Date.now() } };
  fs.appendFileSync(file, JSON.stringify(line) + '\n');
  await treeRow('Second live line').waitFor({ timeout: 10000 });
  const after = await waitState((s) => s.leaf === id, 'the leaf to move', 5000);
  if (after.selected !== before.selected) throw new Error(`selection moved: ${before.selected} → ${after.selected}`);
  await palette('Session Tree: Follow the Agent Live');
  return { selected: after.selected, leaf: after.leaf };
});

await check('an agent that cannot run is said before Send: the state line names the setting, Send reads Append', async () => {
  // omp's executable is set to a file that does not exist (test-vscode.sh): this omp session's agent cannot run.
  const s = await waitState((s) => s.chatAgent?.state === 'unavailable', 'the agent state', 10000);
  if (s.chatAgent.agent !== 'omp') throw new Error('agent: ' + JSON.stringify(s.chatAgent));
  const frame = chatFrame();
  await frame.locator('#status-line', { hasText: 'omp · unavailable' }).waitFor({ timeout: 5000 });
  const detail = await frame.locator('#status-detail').innerText();
  if (!detail.includes('does not exist') || !detail.includes('Send appends your message without an answer; set sessiontree.agent.ompPath in your user settings')) {
    throw new Error('detail: ' + detail);
  }
  const label = await frame.locator('#send').innerText();
  if (label !== 'Append') throw new Error('the button reads ' + label);
  if (!(await frame.locator('#setting').isVisible())) throw new Error('no Open Settings button');
  return detail;
});

await check('Send with an agent that cannot run appends the message at the leaf and says it was not answered', async () => {
  const input = chatFrame().locator('#input');
  await input.fill('Sent from the chat view');
  await input.press('Enter');
  await treeRow('Sent from the chat view').waitFor({ timeout: 10000 });
  const s = await waitState((s) => s.chatInput === '' && s.chatLog?.append?.text === 'Sent from the chat view', 'input cleared', 5000);
  const file = new URL(s.session).pathname;
  if (!fs.readFileSync(file, 'utf8').includes('Sent from the chat view')) throw new Error('not in the file');
  await chatFrame().locator('.entry.notice', { hasText: 'Appended without an answer' }).waitFor({ timeout: 5000 });
  await chatFrame().locator('.entry.msg.user', { hasText: 'Sent from the chat view' }).waitFor({ timeout: 5000 });
  return { messages: s.chatMessages };
});

await check('the state line\'s Open Settings button opens the setting it names', async () => {
  await chatFrame().locator('#setting').click();
  const search = page.locator('.settings-editor .suggest-input-container .monaco-editor textarea, .settings-editor .search-container textarea').first();
  await page.locator('.settings-editor').first().waitFor({ timeout: 10000 });
  await page.locator('.settings-editor .setting-item-contents', { hasText: /Omp Path/i }).first().waitFor({ timeout: 10000 });
  const query = await search.inputValue().catch(() => '');
  await palette('View: Close Editor', 'Close Editor');
  await page.locator('.settings-editor').first().waitFor({ state: 'detached', timeout: 5000 }).catch(() => {});
  // Back into the chat (a click: the page's focus comes back with it, and the keys bound to it).
  await chatFrame().locator('#input').click();
  await waitState((s) => s.chatLog?.focused === true, 'the chat to have the focus', 10000);
  return { query };
});

await check('filter keys also work while the chat has focus (Ctrl+O, Alt+D)', async () => {
  const input = chatFrame().locator('#input');
  await input.focus();
  await page.keyboard.press('Control+KeyO');
  await waitState((s) => s.filter === 'noTools', 'filter noTools from chat', 5000);
  await page.keyboard.press('Alt+KeyD');
  await waitState((s) => s.filter === 'default', 'filter default from chat', 5000);
});

await check('outside the tree and the chat, Ctrl+O is VS Code\'s own again (Open File)', async () => {
  // Focus the file explorer (the Session Tree views are hidden then, the chat included).
  await page.keyboard.press('Alt+KeyD'); // from the chat: back to the default filter first
  await waitState((s) => s.filter === 'default', 'filter default', 5000);
  // (A click while a webview holds the focus can be taken for the focus alone: click again then.)
  const explorerTitle = sidebar.locator('.composite.title', { hasText: /explorer/i }).first();
  for (let attempt = 0; ; attempt++) {
    await page.locator('.part.activitybar [aria-label^="Explorer"]').first().click();
    try {
      await explorerTitle.waitFor({ timeout: 5000 });
      break;
    } catch (e) {
      if (attempt >= 1) throw e;
    }
  }
  await page.waitForTimeout(500);
  await page.keyboard.press('Control+KeyO');
  await page.locator('.quick-input-widget', { hasText: 'Open File' }).waitFor({ timeout: 5000 });
  await page.keyboard.press('Escape');
  await page.waitForTimeout(300);
  if (readState().filter !== 'default') throw new Error('the filter changed: ' + readState().filter);
  await palette('View: Show Session Tree', 'Show Session Tree'); // opens the container whatever its state
  await sidebar.locator('.pane-header', { hasText: 'Chat' }).first().waitFor({ timeout: 5000 });
});

await check('Escape twice on the empty chat input opens the tree', async () => {
  const input = chatFrame().locator('#input');
  await input.focus();
  const n = readState().openTree ?? 0;
  await input.press('Escape');
  await input.press('Escape');
  await waitState((s) => (s.openTree ?? 0) > n, 'openTree', 5000);
});

await check('hand-off opens the agent CLI in a terminal', async () => {
  await palette("Session Tree: Continue in the Agent's CLI");
  const s = await waitState((s) => s.handOff, 'handOff', 5000);
  if (s.handOff.command !== 'omp' || s.handOff.args[0] !== '--resume') throw new Error(JSON.stringify(s.handOff));
  await page.locator('.part.panel .terminal').first().waitFor({ timeout: 10000 }).catch(() => {});
  return s.handOff;
});

await check('/tree with the side bar hidden offers a quick pick of the rows', async () => {
  await palette('View: Close Primary Side Bar');
  await sidebar.waitFor({ state: 'hidden', timeout: 5000 });
  await palette('Session Tree: /tree');
  await quickInput('parser');
  await pickRow('Let me look at the parser').waitFor({ timeout: 8000 });
  const pick = await waitState((s) => s.pick?.value === 'parser', 'the server\'s rows for "parser"', 8000);
  await page.waitForTimeout(300);
  const items = (await listInOrder(page.locator('.quick-input-list .monaco-list-row'))).map((r) => r.text);
  if (!pick.pick.labels.every((w, i) => items[i]?.startsWith(w))) throw new Error(`not the server's order: ${JSON.stringify(items)} vs ${JSON.stringify(pick.pick.labels)}`);
  await page.keyboard.press('Escape');
  await palette('View: Toggle Primary Side Bar Visibility');
  await sidebar.waitFor({ state: 'visible', timeout: 5000 });
  return items.map((t) => t.replace(/\s+/g, ' ').slice(0, 50));
});

await check('a 2000-entry session shows a window of rows with pagers; paging moves the window', async () => {
  await expandSessions();
  const row = sidebar.locator('.pane:has(.pane-header:has-text("Sessions")) .monaco-list-row', { hasText: 'Synthetic session (seed 7)' }).first();
  const s = await openFromSessions(row, (s) => s.session?.includes('synthetic') && s.window?.total > s.window?.rows, 'the windowed big session');
  await collapseSessions();
  // The window is around the leaf (revealed at the bottom): Home goes to the first item, the pager.
  await page.waitForTimeout(1000); // let the reveal of the leaf settle
  const focusedRow = sidebar.locator('.pane:has(.pane-header:has-text("Tree")) .monaco-list-row.focused');
  let focused = '';
  for (let i = 0; i < 3 && !/earlier rows/.test(focused); i++) {
    await focusTree();
    await page.keyboard.press('Home');
    await page.waitForTimeout(300);
    focused = await focusedRow.first().innerText({ timeout: 2000 }).catch(() => '');
  }
  if (!/earlier rows/.test(focused)) throw new Error('Home did not reach the pager; focused: ' + focused);
  await page.keyboard.press('Enter');
  const s2 = await waitState((x) => x.window?.start < s.window.start, 'the window to move up', 20000);
  return { before: s.window, after: s2.window };
});

await check('a pi session (pi\'s own folder) opens with its rows; the hand-off runs pi --session', async () => {
  await expandSessions();
  // The csv pi session (named "Quoted commas␇ in pi"), not the one pi writes for the live agent.
  const row = sidebar.locator('.pane:has(.pane-header:has-text("Sessions")) .monaco-list-row', { hasText: /in pi.*· pi/ }).first();
  const s = await openFromSessions(row, (s) => s.session?.includes('/pi-agent/'), 'the pi session');
  await collapseSessions();
  await treeRow('PR opened').waitFor({ timeout: 8000 });
  // Its name has a tab and a bell: the Chat title draws them as the rows do.
  const title = sidebar.locator('.pane-header', { hasText: /chat/i }).first();
  await title.filter({ hasText: /in pi/i }).waitFor({ timeout: 8000 });
  const titleText = await title.evaluate((e) => e.textContent ?? '');
  if (CONTROL.test(titleText) || !/quoted\u2409commas\u2407 in pi/i.test(titleText)) throw new Error('chat title: ' + JSON.stringify(titleText));
  await palette("Session Tree: Continue in the Agent's CLI");
  const h = await waitState((x) => x.handOff?.command === 'pi', 'pi hand-off', 5000);
  if (h.handOff.args[0] !== '--session') throw new Error(JSON.stringify(h.handOff));
  return { rows: s.lines.length, handOff: h.handOff.command + ' ' + h.handOff.args[0] };
});

// ---------------------------------------------------------------- folding (pi's /tree folding, on the server's fold state)
// The csv pi session is on screen: its branch point has two branches, "Write the state machine
// by hand." (not on the active path, drawn `└⊟`) and the branch summary leading to the leaf.
const FOLD_ROW = 'user: Write the state machine by hand.';
const FOLDED_AWAY = ['Benchmark it against the old splitter.', 'The new splitter is 8% slower'];
/** Moves the keyboard focus in the Tree onto the row showing `text` (from the top, downwards). */
async function focusRow(text) {
  await focusTree();
  const focused = sidebar.locator('.pane:has(.pane-header:has-text("Tree")) .monaco-list-row.focused').first();
  await page.keyboard.press('Home');
  for (let i = 0; i < 60; i++) {
    await page.waitForTimeout(100);
    if ((await focused.innerText({ timeout: 1000 }).catch(() => '')).includes(text)) return;
    await page.keyboard.press('ArrowDown');
  }
  throw new Error(`the focus never reached "${text}"`);
}
const rowText = async (text) => ((await treeRow(text).innerText({ timeout: 5000 })) ?? '').replace(/\s+/g, ' ');

await check('folding: Ctrl+← on a branch\'s first row folds it (⊟ → ⊞), its rows leave the tree, nothing else', async () => {
  const s0 = readState();
  if (!s0.session?.includes('/pi-agent/')) throw new Error('not on the pi session: ' + s0.session);
  const before = await rowText(FOLD_ROW);
  if (!/[├└]⊟/.test(before)) throw new Error('no ⊟ marker on the foldable row: ' + before);
  for (const t of FOLDED_AWAY) await treeRow(t).waitFor({ timeout: 5000 });
  const rows0 = s0.window.total;
  await focusRow(FOLD_ROW);
  await page.keyboard.press('Control+ArrowLeft');
  const s = await waitState((s) => s.folded?.length === 1 && !s.lines.some((l) => l.includes(FOLDED_AWAY[0])), 'the branch folded', 10000);
  for (const t of FOLDED_AWAY) await treeRow(t).waitFor({ state: 'detached', timeout: 5000 });
  const after = await rowText(FOLD_ROW);
  if (!/[├└]⊞/.test(after)) throw new Error('no ⊞ marker on the folded row: ' + after);
  if (!s.lines.some((l) => l.includes('⊞') && l.includes('Write the state machine'))) throw new Error('the server did not draw it folded: ' + JSON.stringify(s.lines));
  // Exactly the branch's rows left: the active branch and the leaf are still there.
  const hidden = rows0 - s.window.total;
  if (hidden !== 4) throw new Error(`${hidden} rows left the tree, the folded branch has 4 below its first row`);
  await treeRow('PR opened').waitFor({ timeout: 5000 });
  const drawn = (await rowTexts()).length;
  if (drawn !== s.window.rows) throw new Error(`the tree draws ${drawn} rows, the server sent ${s.window.rows}`);
  await shootPanel('vscode-folded.png');
  return { folded: s.folded, rows: [rows0, s.window.total], row: after.slice(0, 60) };
});

await check('folding: the fold survives an append (the session\'s fold state is sent with every rows request)', async () => {
  const s0 = readState();
  const file = new URL(s0.session).pathname;
  const id = 'f01d' + Date.now().toString(16).slice(-4);
  const line = { type: 'message', id, parentId: s0.leaf, timestamp: new Date().toISOString(),
    message: { role: 'user', content: 'Appended while a branch is folded', timestamp: Date.now() } };
  fs.appendFileSync(file, JSON.stringify(line) + '\n');
  await treeRow('Appended while a branch is folded').waitFor({ timeout: 10000 });
  const s = await waitState((s) => s.leaf === id, 'the append', 10000);
  if (JSON.stringify(s.folded) !== JSON.stringify(s0.folded)) throw new Error('the fold state changed: ' + JSON.stringify(s.folded));
  for (const t of FOLDED_AWAY) {
    if (s.lines.some((l) => l.includes(t))) throw new Error(`"${t}" is back after the append`);
    if (await treeRow(t).count()) throw new Error(`"${t}" is drawn after the append`);
  }
  if (!/[├└]⊞/.test(await rowText(FOLD_ROW))) throw new Error('the folded row lost its ⊞');
  return { leaf: id, rows: s.lines.length };
});

await check('folding: the context menu\'s "Unfold" brings the branch\'s rows back (⊞ → ⊟); Ctrl+→ on an unfolded row only moves', async () => {
  await focusRow(FOLD_ROW);
  await page.keyboard.press('Shift+F10');
  const menu = page.locator('.context-view .monaco-menu');
  await menu.waitFor({ timeout: 5000 });
  const items = await menu.locator('.action-item').allInnerTexts();
  if (items.some((t) => /^Fold$/m.test(t.trim()))) throw new Error('a folded row offers Fold: ' + JSON.stringify(items));
  // Chosen with the keys: a click on a menu item can be lost.
  let chosen = false;
  for (let i = 0; i < 16 && !chosen; i++) {
    await page.keyboard.press('ArrowDown');
    const focused = await menu.locator('.action-item.focused').first().innerText({ timeout: 500 }).catch(() => '');
    if (focused.trim() === 'Unfold') {
      await page.keyboard.press('Enter');
      chosen = true;
    }
  }
  if (!chosen) throw new Error('the row\'s menu has no "Unfold": ' + JSON.stringify(items));
  const s = await waitState((s) => s.folded?.length === 0 && s.lines.some((l) => l.includes(FOLDED_AWAY[0])), 'the branch unfolded', 10000).catch((e) => {
    const x = readState();
    throw new Error(`${e.message.split(';')[0]}; folded ${JSON.stringify(x.folded)}, lines ${JSON.stringify(x.lines)}`, { cause: e });
  });
  for (const t of FOLDED_AWAY) await treeRow(t).waitFor({ timeout: 5000 });
  const after = await rowText(FOLD_ROW);
  if (!/[├└]⊟/.test(after)) throw new Error('the row did not go back to ⊟: ' + after);
  // Unfolding a row that is not folded folds nothing and changes no rows (pi moves the cursor).
  await focusRow(FOLD_ROW);
  await page.keyboard.press('Control+ArrowRight');
  await page.waitForTimeout(800);
  const s2 = readState();
  if (s2.folded.length || s2.lines.length !== s.lines.length) throw new Error('Ctrl+→ changed the rows: ' + JSON.stringify(s2.folded));
  return { rows: s.lines.length };
});

// ---------------------------------------------------------------- branch-segment moves over the whole tree
// pi's fold keys on a row they cannot fold or unfold move the selection by branch segments; the
// server finds where over the whole tree (`segment`). Each dialect gets a session written here: a
// chain of 1500 user messages from the root to a branch point whose two children are "A" (the
// leaf, the file's last line) and "B". The child holding the leaf is drawn first, so the rows are
// root … branch point, A, B; the Tree has a window of 300 rows (sessiontree.maxRows), around the
// leaf at first. Up from A (a branch's first row without children: nothing to fold) goes to the
// start of the segment above, the root, 1500 rows up; down from the root (not folded) follows the
// chain to the branch point's first child, A again. Both targets lie outside the window on screen.
const SEGMENT_CHAIN = 1500;
/** Writes the long session of `dialect` (omp: with its title slot) and returns its ids. */
function writeSegmentSession(dialect, file) {
  const base = dialect === 'pi' ? 0x5e900000 : 0x5e800000;
  const hex = (n) => (base + n).toString(16);
  const t0 = Date.parse('2025-03-01T09:00:00.000Z');
  const at = (n) => new Date(t0 + n * 1000).toISOString();
  const lines = [];
  if (dialect === 'omp') {
    const slot = JSON.stringify({ type: 'title', v: 1, title: 'Segment jumps (omp)', source: 'user', updatedAt: at(0), pad: '' });
    lines.push(slot.replace('"pad":""', `"pad":"${' '.repeat(255 - slot.length)}"`));
  }
  lines.push(JSON.stringify({ type: 'session', version: 3, id: `0195e000-0000-7000-8000-00000000${dialect === 'pi' ? '0a01' : '0a02'}`, timestamp: at(0), cwd: process.env.E2E_WORKSPACE ?? '/tmp' }));
  const msg = (id, parentId, n, text) => JSON.stringify({ type: 'message', id, parentId, timestamp: at(n), message: { role: 'user', content: text, timestamp: t0 + n * 1000 } });
  for (let i = 0; i < SEGMENT_CHAIN; i++) lines.push(msg(hex(i), i ? hex(i - 1) : null, i + 1, i ? `Segment jumps (${dialect}): chain ${i}` : `Segment jumps (${dialect}): the root`));
  const point = hex(SEGMENT_CHAIN - 1);
  const a = hex(SEGMENT_CHAIN + 1);
  lines.push(msg(hex(SEGMENT_CHAIN), point, SEGMENT_CHAIN + 1, `Segment jumps (${dialect}): branch B`));
  lines.push(msg(a, point, SEGMENT_CHAIN + 2, `Segment jumps (${dialect}): branch A`));
  fs.writeFileSync(file, lines.join('\n') + '\n');
  if (dialect === 'omp' && Buffer.byteLength(lines[0]) !== 255) throw new Error('the title slot is not 256 bytes');
  return { root: hex(0), leaf: a, rows: SEGMENT_CHAIN + 2 };
}

await check('fold keys on rows they cannot fold move by the server\'s branch segments over the whole tree: Ctrl+← from the leaf selects the root 1500 rows up, Ctrl+→ the leaf again (omp and pi, a window of 300 rows)', async () => {
  const piDir = path.join(process.env.E2E_PI_AGENT_DIR ?? '', 'sessions', `--${(process.env.E2E_WORKSPACE ?? '').replace(/^\//, '').replace(/[/\\:]/g, '-')}--`);
  const sessions = [['omp', sessionDir], ['pi', piDir]].map(([dialect, dir]) => {
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `2025-03-01T09-00-00-000Z_segment-jumps-${dialect}.jsonl`);
    const want = writeSegmentSession(dialect, file);
    // Dated old, so it lists last (the rows other checks click stay where they were).
    const old = new Date('2024-06-01T00:00:00Z');
    fs.utimesSync(file, old, old);
    return { dialect, file, want };
  });
  await page.keyboard.press('Escape');
  await palette('Session Tree: Refresh Sessions');
  await waitState((s) => sessions.every(({ file }) => s.listed?.uris?.some((u) => u.endsWith(path.basename(file)))), 'the long sessions listed', 15000);
  const out = {};
  for (const { dialect, file, want } of sessions) {
    // Opened from the Open Session… pick (dated old, they list below the rows the Sessions view shows).
    await palette('Session Tree: Open Session…');
    await quickInput(`Segment jumps (${dialect})`);
    await page.locator('.quick-input-list .monaco-list-row', { hasText: `Segment jumps (${dialect})` }).first().waitFor({ timeout: 8000 });
    await page.keyboard.press('Enter');
    const s0 = await waitState((s) => s.session?.endsWith(path.basename(file)) && s.window?.total === want.rows && s.selected === want.leaf, `the ${dialect} session, its leaf selected`, 20000);
    if (s0.window.start === 0 || s0.window.rows >= want.rows) throw new Error(`the root is in the window on screen: ${JSON.stringify(s0.window)}`);
    // The keyboard on the leaf "A": the window ends with A, B (no pager below).
    await focusTree();
    await page.keyboard.press('End');
    await page.keyboard.press('ArrowUp');
    const focused = sidebar.locator('.pane:has(.pane-header:has-text("Tree")) .monaco-list-row.focused').first();
    await focused.filter({ hasText: 'branch A' }).waitFor({ timeout: 5000 });
    await page.keyboard.press('Control+ArrowLeft');
    const up = await waitState((s) => s.selected === want.root, `Ctrl+← to select the root (${dialect})`, 10000);
    // The server's window is around it, its own selection mark (›) on the root's line.
    if (up.window.start !== 0 || !up.lines.some((l) => l.includes('›') && l.includes('the root'))) throw new Error(`not the window around the root: ${JSON.stringify({ window: up.window, lines: up.lines.slice(0, 3) })}`);
    await focused.filter({ hasText: 'the root' }).waitFor({ timeout: 5000 });
    if (readState().folded?.length) throw new Error('Ctrl+← folded: ' + JSON.stringify(readState().folded));
    await page.keyboard.press('Control+ArrowRight');
    const down = await waitState((s) => s.selected === want.leaf, `Ctrl+→ to select the leaf again (${dialect})`, 10000);
    if (down.window.start === 0 || !down.lines.some((l) => l.includes('›') && l.includes('branch A'))) throw new Error(`not the window around the leaf: ${JSON.stringify(down.window)}`);
    await focused.filter({ hasText: 'branch A' }).waitFor({ timeout: 5000 });
    if (readState().folded?.length) throw new Error('Ctrl+→ folded: ' + JSON.stringify(readState().folded));
    out[dialect] = { up: up.window.start, down: down.window.start };
  }
  return out;
});

await check('after "Restart the Server" the session reopens and follows appends again', async () => {
  await palette('Session Tree: Restart the Server');
  const s = await waitState((s) => s.restarted, 'restart', 20000);
  const file = new URL(s.session).pathname;
  const id = 'e2e2' + Date.now().toString(16).slice(-4);
  const line = { type: 'message', id, parentId: s.leaf, timestamp: new Date().toISOString(),
    message: { role: 'user', content: 'Appended after the restart', timestamp: Date.now() } };
  fs.appendFileSync(file, JSON.stringify(line) + '\n');
  await waitState((x) => x.leaf === id, 'the append after the restart', 10000);
  await treeRow('Appended after the restart').waitFor({ timeout: 8000 });
  return { leaf: id };
});

// ---------------------------------------------------------------- the live agent (pi)
// test-vscode.sh installed the real pi, started the tests' model server (its rules file is
// MODEL_RULES) and made the home folder the extension host runs in, whose pi's only model is that
// server; pi wrote the session below ("first question") itself.
const modelRules = process.env.MODEL_RULES;
const modelLog = process.env.MODEL_LOG;
const piSession = process.env.PI_CHAT_SESSION;
const LONG = 'The answer streams in small pieces, one after another, until the very last word arrives here.';
const setRules = (rules) => fs.writeFileSync(modelRules, JSON.stringify(rules));
const modelRequests = () => (fs.existsSync(modelLog) ? fs.readFileSync(modelLog, 'utf8').trim().split('\n').filter(Boolean).length : 0);
const entriesOf = (file) => fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.trim().startsWith('{')).map((l) => JSON.parse(l));
const textOf = (m) => (typeof m?.content === 'string' ? m.content : (m?.content ?? []).filter((p) => p.type === 'text').map((p) => p.text).join(''));
const chatSend = async (text) => {
  const input = chatFrame().locator('#input');
  await input.fill(text);
  await input.press('Enter');
};

await check('the live agent: a pi session\'s chat shows its agent, ready to answer', async () => {
  if (!modelRules || !piSession || !fs.existsSync(piSession)) throw new Error(`the agent set-up is missing: ${modelRules} ${piSession}`);
  setRules([
    // After a tool's result, the model closes the turn (the rules below would call the tool again).
    { when: { lastToolResult: '' }, reply: { text: 'done: the file is written.' } },
    { when: { lastUser: '^Stream' }, reply: { thinking: 'Counting the words first.', text: LONG, chunk: 6, delayMs: 150 } },
    { when: { lastUser: '^Hold' }, reply: { text: 'Holding this answer for a while', hold: true, chunk: 4 } },
    { when: { lastUser: '^Write' }, reply: { text: 'Writing it.', toolCalls: [{ name: 'write', arguments: { path: 'hello.txt', content: 'hello\n' } }] } },
  ]);
  await expandSessions();
  const row = await sessionRowInSight('first question');
  const s = await openFromSessions(row, (s) => s.session?.endsWith(path.basename(piSession)) && s.chatAgent?.agent === 'pi', 'the pi session and its agent');
  await collapseSessions();
  await chatFrame().locator('.entry.msg.assistant', { hasText: 'echo: first question' }).waitFor({ timeout: 10000 });
  const line = await chatFrame().locator('#status-line').innerText();
  if (!line.startsWith('pi · ')) throw new Error('status line: ' + line);
  if ((await chatFrame().locator('#send').innerText()) !== 'Send') throw new Error('the button does not read Send');
  return { state: s.chatAgent.state, line };
});

await check('Send: the real pi answers, streamed into the chat (text before the end), then the whole answer; the new rows are in the tree', async () => {
  const leafBefore = readState().leaf;
  const asked = modelRequests();
  await chatSend('Stream the answer, please');
  const streaming = chatFrame().locator('.entry.msg.assistant.streaming');
  await streaming.filter({ hasText: 'The answer' }).first().waitFor({ timeout: 120000 });
  const partial = await streaming.first().innerText();
  if (partial.includes('very last word')) throw new Error('the whole answer was there at once: ' + partial);
  await chatFrame().locator('.entry.msg.assistant:not(.streaming)', { hasText: 'until the very last word arrives here.' }).waitFor({ timeout: 90000 });
  const s = await waitState((s) => s.chatLog?.stream?.final === LONG && s.chatAgent?.state === 'idle', 'the end of the answer', 30000);
  if (!(s.chatLog.stream.deltas > 1) || s.chatLog.stream.streamed !== LONG) throw new Error('stream: ' + JSON.stringify(s.chatLog.stream));
  if (await chatFrame().locator('.entry.msg.streaming').count()) throw new Error('a streaming message is left');
  if (s.chatInput !== '') throw new Error('the input was not cleared: ' + s.chatInput);
  // The thinking is folded.
  const thinking = chatFrame().locator('.entry.msg.assistant details.block.thinking').last();
  if (await thinking.evaluate((d) => d.open)) throw new Error('the thinking is not folded');
  if (!(await thinking.locator('summary').innerText()).startsWith('Thinking')) throw new Error('thinking summary');
  // The file and the tree.
  const entries = entriesOf(piSession);
  const user = entries.find((e) => e.type === 'message' && textOf(e.message) === 'Stream the answer, please');
  const reply = user && entries.find((e) => e.parentId === user.id);
  if (!user || user.parentId !== leafBefore) throw new Error(`the question does not hang under the leaf ${leafBefore}: ${JSON.stringify(user)}`);
  if (!reply || textOf(reply.message) !== LONG) throw new Error('the answer is not in the file');
  await treeRow('user: Stream the answer, please').waitFor({ timeout: 15000 });
  await treeRow('assistant: The answer streams').waitFor({ timeout: 15000 });
  await waitState((s) => s.leaf === reply.id, 'the leaf to be the answer', 10000);
  if (modelRequests() !== asked + 1) throw new Error(`the model was asked ${modelRequests() - asked} times`);
  await shootPanel('vscode-chat-agent.png');
  return { partial: partial.replace(/\s+/g, ' ').slice(0, 80), deltas: s.chatLog.stream.deltas };
});

await check('a tool call and its result are one line each, expandable to the arguments', async () => {
  await chatSend('Write hello.txt');
  await waitState((s) => s.chatLog?.prompt?.text === 'Write hello.txt', 'the prompt taken', 60000);
  await chatFrame().locator('.entry.msg.assistant:not(.streaming)', { hasText: 'done: the file is written.' }).waitFor({ timeout: 90000 });
  const call = chatFrame().locator('details.block.tool-call').last();
  const summary = await call.locator('summary').innerText();
  if (!summary.includes('write') || !summary.includes('hello.txt')) throw new Error('the call reads ' + summary);
  if (await call.evaluate((d) => d.open)) throw new Error('the call is not folded');
  await call.locator('summary').click();
  await call.locator('pre', { hasText: '"path": "hello.txt"' }).waitFor({ timeout: 5000 });
  const result = chatFrame().locator('details.block.tool-result').last();
  if (await result.evaluate((d) => d.open)) throw new Error('the result is not folded');
  // A redraw (the transcript again) keeps the call open.
  await palette('Session Tree: Refresh Tree');
  await page.waitForTimeout(1000);
  if (!(await chatFrame().locator('details.block.tool-call').last().evaluate((d) => d.open))) throw new Error('the redraw closed the call');
  const file = path.join(process.env.E2E_WORKSPACE ?? '', 'hello.txt');
  if (!fs.existsSync(file)) throw new Error('pi did not run its own write tool: no ' + file);
  return { summary, result: await result.locator('summary').innerText() };
});

await check('Stop aborts an answer the model holds; the file keeps the aborted answer', async () => {
  await chatSend('Hold on to it');
  await chatFrame().locator('.entry.msg.assistant.streaming', { hasText: 'Hold' }).first().waitFor({ timeout: 90000 });
  const stop = chatFrame().locator('#stop');
  if (!(await stop.isVisible())) throw new Error('no Stop button while the agent answers');
  const line = await chatFrame().locator('#status-line').innerText();
  if (!line.includes('answering')) throw new Error('the state line reads ' + line);
  await stop.click();
  const s = await waitState((s) => s.chatLog?.abort?.aborted === true && s.chatAgent?.state === 'idle', 'the abort', 60000);
  await chatFrame().locator('.entry.msg.streaming').waitFor({ state: 'detached', timeout: 30000 });
  await stop.waitFor({ state: 'hidden', timeout: 10000 });
  const entries = entriesOf(piSession);
  const held = entries.find((e) => e.type === 'message' && textOf(e.message) === 'Hold on to it');
  const answer = held && entries.find((e) => e.parentId === held.id);
  if (answer?.message?.stopReason !== 'aborted') throw new Error('the aborted answer: ' + JSON.stringify(answer?.message));
  return { abort: s.chatLog.abort };
});

await check('"Append Without Running the Agent" appends the input without an answer', async () => {
  const asked = modelRequests();
  const input = chatFrame().locator('#input');
  await input.fill('Just a note for later');
  await waitState((s) => s.chatInput === 'Just a note for later', 'the input', 5000);
  await palette('Session Tree: Append Without Running the Agent');
  const s = await waitState((s) => s.chatLog?.append?.text === 'Just a note for later' && s.chatInput === '', 'the append', 20000);
  await treeRow('user: Just a note for later').waitFor({ timeout: 10000 });
  await page.waitForTimeout(1500);
  if (modelRequests() !== asked) throw new Error('the model was asked');
  const last = entriesOf(piSession).at(-1);
  if (last.id !== s.chatLog.append.entryId || textOf(last.message) !== 'Just a note for later') throw new Error('the last entry: ' + JSON.stringify(last));
  return { entryId: s.chatLog.append.entryId };
});

await check('an extension inside pi asks (a select dialog): a quick pick answers it', async () => {
  // test-vscode.sh put a pi extension in the agent's home whose /ask command asks for a colour.
  await chatSend('/ask');
  await pickRow('green').waitFor({ timeout: 60000 });
  const title = await page.locator('.quick-input-widget .quick-input-title').innerText().catch(() => '');
  await pickRow('green').click();
  await chatFrame().locator('.entry.notice', { hasText: 'picked green' }).waitFor({ timeout: 30000 });
  const s = await waitState((s) => s.chatLog?.dialog?.answer?.value === 'green', 'the dialog answer', 10000);
  if (s.chatLog.dialog.dialog !== 'select' || !s.chatLog.dialog.title.includes('Pick a colour')) throw new Error(JSON.stringify(s.chatLog.dialog));
  return { title, dialog: s.chatLog.dialog };
});

await check('pi exits (an extension writes to stderr and exits): the chat says so with its last stderr lines; the next Send starts a new pi', async () => {
  const pid = readState().chatAgent?.pid;
  await chatSend('/crash');
  await chatFrame().locator('.entry.notice.error', { hasText: 'crash: the extension stops pi here' }).first().waitFor({ timeout: 60000 });
  const exited = await waitState((s) => s.chatAgent?.state === 'exited', 'the state exited', 30000);
  await chatFrame().locator('#status-line', { hasText: 'exited' }).waitFor({ timeout: 10000 });
  const notice = await chatFrame().locator('.entry.notice.error', { hasText: 'crash: the extension stops pi here' }).first().innerText();
  if (!/\bexited\b/.test(notice)) throw new Error('the notice reads ' + notice);
  await chatSend('Stream after the exit');
  let answered = false;
  for (let i = 0; i < 240 && !answered; i++) {
    const entries = entriesOf(piSession);
    const q = entries.find((e) => e.type === 'message' && textOf(e.message) === 'Stream after the exit');
    answered = !!q && entries.some((e) => e.parentId === q.id && textOf(e.message) === LONG);
    if (!answered) await page.waitForTimeout(500);
  }
  if (!answered) throw new Error('the next Send was not answered');
  const s = await waitState((s) => s.chatAgent?.state === 'idle' && s.chatAgent?.pid && s.chatAgent.pid !== pid, 'a new pi, idle', 30000);
  return { notice: notice.replace(/\s+/g, ' ').slice(0, 90), exited: exited.chatAgent.state, pids: [pid, s.chatAgent.pid] };
});

// ---------------------------------------------------------------- a session not on disk yet
// /branch from the first user message of a pi session: pi writes such a session with its first
// assistant reply, so the server holds it in memory. Appending without the agent is refused there
// (the message would live only in memory); Send gives the session to pi, which answers from
// exactly its context and writes its file, as pi does with its own forks.
await check('a new pi session not on disk yet: "Append Without Running the Agent" is refused with the reason, the text kept, nothing written; Send goes to pi, asked once with only this session\'s context, which writes the session (its own header first) with its answer', async () => {
  const src = readState();
  await palette('/branch');
  await quickInput('first question');
  const pick = await waitState((s) => s.pick?.value === 'first question', 'the server\'s rows for "first question"', 8000);
  const k = pick.pick.labels.findIndex((l) => l.endsWith('first question'));
  if (k < 0) throw new Error('no "first question" row: ' + JSON.stringify(pick.pick.labels));
  await page.locator('.quick-input-list .monaco-list-row').first().waitFor({ timeout: 8000 });
  for (let i = 0; i < k; i++) await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  const s = await waitState((s) => s.branch?.entryId === pick.pick.ids[k] && s.session !== src.session, 'the branch', 15000);
  if (s.branch.error) throw new Error(s.branch.error);
  if (s.branch.written !== false || fs.existsSync(s.branch.newPath)) throw new Error('expected a session not on disk: ' + JSON.stringify(s.branch));
  await waitState((s) => s.chatInput === 'first question' && s.chatAgent?.agent === 'pi', 'the text in the new session\'s input', 15000);
  const asked = modelRequests();
  await palette('Session Tree: Append Without Running the Agent');
  const a = await waitState((s) => s.chatLog?.append?.notOnDisk === true, 'the append refused', 10000);
  if (a.chatInput !== 'first question') throw new Error('the input: ' + JSON.stringify(a.chatInput));
  await chatFrame().locator('.entry.notice', { hasText: 'Not appended: this new session is not on disk yet' }).first().waitFor({ timeout: 10000 });
  if (fs.existsSync(s.branch.newPath) || modelRequests() !== asked) throw new Error('the refused append wrote or asked');
  await chatFrame().locator('#input').press('Enter');
  const p = await waitState((s) => s.chatLog?.prompt?.text === 'first question' && s.chatLog.prompt.turn !== undefined && s.chatInput === '', 'Send taken by pi, the input cleared', 30000);
  let lines = [];
  for (let i = 0; i < 240; i++) {
    lines = fs.existsSync(s.branch.newPath) ? entriesOf(s.branch.newPath) : [];
    if (lines.some((e) => e.type === 'message' && e.message.role === 'assistant')) break;
    await page.waitForTimeout(500);
  }
  const header = lines[0] ?? {};
  if (header.type !== 'session' || header.id !== s.branch.sessionId || !header.parentSession) throw new Error('the file pi wrote: ' + JSON.stringify(lines).slice(0, 400));
  if (lines.filter((e) => e.type === 'session').length !== 1) throw new Error('more than one header');
  const said = lines.filter((e) => e.type === 'message').map((e) => `${e.message.role}: ${textOf(e.message)}`);
  if (JSON.stringify(said) !== JSON.stringify(['user: first question', 'assistant: echo: first question'])) throw new Error('the messages pi wrote: ' + JSON.stringify(said));
  if (modelRequests() !== asked + 1) throw new Error(`the model was asked ${modelRequests() - asked} times`);
  const users = JSON.parse(fs.readFileSync(modelLog, 'utf8').trim().split('\n').pop()).body.messages.filter((m) => m.role === 'user').map(textOf);
  if (JSON.stringify(users) !== JSON.stringify(['first question'])) throw new Error('the model saw: ' + JSON.stringify(users));
  await chatFrame().locator('.entry.msg.assistant', { hasText: 'echo: first question' }).first().waitFor({ timeout: 15000 });
  // Back to the session it came from, as the checks after this one expect.
  await expandSessions();
  const back = sessionRows().filter({ hasText: 'first question', hasNotText: 'fork of' }).first();
  await openFromSessions(back, (x) => x.session === src.session && x.chatAgent?.agent === 'pi', 'the source session again');
  await collapseSessions();
  // The Sessions view as the checks after this one expect it: without the new session's file.
  fs.rmSync(s.branch.newPath);
  await expandSessions();
  const forkRows = () => sessionRows().filter({ hasText: 'first question' }).filter({ hasText: 'fork of' }).count();
  for (let i = 0; i < 40 && (await forkRows()) > 0; i++) await page.waitForTimeout(250);
  if ((await forkRows()) > 0) throw new Error('the removed session is still listed');
  await collapseSessions();
  return { newPath: path.basename(s.branch.newPath), turn: p.chatLog.prompt.turn, lines: lines.length };
});

await check('"Install the Bridge for Terminal Agents" writes the bridge into the chosen agent\'s folder', async () => {
  await palette('Session Tree: Install the Bridge for Terminal Agents');
  await pickRow('pi').waitFor({ timeout: 10000 });
  await pickRow('pi').click();
  const s = await waitState((s) => s.installBridge?.path, 'the bridge installed', 15000);
  const want = path.join(process.env.E2E_PI_AGENT_DIR ?? '', 'extensions', 'sessiontree-bridge.ts');
  if (s.installBridge.path !== want || !fs.existsSync(want)) throw new Error(`installed at ${s.installBridge.path}, expected ${want}`);
  await page.locator('.notifications-toasts', { hasText: 'Restart pi in your terminal' }).first().waitFor({ timeout: 10000 });
  return s.installBridge;
});

// ---------------------------------------------------------------- rewind points (docs/rewind.md)
// The workspace becomes a git repository here (until now it was not one, so no earlier turn has a
// point) and stops being one at the end of the block (the omp checks below run without points).
// The real pi then writes files through its own `write` tool; the bridge records a point
// before the turn and one after it; the tree marks those rows, the hover counts the files changed
// since a point, "Compare Files with This Point" opens VS Code's multi-file diff with the point's
// content, "Restore Files to This Point" gives back the exact bytes, and "Undo Last Restore" gives
// back the user's own edit made after the turn.
const workspace = process.env.E2E_WORKSPACE ?? '';
const gitIn = (...args) => execFileSync('git', ['-C', workspace, ...args], { encoding: 'utf8' }).trim();
/** A file the user wrote before the turn: CRLF, a tab, non-ASCII, no newline at the end. */
const NOTES_BEFORE = 'kept by the user\r\nzwei\tdrei \u2014 \u00fcn\u00efcode\nno newline at the end';
const NOTES_BY_AGENT = 'rewritten by the agent\n';
const NEW_BY_AGENT = 'new from the agent\n';
const USER_EDIT = 'the user\'s own line, after the turn\n';
const notesFile = path.join(workspace, 'notes.txt');
const newFile = path.join(workspace, 'made-by-the-agent.txt');
const bytesOf = (file) => (fs.existsSync(file) ? fs.readFileSync(file).toString('utf8') : null);
/** Whether `file` holds exactly the bytes of `text` (UTF-8). */
const holds = (file, text) => fs.existsSync(file) && fs.readFileSync(file).equals(Buffer.from(text, 'utf8'));
let rewindTurn = {};
let untouched = {};
/** The model's rules of the checks around this block (put back at its end). */
const rulesAround = modelRules && fs.existsSync(modelRules) ? fs.readFileSync(modelRules, 'utf8') : '[]';
const gitState = () => ({ head: gitIn('rev-parse', 'HEAD'), branches: gitIn('for-each-ref', 'refs/heads'), index: fs.readFileSync(path.join(workspace, '.git', 'index')).toString('base64') });
/** Right-clicks the row and runs `item` of its context menu (chosen with the keys, as a click on a menu can be lost). */
async function rowMenu(text, item) {
  await page.mouse.move(900, 700);
  await treeRow(text).click({ button: 'right' });
  const menu = page.locator('.context-view .monaco-menu');
  await menu.locator('.action-item', { hasText: item }).first().waitFor({ timeout: 5000 });
  for (let i = 0; i < 12; i++) {
    await page.keyboard.press('ArrowDown');
    const focused = await menu.locator('.action-item.focused').first().innerText({ timeout: 500 }).catch(() => '');
    if (focused.includes(item)) {
      await page.keyboard.press('Enter');
      await menu.waitFor({ state: 'detached', timeout: 5000 });
      return;
    }
  }
  throw new Error(`the row's menu has no "${item}"`);
}
/** The modal VS Code asks with: checks its question, then presses `button`. */
async function answerModal(question, button) {
  const dialog = page.locator('.monaco-dialog-box').first();
  await dialog.waitFor({ timeout: 15000 });
  const text = (await dialog.innerText()).replace(/\s+/g, ' ');
  if (!question.test(text)) throw new Error('the dialog asks: ' + text);
  await dialog.locator('.monaco-button', { hasText: button }).first().click();
  await dialog.waitFor({ state: 'detached', timeout: 10000 });
  return text;
}

await check('rewind: the real pi writes files through its own tool in a git workspace; the bridge\'s two points reach the editor', async () => {
  if (!workspace || !piSession) throw new Error('the workspace or the pi session is missing');
  fs.writeFileSync(notesFile, NOTES_BEFORE);
  gitIn('init', '-q');
  gitIn('add', '-A');
  gitIn('-c', 'user.name=e2e', '-c', 'user.email=e2e@example.invalid', 'commit', '-qm', 'start');
  setRules([
    { when: { lastToolResult: '.' }, reply: { text: 'written both files' } },
    { when: { lastUser: 'Rewind me' }, reply: { text: 'Writing.', toolCalls: [
      { name: 'write', arguments: { path: 'notes.txt', content: NOTES_BY_AGENT } },
      { name: 'write', arguments: { path: 'made-by-the-agent.txt', content: NEW_BY_AGENT } },
    ] } },
  ]);
  await chatSend('Rewind me: change the files');
  await waitState((s) => s.chatLog?.prompt?.text === 'Rewind me: change the files', 'the prompt taken', 60000);
  await chatFrame().locator('.entry.msg.assistant:not(.streaming)', { hasText: 'written both files' }).waitFor({ timeout: 120000 });
  if (!holds(notesFile, NOTES_BY_AGENT) || !holds(newFile, NEW_BY_AGENT)) {
    throw new Error(`pi did not run its write tool: notes ${JSON.stringify(bytesOf(notesFile))}, new ${JSON.stringify(bytesOf(newFile))}`);
  }
  let user, last, toolUse;
  for (let i = 0; i < 60 && !last; i++) {
    const entries = entriesOf(piSession).filter((e) => e.type === 'message');
    user = entries.find((e) => e.message.role === 'user' && textOf(e.message).includes('Rewind me: change the files'));
    toolUse = user && entries.find((e) => e.parentId === user.id && e.message.stopReason === 'toolUse');
    last = entries.find((e) => e.message.role === 'assistant' && textOf(e.message) === 'written both files');
    if (!last) await page.waitForTimeout(500);
  }
  if (!user || !toolUse || !last) throw new Error('the turn\'s entries are not in the file');
  const s = await waitState((s) => [user.id, last.id].every((id) => s.rewindPoints?.includes(id)), 'both points announced', 60000);
  if (s.rewindPoints.includes(toolUse.id)) throw new Error('the tool-calling answer has a point of its own');
  // The user edits the agent's new file by hand after the turn.
  fs.appendFileSync(newFile, USER_EDIT);
  rewindTurn = { user: user.id, toolUse: toolUse.id, last: last.id };
  untouched = gitState();
  return { ...rewindTurn, points: s.rewindPoints };
});

await check('rewind: the tree marks the rows that have a point (◆), not the tool-calling answer', async () => {
  const userRow = treeRow('user: Rewind me: change the files');
  await userRow.filter({ hasText: '◆' }).waitFor({ timeout: 15000 });
  await treeRow('assistant: written both files').filter({ hasText: '◆' }).waitFor({ timeout: 15000 });
  const toolRow = (await rowTexts()).find((t) => t.includes('assistant: Writing.'));
  if (!toolRow) throw new Error('no row for the tool-calling answer: ' + JSON.stringify(await rowTexts()));
  if (toolRow.includes('◆')) throw new Error('the tool-calling answer is marked: ' + toolRow);
  const marked = (await rowTexts()).filter((t) => t.includes('◆'));
  if (marked.length !== 2) throw new Error('marked rows: ' + JSON.stringify(marked));
  return marked;
});

await check('rewind: the hover of a point\'s row counts the files changed since it (2 before the turn, 1 after)', async () => {
  const counts = {};
  for (const [text, want] of [['user: Rewind me: change the files', 2], ['assistant: written both files', 1]]) {
    const hovers = page.locator('.monaco-hover, .workbench-hover');
    const hover = hovers.filter({ hasText: 'files changed since this point' }).first();
    // As the tooltip check above: leave the row and glide back in, up to five rests.
    for (let attempt = 1; ; attempt++) {
      await page.mouse.move(900, 700);
      await hover.waitFor({ state: 'detached', timeout: 3000 }).catch(() => {});
      const box = await treeRow(text).boundingBox();
      if (!box) throw new Error(`the row "${text}" is not on the screen`);
      await page.mouse.move(box.x + 20, box.y + box.height / 2, { steps: 1 });
      await page.mouse.move(box.x + 40 + attempt * 10, box.y + box.height / 2, { steps: 8 });
      try {
        await hover.waitFor({ timeout: 8000 });
        break;
      } catch (e) {
        if (attempt >= 5) {
          const seen = await hovers.allInnerTexts().catch(() => []);
          throw new Error(`no tooltip with the files changed after ${attempt} rests; hovers on screen: ${JSON.stringify(seen.map((t) => t.slice(0, 120)))}`, { cause: e });
        }
      }
    }
    const said = (await hover.innerText()).replace(/\s+/g, ' ');
    const n = /files changed since this point: (\d+)/.exec(said)?.[1];
    if (Number(n) !== want) throw new Error(`the hover of "${text}" says ${JSON.stringify(said.slice(-120))}, expected ${want}`);
    counts[text] = Number(n);
  }
  await page.mouse.move(900, 700);
  return counts;
});

await check('rewind: "Compare Files with This Point" opens the multi-file diff, the point\'s content on the left', async () => {
  await rowMenu('user: Rewind me: change the files', 'Compare Files with This Point');
  const s = await waitState((s) => s.rewindCompare?.point === rewindTurn.user, 'the compare', 20000);
  const files = JSON.stringify(s.rewindCompare.files);
  if (files !== JSON.stringify([{ path: 'made-by-the-agent.txt', status: 'added' }, { path: 'notes.txt', status: 'modified' }])) throw new Error('compare: ' + files);
  const title = `Files changed since ${rewindTurn.user} (before)`;
  await page.locator('.tabs-container .tab', { hasText: title }).first().waitFor({ timeout: 15000 });
  const editor = page.locator('.part.editor .editor-instance').filter({ hasText: 'notes.txt' }).first();
  await editor.waitFor({ timeout: 15000 });
  // The left side is the point's notes.txt (the user's lines); the right side the agent's.
  let text = '';
  for (let i = 0; i < 50; i++) {
    text = (await editor.innerText()).replace(/\u00a0/g, ' ');
    if (text.includes('kept by the user') && text.includes('rewritten by the agent') && text.includes('made-by-the-agent.txt')) break;
    await page.waitForTimeout(200);
  }
  for (const want of ['kept by the user', 'no newline at the end', 'rewritten by the agent', 'made-by-the-agent.txt', 'new from the agent']) {
    if (!text.includes(want)) throw new Error(`the diff lacks "${want}": ${JSON.stringify(text.slice(0, 400))}`);
  }
  await page.mouse.move(900, 700);
  await page.screenshot({ path: path.join(outDir, 'vscode-rewind-compare.png') });
  await palette('View: Close Editor', 'Close Editor');
  return { title, files: s.rewindCompare.files.length };
});

await check('rewind: "Restore Files to This Point" asks, then gives back the exact bytes before the turn (the agent\'s file removed); HEAD, branches and the index unchanged', async () => {
  await rowMenu('user: Rewind me: change the files', 'Restore Files to This Point');
  const asked = await answerModal(/Restore the files to the point of .*\? 1 changed, 0 added, 1 deleted/, 'Restore');
  const s = await waitState((s) => s.rewindRestore?.files?.length && s.rewindRestore.undo, 'the restore', 30000);
  if (!holds(notesFile, NOTES_BEFORE)) throw new Error('notes.txt is ' + JSON.stringify(bytesOf(notesFile)));
  if (fs.existsSync(newFile)) throw new Error('the agent\'s file is still there');
  if (JSON.stringify(gitState()) !== JSON.stringify(untouched)) throw new Error('HEAD, the branches or the index changed');
  await page.locator('.notifications-toasts', { hasText: 'Restored the files to the point of' }).first().waitFor({ timeout: 10000 });
  return { asked, files: s.rewindRestore.files };
});

await check('rewind: "Undo Last Restore" brings back the files as they were, the user\'s own edit included', async () => {
  const before = readState().rewindRestore;
  await palette('Session Tree: Undo Last Restore');
  const asked = await answerModal(/Undo the last restore\? 1 changed, 1 added, 0 deleted/, 'Restore');
  const s = await waitState((s) => s.rewindRestore?.files?.length && JSON.stringify(s.rewindRestore) !== JSON.stringify(before), 'the undo', 30000);
  if (!holds(notesFile, NOTES_BY_AGENT)) throw new Error('notes.txt is ' + JSON.stringify(bytesOf(notesFile)));
  if (!holds(newFile, NEW_BY_AGENT + USER_EDIT)) throw new Error('made-by-the-agent.txt is ' + JSON.stringify(bytesOf(newFile)));
  if (JSON.stringify(gitState()) !== JSON.stringify(untouched)) throw new Error('HEAD, the branches or the index changed');
  return { asked, files: s.rewindRestore.files };
});
// The checks below find the workspace no git repository again, the model's rules as they were,
// and no toast of the restore.
if (workspace) fs.rmSync(path.join(workspace, '.git'), { recursive: true, force: true });
if (modelRules) fs.writeFileSync(modelRules, rulesAround);
await palette('Notifications: Clear All Notifications').catch(() => {});

// ---------------------------------------------------------------- the live agent (omp)
// Until here omp's executable was a file that does not exist; the real omp (OMP_CHAT_SESSION is a
// session it wrote itself, "first omp question") answers once the user set the setting the chat
// names and restarted the server, as the settings change offers.
const ompSession = process.env.OMP_CHAT_SESSION;

await check('an omp session whose agent cannot run: Open Settings, set agent.ompPath there, "Restart the Server" as offered; then the chat shows omp ready', async () => {
  const ompPath = process.env.E2E_OMP_PATH;
  if (!ompPath || !ompSession || !fs.existsSync(ompSession)) throw new Error(`the omp set-up is missing: ${ompPath} ${ompSession}`);
  await expandSessions();
  const row = await sessionRowInSight('first omp question');
  await openFromSessions(row, (s) => s.session?.endsWith(path.basename(ompSession)) && s.chatAgent?.agent === 'omp', 'the omp session and its agent');
  await collapseSessions();
  await chatFrame().locator('#setting').waitFor({ timeout: 10000 });
  await chatFrame().locator('#setting').click();
  const item = page.locator('.settings-editor .setting-item-contents', { hasText: /Omp Path/i }).first();
  await item.waitFor({ timeout: 10000 });
  const before = readState().restarted ?? 0;
  const input = item.locator('input').first();
  await input.fill(ompPath);
  await input.press('Tab');
  const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'the agent settings apply when the server restarts' }).first();
  await toast.waitFor({ timeout: 20000 });
  await toast.locator('.monaco-button', { hasText: 'Restart the Server' }).first().click();
  await waitState((s) => (s.restarted ?? 0) > before, 'the restart', 30000);
  await palette('View: Close Editor', 'Close Editor');
  await page.locator('.settings-editor').first().waitFor({ state: 'detached', timeout: 5000 }).catch(() => {});
  const s = await waitState((s) => s.session?.endsWith(path.basename(ompSession)) && s.chatAgent?.agent === 'omp' && s.chatAgent?.state !== 'unavailable', 'omp ready', 30000);
  await chatFrame().locator('.entry.msg.assistant', { hasText: 'first omp question' }).first().waitFor({ timeout: 10000 });
  await chatFrame().locator('#status-line', { hasText: /^omp · / }).waitFor({ timeout: 10000 });
  const line = await chatFrame().locator('#status-line').innerText();
  if (line.includes('does not exist')) throw new Error('status line: ' + line);
  if ((await chatFrame().locator('#send').innerText()) !== 'Send') throw new Error('the button does not read Send');
  await chatFrame().locator('#input').click();
  await waitState((s) => s.chatLog?.focused === true, 'the chat to have the focus', 10000);
  return { state: s.chatAgent.state, line };
});

await check('Send: the real omp answers, streamed into the chat, then the whole answer; the question hangs under the leaf; the new rows are in the tree', async () => {
  const leafBefore = readState().leaf;
  const asked = modelRequests();
  await chatSend('Stream the answer from omp');
  const streaming = chatFrame().locator('.entry.msg.assistant.streaming');
  await streaming.filter({ hasText: 'The answer' }).first().waitFor({ timeout: 120000 });
  const partial = await streaming.first().innerText();
  if (partial.includes('very last word')) throw new Error('the whole answer was there at once: ' + partial);
  await chatFrame().locator('.entry.msg.assistant:not(.streaming)', { hasText: 'until the very last word arrives here.' }).waitFor({ timeout: 90000 });
  const s = await waitState((s) => s.chatLog?.stream?.final === LONG && s.chatAgent?.state === 'idle', 'the end of the answer', 30000);
  if (!(s.chatLog.stream.deltas > 1) || s.chatLog.stream.streamed !== LONG) throw new Error('stream: ' + JSON.stringify(s.chatLog.stream));
  if (await chatFrame().locator('.entry.msg.streaming').count()) throw new Error('a streaming message is left');
  const entries = entriesOf(ompSession);
  const user = entries.find((e) => e.type === 'message' && textOf(e.message) === 'Stream the answer from omp');
  const reply = user && entries.find((e) => e.parentId === user.id && e.type === 'message');
  if (!user || user.parentId !== leafBefore) throw new Error(`the question does not hang under the leaf ${leafBefore}: ${JSON.stringify(user)}`);
  if (!reply || textOf(reply.message) !== LONG) throw new Error('the answer is not in the file: ' + JSON.stringify(reply));
  await treeRow('user: Stream the answer from omp').waitFor({ timeout: 15000 });
  await treeRow('assistant: The answer streams').waitFor({ timeout: 15000 });
  if (modelRequests() <= asked) throw new Error('the model was not asked');
  return { partial: partial.replace(/\s+/g, ' ').slice(0, 80), deltas: s.chatLog.stream.deltas };
});

await check('an old question selected in the tree, edited and sent: omp answers from exactly there (under its parent, the model given only the context up to it)', async () => {
  const entries = entriesOf(ompSession);
  const old = entries.find((e) => e.type === 'message' && textOf(e.message) === 'Stream the answer from omp');
  const oldReply = old && entries.find((e) => e.parentId === old.id && e.type === 'message');
  if (!oldReply) throw new Error('the earlier answer is not in the file');
  // The tree shows the earlier answer as the leaf, its revision settled (a move asked for an older
  // revision is refused as "changed meanwhile").
  await waitState((s) => s.leaf === oldReply.id, 'the earlier answer as the leaf', 20000);
  let revision = readState().revision;
  for (let stable = 0; stable < 4; ) {
    await page.waitForTimeout(500);
    const now = readState().revision;
    stable = now === revision ? stable + 1 : 0;
    revision = now;
  }
  const before = readState().navigate;
  await treeRow('user: Stream the answer from omp').click();
  const nav = await waitState((s) => s.navigate && JSON.stringify(s.navigate) !== JSON.stringify(before), 'the move', 20000);
  if (nav.navigate.error) throw new Error('navigate: ' + nav.navigate.error);
  await waitState((s) => s.leaf === old.parentId && s.chatInput === 'Stream the answer from omp', 'the leaf at its parent and the input filled', 20000);
  const again = 'Stream it once more, from there';
  const asked = modelRequests();
  await chatSend(again);
  await waitState((s) => s.chatLog?.prompt?.text === again, 'the prompt taken', 60000);
  await chatFrame().locator('.entry.msg.assistant:not(.streaming)', { hasText: 'until the very last word arrives here.' }).waitFor({ timeout: 90000 });
  const s = await waitState((s) => s.chatAgent?.state === 'idle' && s.chatLog?.stream?.final === LONG, 'the end of the answer', 60000);
  let retry;
  for (let i = 0; i < 60; i++) {
    const now = entriesOf(ompSession);
    retry = now.find((e) => e.type === 'message' && textOf(e.message) === again);
    if (retry && now.some((e) => e.parentId === retry.id && e.type === 'message' && textOf(e.message) === LONG)) break;
    await page.waitForTimeout(500);
  }
  if (!retry || retry.parentId !== old.parentId) throw new Error(`the edited question does not hang under ${old.parentId}: ${JSON.stringify(retry)}`);
  const requests = fs.readFileSync(modelLog, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
  if (requests.length <= asked) throw new Error('the model was not asked');
  const last = requests.at(-1).body;
  const said = (last.messages ?? [])
    .filter((m) => m.role === 'user' || m.role === 'assistant')
    .map((m) => `${m.role}: ${textOf(m).replace(/^<system-reminder>[\s\S]*?<\/system-reminder>/, '')}`);
  const want = ['user: first omp question', 'assistant: echo: first omp question', `user: ${again}`];
  if (JSON.stringify(said) !== JSON.stringify(want)) throw new Error('the model was given ' + JSON.stringify(said));
  await treeRow(`user: ${again}`).waitFor({ timeout: 15000 });
  return { parent: old.parentId, context: said.length, deltas: s.chatLog.stream.deltas };
});

// ---------------------------------------------------------------- a session omp keeps in Redis
// scripts/test-vscode.sh starts a redis-server of its own, puts one session of this project into
// it (as omp's RedisSessionStorage lays it out) and names the store in the user settings.
await check('a session the real omp keeps in Redis: listed in the Sessions view, opened, its tree shown; a label and a message written here are reloaded by omp, and omp\'s next line shows up', async () => {
  const port = process.env.E2E_REDIS_PORT;
  const storePath = process.env.E2E_REDIS_SESSION;
  const [bun, ompRedis] = [process.env.E2E_BUN, process.env.E2E_OMP_REDIS];
  if (!port || !storePath || !bun || !ompRedis) throw new Error('E2E_REDIS_PORT / E2E_REDIS_SESSION / E2E_BUN / E2E_OMP_REDIS are not set');
  const omp = (...args) => execFileSync(bun, [ompRedis, args[0], `redis://127.0.0.1:${port}`, 'omp:sessions:', ...args.slice(1)], { encoding: 'utf8', timeout: 60000 });
  const storeUri = (x) => typeof x === 'string' && x.startsWith(`redis://127.0.0.1:${port}/0/`);
  await expandSessions();
  // What the extension asked for and what the view holds, for a failure to say.
  const seen = async () => JSON.stringify({ stores: readState().stores, listed: readState().listed, rows: (await listInOrder(sessionRows())).map((r) => r.text.slice(0, 60)) });
  // It is dated old, so it lists last: by now below the rows the pane has room for.
  const row = await sessionRowInSight('Where does the team keep its sessions?');
  await row.waitFor({ timeout: 15000 }).catch(async () => {
    throw new Error(`the store's session is not in the Sessions view: ${await seen()}`);
  });
  const listed = (await row.innerText()).replace(/\s+/g, ' ');
  const s = await openFromSessions(row, (x) => storeUri(x.session), 'the store\'s session on screen');
  if (!s.session.endsWith(encodeURI(storePath))) throw new Error(`opened ${s.session}, not ${storePath}`);
  await collapseSessions();
  await treeRow('In the shared Redis store.').waitFor({ timeout: 15000 });
  // A label on the answer, written into the store by the server (Shift+L on the row the keyboard is on).
  await focusTree();
  const answer = (await listInOrder(treeRows())).find((r) => r.text.includes('In the shared Redis store.'));
  if (!answer) throw new Error('no answer row: ' + JSON.stringify(await rowTexts()));
  await treeRow('In the shared Redis store.').click();
  await page.waitForTimeout(300);
  await page.keyboard.press('Shift+KeyL');
  await quickInput('team-store');
  await page.keyboard.press('Enter');
  await treeRow('[team-store]').waitFor({ timeout: 10000 });
  const labelled = (await waitState((x) => x.labels?.some((l) => l.label === 'team-store'), 'the label in the rows')).labels.find((l) => l.label === 'team-store').id;
  // A message appended here (the chat's "Append Without Running the Agent": the live agent does
  // not run on a store's session) lands in the store after the label.
  await chatFrame().locator('#input').fill('Noted in the store');
  await waitState((x) => x.chatInput === 'Noted in the store', 'the input', 5000);
  await palette('Session Tree: Append Without Running the Agent');
  const noted = (await waitState((x) => x.chatLog?.append?.text === 'Noted in the store' && x.chatInput === '', 'the append', 20000)).chatLog.append.entryId;
  await treeRow('user: Noted in the store').waitFor({ timeout: 10000 });
  // The real omp reloads the session from the store: the label on the same entry, our message its leaf.
  const reloaded = JSON.parse(omp('reload', storePath));
  if (reloaded.labels?.[labelled] !== 'team-store') throw new Error(`omp reloaded labels ${JSON.stringify(reloaded.labels)}, not team-store on ${labelled}`);
  if (reloaded.leafId !== noted) throw new Error(`omp reloaded the leaf ${reloaded.leafId}, not our message ${noted}: ${JSON.stringify(reloaded.entryIds)}`);
  // omp writes on after our label; the tree follows.
  const before = readState().lines.length;
  omp('append', storePath, '1');
  await treeRow('omp line 0').waitFor({ timeout: 20000 });
  const after = await waitState((x) => x.lines?.length > before, 'omp\'s line in the rows');
  return { listed: listed.slice(0, 80), session: s.session, labelled, noted, rows: [before, after.lines.length] };
});

await check('screenshot of the panel', async () => {
  await page.keyboard.press('Escape');
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 5000 }).catch(() => {});
  await page.mouse.move(900, 700);
  await page.waitForTimeout(600);
  const full = path.join(outDir, 'vscode-final.png');
  await page.screenshot({ path: full });
  if (!fs.existsSync(path.join(outDir, 'vscode-panel.png'))) throw new Error('vscode-panel.png was not taken');
  return [full, path.join(outDir, 'vscode-panel.png')];
});

fs.writeFileSync(path.join(outDir, 'vscode-console-errors.txt'), consoleErrors.join('\n'));
await ctx.close();
fs.rmSync(userDataDir, { recursive: true, force: true });
for (const p of pending) log('PEND', p);
console.log(`e2e: ${passed} passed, ${failed} failed (${Date.now() - t0} ms)${skipped ? `, ${skipped} skipped (E2E_ONLY)` : ''}`);
process.exit(failed ? 1 : 0);
