/**
 * The Chat view's entries as HTML, drawn from the server's display blocks: markdown through
 * markdown-it with raw HTML off (a session's text never reaches the page as markup), everything
 * else escaped; thinking folded; tool calls and results one line each, expandable (`<details>`,
 * each with a `data-fold` key so the page keeps what the user opened across redraws). Pure.
 */
import MarkdownIt from 'markdown-it';
import type { ChatEntry } from './chatModel';
import type { DisplayBlock, TranscriptItem } from './protocol';

const md = new MarkdownIt({ html: false, linkify: true, breaks: false });

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

/** Markdown as HTML (raw HTML in the source is shown as text). */
export function markdown(text: string): string {
  return md.render(text);
}

function lineCount(text: string): number {
  return text === '' ? 0 : text.replace(/\n$/, '').split('\n').length;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function fold(key: string, cls: string, summary: string, body: string): string {
  return `<details class="block ${cls}" data-fold="${escapeHtml(key)}"><summary>${summary}</summary>${body}</details>`;
}

/** One display block. `key` names it for the page's fold state. */
export function renderBlock(b: DisplayBlock, key: string): string {
  switch (b.kind) {
    case 'text':
      return `<div class="block text">${escapeHtml(b.text)}</div>`;
    case 'markdown':
      return `<div class="block md">${markdown(b.text)}</div>`;
    case 'thinking':
      return fold(key, 'thinking', `Thinking · ${plural(lineCount(b.text), 'line')}`, `<div class="body">${escapeHtml(b.text)}</div>`);
    case 'toolCall':
      return fold(key, 'tool-call', `<span class="glyph">⚙</span> ${escapeHtml(b.summary)}`, `<pre>${escapeHtml(b.arguments)}</pre>`);
    case 'toolResult':
      return fold(
        key,
        `tool-result${b.isError ? ' error' : ''}`,
        `<span class="glyph">${b.isError ? '✗' : '↳'}</span> ${escapeHtml(b.summary)}`,
        `<pre>${escapeHtml(b.text)}</pre>`,
      );
    case 'image':
      return `<div class="block image">[image: ${escapeHtml(b.mimeType)}]</div>`;
    case 'command': {
      const exit = b.exitCode === null || b.exitCode === undefined ? '' : ` · exit ${b.exitCode}`;
      return fold(key, 'command', `<span class="glyph">$</span> ${escapeHtml(b.command)}${escapeHtml(exit)}`, `<pre>${escapeHtml(b.output)}</pre>`);
    }
    case 'notice':
      return `<div class="block notice${b.isError ? ' error' : ''}">${escapeHtml(b.text)}</div>`;
  }
}

/** The heading of a message: its role, and what the role alone does not say. */
export function roleTitle(item: TranscriptItem): string {
  const detail = item.detail ? ` · ${item.detail}` : '';
  switch (item.role) {
    case 'toolResult':
      return `tool result${detail}`;
    case 'bashExecution':
      return 'command';
    case 'custom':
      return item.detail || 'custom';
    case 'branchSummary':
      return 'branch summary';
    case 'compactionSummary':
      return 'compaction summary';
    case 'assistant':
      return 'assistant';
    default:
      return `${item.role}${detail}`;
  }
}

/** One entry of the conversation as HTML (an element with `data-key`). */
export function renderEntry(e: ChatEntry): string {
  const key = escapeHtml(e.key);
  if (e.kind === 'tool') {
    const state = e.done ? (e.isError ? 'failed' : 'done') : 'running…';
    const body = e.output ? `<pre>${escapeHtml(e.output)}</pre>` : '';
    return `<div class="entry tool-progress${e.done ? '' : ' running'}" data-key="${key}">${fold(
      `${e.key}:out`,
      'tool-run',
      `<span class="glyph">⚙</span> ${escapeHtml(e.name)} · ${state}`,
      body,
    )}</div>`;
  }
  if (e.kind === 'notice') {
    return `<div class="entry notice ${e.level}" data-key="${key}">${escapeHtml(e.text)}</div>`;
  }
  const item = e.item;
  const role = item.role.replace(/[^a-zA-Z]/g, '');
  const blocks = item.blocks.map((b, i) => renderBlock(b, `${e.key}:${i}`)).join('');
  const waiting = e.streaming && !item.blocks.length ? '<div class="block waiting">…</div>' : '';
  // A tool result is one compact line: its block says everything the heading would.
  const head = item.role === 'toolResult' ? '' : `<div class="role">${escapeHtml(roleTitle(item))}</div>`;
  return `<div class="entry msg ${role}${e.streaming ? ' streaming' : ''}" data-key="${key}"${
    item.entryId ? ` data-entry="${escapeHtml(item.entryId)}"` : ''
  }>${head}${blocks}${waiting}</div>`;
}
