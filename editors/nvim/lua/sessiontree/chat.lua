---@brief
--- The chat: the session's conversation as the server renders it (`sessionTree/transcript`, drawn
--- by `chat_render`: markdown lines, thinking and tool details folded) with the live agent's
--- answer streaming in (`sessionTree/agentEvent`), and an input buffer under it. `<CR>` in the
--- input (or `:SessionSend`) prompts the session's real agent (`sessionTree/prompt`); when the agent
--- cannot run it appends without an answer, as the winbar says beforehand. `<C-c>` or
--- `:SessionStop` stops the answer; `:SessionAppend` appends without running the agent. Selecting
--- a user or custom message in the tree prefills the input. The input belongs to its session: its
--- text stays with that session when another is shown and is never sent into another.

local agent_text = require('sessiontree.agent_text')
local chat_render = require('sessiontree.chat_render')
local client = require('sessiontree.client')
local config = require('sessiontree.config')
local Conversation = require('sessiontree.conversation')
local protocol = require('sessiontree.protocol')

local M = {}

local ns = vim.api.nvim_create_namespace('sessiontree.chat')

--- How long streamed changes gather before the buffer is redrawn (ms).
local FLUSH_MS = 30

--- How long the transcript read owed to an answer's end waits for the didChange of the answer's
--- last entry (ms). The server reads the file when the agent's message ends, just before relaying
--- the end, so that didChange follows within a moment; the read then goes with it, after the
--- panel's rows. Without a change meanwhile, the read goes when this ends.
local END_GRACE_MS = 50

---@class sessiontree.ChatState
---@field uri string|nil
---@field conv_buf integer|nil
---@field input_buf integer|nil
---@field conv_win integer|nil
---@field input_win integer|nil
---@field draws integer
---@field revision integer|nil
---@field conversation sessiontree.Conversation
---@field folds table[] the folds drawn last (0-based lines, keys)
---@field opened table<string, boolean> fold keys the user opened
---@field live_start integer 0-based line where the streamed part starts
---@field sending boolean a prompt is on its way (the agent may be starting)
---@field seq integer
---@field stream table|nil the last streamed answer: `{ deltas, streamed, final }` (tests)
---@field last table what the chat did last: `prompt`, `append`, `abort`, `error`, `dialog` (tests)
---@field draft_uri string|nil the session the input's text belongs to
---@field drafts table<string, string[]> the other sessions' input texts (lines)
---@field announced integer|nil the revision of the last didChange of the chat's session
---@field reads sessiontree.ChatReads
M.state = {
  reads = { owed = false, scheduled = false, inflight = 0, again_change = false, again_end = false },
  drafts = {},
  draws = 0,
  conversation = Conversation.new(),
  folds = {},
  opened = {},
  live_start = 0,
  sending = false,
  seq = 0,
  last = {},
}

---@param uri string|nil
---@return string|nil
local function panel_uri(uri)
  return uri or require('sessiontree.panel').state.uri
end

---@param msg string
---@param level integer|nil
local function notify(msg, level)
  vim.notify('sessiontree: ' .. msg, level or vim.log.levels.INFO)
end

---@param name string
---@param ft string
---@return integer
local function scratch(name, ft)
  local buf = vim.api.nvim_create_buf(false, true)
  pcall(vim.api.nvim_buf_set_name, buf, name)
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = ft
  return buf
end

--- Maps `lhs` (a string, a list, or false) in `buf`.
---@param buf integer
---@param lhs string|string[]|false|nil
---@param fn function
---@param desc string
local function map(buf, lhs, fn, desc)
  if not lhs then
    return
  end
  for _, key in ipairs(type(lhs) == 'table' and lhs or { lhs }) do
    vim.keymap.set('n', key, fn, { buffer = buf, desc = 'sessiontree: ' .. desc, nowait = true })
  end
end

--- Whether the conversation buffer exists (it is drawn into even while the chat is closed).
---@return boolean
local function has_conv_buf()
  local buf = M.state.conv_buf
  return buf ~= nil and vim.api.nvim_buf_is_valid(buf)
end

local function ensure_bufs()
  local st = M.state
  local keys = config.options.chat.keys or {}
  if not has_conv_buf() then
    st.conv_buf = scratch('sessiontree://chat', 'markdown')
    vim.bo[st.conv_buf].modifiable = false
    map(st.conv_buf, keys.toggle, M.toggle_fold, 'open or close the details under the cursor')
  end
  if not (st.input_buf and vim.api.nvim_buf_is_valid(st.input_buf)) then
    st.input_buf = scratch('sessiontree://input', 'markdown')
    map(st.input_buf, keys.send, function()
      M.send()
    end, 'send the input to the agent')
  end
  for _, buf in ipairs({ st.conv_buf, st.input_buf }) do
    map(buf, keys.stop, M.stop, "stop the agent's answer")
    map(buf, keys.close, M.close, 'close the chat')
  end
end

---@return boolean
function M.is_open()
  local st = M.state
  return st.conv_win ~= nil and vim.api.nvim_win_is_valid(st.conv_win)
end

---@param s string
---@return string
local function bar_escape(s)
  return (s:gsub('%%', '%%%%'):gsub('\n', ' '))
end

--- The winbars: the agent's state over the conversation, what <CR> does over the input.
function M.update_winbars()
  local st = M.state
  local conv = st.conversation
  local status = conv.status
  local line = agent_text.status_line(status)
  if st.sending then
    line = line .. ' · sending…'
  end
  local keys = config.options.chat.keys or {}
  local stop = type(keys.stop) == 'table' and keys.stop[1] or keys.stop
  if st.conv_win and vim.api.nvim_win_is_valid(st.conv_win) then
    local busy = conv.running or (status and status.state == 'running')
    local tone = (status and (status.state == 'unavailable' or status.state == 'exited')) and 'SessionTreeChatError'
      or (busy and 'SessionTreeChatStreaming' or 'SessionTreeHeaderInfo')
    vim.wo[st.conv_win].winbar = '%#SessionTreeHeader# chat %#'
      .. tone
      .. '#'
      .. (line ~= '' and ('· ' .. bar_escape(line) .. ' ') or '')
      .. '%#SessionTreeHeaderInfo#· <CR> opens details'
      .. (busy and stop and (' · ' .. stop .. ' stops') or '')
  end
  if st.input_win and vim.api.nvim_win_is_valid(st.input_win) then
    local what
    if agent_text.available(status) then
      what = '<CR> sends to '
        .. (status and status.agent or 'the agent')
        .. ' (:SessionAppend appends without an answer)'
    else
      what = '<CR> appends without an answer (' .. bar_escape(agent_text.status_advice(status)) .. ')'
    end
    vim.wo[st.input_win].winbar = '%#SessionTreeHeaderInfo# message · ' .. what
  end
end

--- Runs `fn` in the conversation window, when the chat is open (folds belong to a window).
---@param fn fun()
local function in_conv_win(fn)
  if M.is_open() then
    vim.api.nvim_win_call(M.state.conv_win, fn)
  end
end

--- Remembers which of the drawn folds are open (before the lines change).
local function remember_folds()
  local st = M.state
  in_conv_win(function()
    local count = vim.api.nvim_buf_line_count(st.conv_buf)
    for _, f in ipairs(st.folds) do
      local lnum = f[1] + 1
      if lnum <= count and vim.fn.foldlevel(lnum) > 0 then
        st.opened[f.key] = vim.fn.foldclosed(lnum) == -1 or nil
      end
    end
  end)
end

--- Makes the drawn folds (closed, except those the user opened).
local function make_folds()
  local st = M.state
  in_conv_win(function()
    vim.wo.foldmethod = 'manual'
    vim.wo.foldenable = true
    vim.cmd('silent! normal! zE')
    for _, f in ipairs(st.folds) do
      vim.cmd(string.format('silent! %d,%dfold', f[1] + 1, f[2] + 1))
      if st.opened[f.key] then
        vim.cmd(string.format('silent! %dfoldopen', f[1] + 1))
      end
    end
  end)
end

--- Puts `draw` into the conversation buffer from line `from` (0-based) to the end.
---@param draw sessiontree.ChatDraw
---@param from integer
local function put(draw, from)
  local st = M.state
  local buf = st.conv_buf
  local follow = true
  if M.is_open() and vim.api.nvim_get_current_win() == st.conv_win then
    local cursor = vim.api.nvim_win_get_cursor(st.conv_win)[1]
    follow = cursor >= vim.api.nvim_buf_line_count(buf) - 1
  end
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, from, -1, false, draw.lines)
  vim.bo[buf].modifiable = false
  vim.api.nvim_buf_clear_namespace(buf, ns, from, -1)
  for _, h in ipairs(draw.hls) do
    vim.api.nvim_buf_set_extmark(buf, ns, from + h[1], 0, { line_hl_group = h[2], priority = 150 })
  end
  if follow and M.is_open() then
    vim.api.nvim_win_set_cursor(st.conv_win, { vim.api.nvim_buf_line_count(buf), 0 })
  end
end

--- Puts `draw` from line `from` (0-based), makes the folds `st.folds` now holds, and counts the
--- draw.
---@param draw sessiontree.ChatDraw
---@param from integer
local function show(draw, from)
  local st = M.state
  put(draw, from)
  make_folds()
  st.draws = st.draws + 1
  M.update_winbars()
end

---@param draw sessiontree.ChatDraw
---@param offset integer
---@return table[]
local function shifted(draw, offset)
  local out = {}
  for _, f in ipairs(draw.folds) do
    table.insert(out, { f[1] + offset, f[2] + offset, key = f.key })
  end
  return out
end

--- Draws the whole conversation: the transcript, then what streams.
function M.draw()
  local st = M.state
  if not has_conv_buf() then
    return
  end
  local conv = st.conversation
  remember_folds()
  local head = chat_render.draw(conv:transcript_entries())
  if conv.omitted > 0 then
    table.insert(head.lines, 1, '_(' .. conv.omitted .. ' earlier messages are not shown)_')
    table.insert(head.lines, 2, '')
    head.folds = shifted(head, 2)
    for _, h in ipairs(head.hls) do
      h[1] = h[1] + 2
    end
  end
  local live = chat_render.draw(conv:live_entries())
  st.live_start = #head.lines
  local all = chat_render.new_draw()
  all.lines = vim.list_extend(vim.list_extend({}, head.lines), live.lines)
  all.hls = vim.list_extend({}, head.hls)
  for _, h in ipairs(live.hls) do
    table.insert(all.hls, { h[1] + st.live_start, h[2] })
  end
  if #all.lines == 0 then
    all.lines = { '_(empty: the next message starts the conversation)_' }
  end
  st.folds = vim.list_extend(vim.list_extend({}, head.folds), shifted(live, st.live_start))
  show(all, 0)
end

--- Draws only what streams (the transcript above it stays as drawn).
function M.draw_live()
  local st = M.state
  if not has_conv_buf() then
    return
  end
  if st.live_start > vim.api.nvim_buf_line_count(st.conv_buf) then
    return M.draw()
  end
  remember_folds()
  local live = chat_render.draw(st.conversation:live_entries())
  local kept = {}
  for _, f in ipairs(st.folds) do
    if f[1] < st.live_start then
      table.insert(kept, f)
    end
  end
  st.folds = vim.list_extend(kept, shifted(live, st.live_start))
  show(live, st.live_start)
end

local flush_pending = false
--- Redraws the streamed part soon (deltas arrive faster than a redraw is worth).
local function schedule_live()
  if flush_pending then
    return
  end
  flush_pending = true
  vim.defer_fn(function()
    flush_pending = false
    M.draw_live()
  end, FLUSH_MS)
end

--- Opens or closes the details (fold) under the cursor.
function M.toggle_fold()
  local lnum = vim.api.nvim_win_get_cursor(0)[1]
  if vim.fn.foldlevel(lnum) > 0 then
    vim.cmd('normal! za')
  end
end

--- Asks for the agent's state (which also finds an agent running in the user's terminal).
---@param uri string
---@param done fun()|nil
local function load_status(uri, done)
  client.request(protocol.AGENT, { uri = uri }, function(err, result)
    local conv = M.state.conversation
    if not err and conv.uri == uri then
      conv.status = result
      M.update_winbars()
    end
    if done then
      done()
    end
  end)
end

--- The input belongs to its session: the text typed or prefilled in one session stays with it
--- (kept while another is shown, back when it is shown again) and is never sent into another.
--- Makes the input `uri`'s own.
---@param uri string|nil
local function switch_draft(uri)
  local st = M.state
  if uri == st.draft_uri then
    return
  end
  local has_buf = st.input_buf and vim.api.nvim_buf_is_valid(st.input_buf)
  if st.draft_uri then
    local lines = has_buf and vim.api.nvim_buf_get_lines(st.input_buf, 0, -1, false) or {}
    local empty = #lines == 0 or (#lines == 1 and lines[1] == '')
    st.drafts[st.draft_uri] = not empty and lines or nil
  end
  st.draft_uri = uri
  local lines = uri and st.drafts[uri] or {}
  if uri then
    st.drafts[uri] = nil
  end
  if has_buf then
    vim.api.nvim_buf_set_lines(st.input_buf, 0, -1, false, lines)
  end
end

--- Another session is shown: the old one's conversation and state go; its input text is kept.
---@param uri string|nil
local function session_changed(uri)
  local st = M.state
  switch_draft(uri)
  st.conversation:reset(uri)
  st.folds = {}
  st.opened = {}
  st.live_start = 0
  st.announced = nil
  if uri then
    load_status(uri)
  end
end

--- Opens the chat for session `uri` (default: the panel's session): conversation above, input below.
---@param uri string|nil
function M.open(uri)
  local st = M.state
  uri = panel_uri(uri)
  if not uri then
    notify('no session open (:SessionTree first)', vim.log.levels.WARN)
    return
  end
  st.uri = uri
  chat_render.define_highlights()
  ensure_bufs()
  if not M.is_open() then
    -- Open in the editor area, beside the panel: split an editor window, or make a column.
    local panel = require('sessiontree.panel')
    local target = nil
    for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
      if w ~= panel.state.win and vim.api.nvim_win_get_config(w).relative == '' then
        target = w
        break
      end
    end
    if target then
      vim.api.nvim_set_current_win(target)
      -- An empty, unnamed window is reused rather than split.
      local b = vim.api.nvim_win_get_buf(target)
      local empty = vim.api.nvim_buf_get_name(b) == ''
        and not vim.bo[b].modified
        and vim.api.nvim_buf_line_count(b) == 1
        and vim.api.nvim_buf_get_lines(b, 0, 1, false)[1] == ''
      if not empty then
        vim.cmd('rightbelow vsplit')
      end
    else
      vim.cmd(config.options.panel.position == 'right' and 'topleft vsplit' or 'botright vsplit')
    end
    st.conv_win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(st.conv_win, st.conv_buf)
    vim.wo[st.conv_win].wrap = true
    vim.wo[st.conv_win].linebreak = true
    vim.wo[st.conv_win].foldmethod = 'manual'
    vim.wo[st.conv_win].foldenable = true
    vim.wo[st.conv_win].foldcolumn = '0'
    vim.wo[st.conv_win].foldtext = ''
    vim.wo[st.conv_win].fillchars = 'fold: '
    vim.cmd(string.format('belowright %dsplit', config.options.chat.input_height))
    st.input_win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(st.input_win, st.input_buf)
    vim.wo[st.input_win].winfixheight = true
    if panel.is_open() then
      vim.api.nvim_win_set_width(panel.state.win, config.options.panel.width)
    end
    st.folds = {}
  end
  vim.api.nvim_set_current_win(st.input_win)
  M.update_winbars()
  M.refresh()
end

--- Closes the chat windows (the input text stays for next time).
function M.close()
  local st = M.state
  for _, win in ipairs({ st.input_win, st.conv_win }) do
    if win and vim.api.nvim_win_is_valid(win) and #vim.api.nvim_list_wins() > 1 then
      vim.api.nvim_win_close(win, true)
    end
  end
  st.conv_win, st.input_win = nil, nil
end

---@class sessiontree.ChatReads
---@field owed boolean a read is owed to a change or an answer's end, not yet sent
---@field scheduled boolean the owed read goes once the current event's listeners have all run
---@field timer uv.uv_timer_t|nil the owed read of an answer's end, waiting for its didChange
---@field inflight integer reads on their way
---@field again_change boolean a change came while a read was on its way
---@field again_end boolean the answer ended while a read was on its way

---@param r sessiontree.ChatReads
local function stop_end_timer(r)
  local t = r.timer
  r.timer = nil
  if t and not t:is_closing() then
    t:stop()
    t:close()
  end
end

--- Sends the read owed to a change or an answer's end (if the chat is still open).
local function send_owed_read()
  local r = M.state.reads
  r.scheduled = false
  stop_end_timer(r)
  if not r.owed then
    return
  end
  r.owed = false
  if M.is_open() then
    M.refresh()
  end
end

--- A change of the chat's session (`change`) or the end of the agent's answer (`end`) owes a read
--- of the transcript. One read serves both: whichever comes first owes it, the other joins it.
--- A change's read waits until every listener of the change has run, so the panel's rows reach
--- the server first (it answers one session's requests in order: the tree is not held behind a
--- long conversation's transcript). An answer's end waits a moment for the didChange of its last
--- entry (END_GRACE_MS) and then goes with it. With a read on its way, no other is sent: its
--- answer is checked when it arrives (read again only if it is older than the last change).
---@param reason 'change'|'end'
local function want_read(reason)
  local r = M.state.reads
  if r.inflight > 0 then
    if reason == 'change' then
      r.again_change = true
    else
      r.again_end = true
    end
    return
  end
  r.owed = true
  if r.scheduled then
    return
  end
  if reason == 'end' then
    if not r.timer then
      local t = assert(vim.uv.new_timer())
      r.timer = t
      t:start(
        END_GRACE_MS,
        0,
        vim.schedule_wrap(function()
          if r.timer == t then
            send_owed_read()
          end
        end)
      )
    end
    return
  end
  stop_end_timer(r)
  r.scheduled = true
  vim.schedule(send_owed_read)
end

--- Whether no transcript read is owed or on its way (tests wait for it).
---@return boolean
function M.reads_idle()
  local r = M.state.reads
  return not r.owed and r.inflight == 0
end

--- Reads the conversation again from `sessionTree/transcript` and redraws it.
---@param done fun(err: table|nil)|nil
function M.refresh(done)
  local st = M.state
  if not st.uri or not has_conv_buf() then
    return
  end
  local uri = st.uri
  if uri ~= st.conversation.uri then
    session_changed(uri)
  end
  st.seq = st.seq + 1
  local mine = st.seq
  local ended = st.conversation:ended_keys()
  local r = st.reads
  r.inflight = r.inflight + 1
  client.request(protocol.TRANSCRIPT, { uri = uri }, function(err, result)
    r.inflight = r.inflight - 1
    local again = false
    if r.inflight == 0 then
      -- What came while reads were on their way: a change this answer may predate is read again;
      -- an answer's end alone needs no read, only this answer kept with every message finished by
      -- now (as a read sent after the end would be).
      again = r.again_change and (err ~= nil or result.revision ~= st.announced)
      if r.again_end and not again then
        ended = st.conversation:ended_keys()
      end
      r.again_change, r.again_end = false, false
    end
    if err then
      notify('transcript: ' .. client.describe(err), vim.log.levels.ERROR)
    elseif mine == st.seq and uri == st.conversation.uri and vim.api.nvim_buf_is_valid(st.conv_buf) then
      st.conversation:set_transcript(result, ended)
      st.revision = result.revision
      M.draw()
    end
    if again then
      want_read('change')
    end
    if done then
      done(err)
    end
  end)
end

--- The input text.
---@return string
function M.input_text()
  local st = M.state
  if not (st.input_buf and vim.api.nvim_buf_is_valid(st.input_buf)) then
    return ''
  end
  return table.concat(vim.api.nvim_buf_get_lines(st.input_buf, 0, -1, false), '\n')
end

--- The text sent from `uri` leaves that session's input (and no other's).
---@param uri string
local function clear_input(uri)
  local st = M.state
  st.drafts[uri] = nil
  if uri == st.draft_uri and st.input_buf and vim.api.nvim_buf_is_valid(st.input_buf) then
    vim.api.nvim_buf_set_lines(st.input_buf, 0, -1, false, {})
  end
end

--- Puts `text` into the input of session `uri` (a selected user message comes back for editing).
---@param uri string|nil
---@param text string
function M.prefill(uri, text)
  local st = M.state
  st.uri = panel_uri(uri)
  ensure_bufs()
  switch_draft(st.uri)
  vim.api.nvim_buf_set_lines(st.input_buf, 0, -1, false, vim.split(text or '', '\n', { plain = true }))
  if config.options.chat.open_on_select and not M.is_open() then
    M.open(st.uri)
  else
    M.refresh()
  end
end

--- The text to send: `text` when given, else the input's; nil (and a message) when empty.
---@param text string|nil
---@return string|nil text
---@return boolean from_input
---@return string|nil uri
local function what_to_send(text)
  local st = M.state
  if type(text) ~= 'string' or text == '' then
    text = nil
  end
  local uri = st.uri or panel_uri(nil)
  if not uri then
    notify('no session open (:SessionTree first)', vim.log.levels.WARN)
    return nil, false, nil
  end
  local from_input = text == nil
  if from_input then
    -- Only this session's own text is ever sent here.
    ensure_bufs()
    switch_draft(uri)
  end
  text = text or M.input_text()
  if vim.trim(text) == '' then
    notify('nothing to send', vim.log.levels.WARN)
    return nil, from_input, uri
  end
  return text, from_input, uri
end

--- Why a session the server holds is not on disk.
local NOT_ON_DISK = 'this new session is not on disk yet (pi writes a session with its first assistant reply), '
  .. 'so a message appended without the agent would live only in memory and be lost on quitting'

--- A file session whose file does not exist (yet): the server holds it in memory.
---@param uri string
---@return boolean
local function not_on_disk(uri)
  return vim.startswith(uri, 'file:') and vim.uv.fs_stat(vim.uri_to_fname(uri)) == nil
end

--- Appends the input (or `text`) as a user message at the leaf without running the agent. Not
--- into a session whose file does not exist yet (a pi session made by /branch is written with its
--- first assistant reply, as pi does): the text stays in the input and the chat says why.
---@param text string|nil
---@param done fun(err: table|nil, result: table|nil)|nil
function M.append(text, done)
  local st = M.state
  local from_input, uri
  text, from_input, uri = what_to_send(text)
  if not text then
    return
  end
  if not_on_disk(uri) then
    local msg = 'not appended: ' .. NOT_ON_DISK .. '. Your text stays in the input.'
    st.last.append = { notOnDisk = true, text = text }
    if st.conversation.uri == uri then
      st.conversation:notice(msg, 'warning')
      M.draw_live()
    end
    notify(msg, vim.log.levels.WARN)
    if done then
      done({ message = msg, data = { kind = 'notOnDisk' } }, nil)
    end
    return
  end
  client.request(protocol.APPEND, { uri = uri, kind = 'user', text = text }, function(err, result)
    if err then
      local msg = agent_text.error_text(
        client.kind(err),
        err.message or client.describe(err),
        st.conversation.status and st.conversation.status.agent
      )
      st.last.error = { kind = client.kind(err), message = msg }
      notify('append: ' .. msg, vim.log.levels.ERROR)
    else
      st.last.append = { entryId = result.entryId, text = text }
      if from_input then
        clear_input(uri)
      end
      notify('appended as ' .. tostring(result.entryId) .. ' (without an answer)')
      M.refresh()
    end
    if done then
      done(err, result)
    end
  end)
end

--- Sends the input (or `text`) to the session's agent, which answers from the leaf; when the agent
--- cannot run, appends it without an answer and says why.
---@param text string|nil
---@param done fun(err: table|nil, result: table|nil)|nil
function M.send(text, done)
  local st = M.state
  if st.sending then
    notify('a message is on its way to the agent', vim.log.levels.WARN)
    return
  end
  local from_input, uri
  text, from_input, uri = what_to_send(text)
  if not text then
    return
  end
  local conv = st.conversation
  local status = conv.uri == uri and conv.status or nil
  if not agent_text.available(status) then
    local why = (status.message or 'the agent cannot run') .. ' (' .. agent_text.status_advice(status) .. ')'
    local explicit = nil
    if not from_input then
      explicit = text
    end
    return M.append(explicit, function(err, result)
      if not err then
        conv:notice('Appended without an answer: ' .. why .. '.', 'warning')
        M.draw_live()
        notify('appended without an answer: ' .. why, vim.log.levels.WARN)
      end
      if done then
        done(err, result)
      end
    end)
  end
  conv:start_turn()
  st.sending = true
  M.draw_live()
  client.request(protocol.PROMPT, { uri = uri, text = text }, function(err, result)
    st.sending = false
    if err then
      local kind = client.kind(err)
      local msg = agent_text.error_text(kind, err.message or client.describe(err), status and status.agent)
      st.last.error = { kind = kind, message = msg }
      if conv.uri == uri then
        conv:notice(msg, 'error')
        M.draw_live()
        load_status(uri)
      end
      notify(msg, vim.log.levels.ERROR)
    else
      st.last.prompt = { turn = result.turn, text = text }
      if from_input then
        clear_input(uri)
      end
      if conv.uri == uri then
        conv.status = result.agent
        if result.agent and result.agent.state == 'running' then
          conv.running = true
        end
      end
      M.update_winbars()
    end
    if done then
      done(err, result)
    end
  end)
end

--- Stops the agent's answer (`sessionTree/abort`).
---@param done fun(err: table|nil, result: table|nil)|nil
function M.stop(done)
  local st = M.state
  local uri = st.uri or panel_uri(nil)
  if type(done) ~= 'function' then
    done = nil
  end
  if not uri then
    notify('no session open (:SessionTree first)', vim.log.levels.WARN)
    return
  end
  client.request(protocol.ABORT, { uri = uri }, function(err, result)
    if err then
      notify('stop: ' .. client.describe(err), vim.log.levels.ERROR)
    else
      st.last.abort = result
      if not result.aborted then
        notify('the agent was not answering')
      end
    end
    if done then
      done(err, result)
    end
  end)
end

--- Installs the bridge into pi's or omp's extensions folder (`sessionTree/installBridge`), so an
--- agent started in a terminal can be driven from here after its restart.
---@param agent string|nil 'pi' | 'omp' (nil: ask)
function M.install_bridge(agent)
  local function install(which)
    client.request(protocol.INSTALL_BRIDGE, { agent = which }, function(err, result)
      if err then
        notify('install the bridge: ' .. client.describe(err), vim.log.levels.ERROR)
        return
      end
      M.state.last.install = result
      notify(
        (result.written and 'installed the bridge at ' or 'the bridge is already installed at ')
          .. result.path
          .. '; restart '
          .. which
          .. ' in your terminal (then run /sessiontree there once to let the editor move its leaf)'
      )
    end)
  end
  if agent == 'pi' or agent == 'omp' then
    return install(agent)
  end
  vim.ui.select({ 'pi', 'omp' }, { prompt = 'Install the sessiontree bridge for' }, function(choice)
    if choice then
      install(choice)
    end
  end)
end

--- One event of the agent: into the conversation, then the part of the buffer it changed.
---@param p table protocol AgentEventParams
local function on_agent_event(p)
  local st = M.state
  local conv = st.conversation
  local e = p.event or {}
  if p.uri == conv.uri then
    st.streamed = st.streamed or {}
    if e.kind == 'delta' and e.delta == 'text' then
      st.streamed[e.message] = (st.streamed[e.message] or '') .. (e.text or '')
    elseif e.kind == 'messageEnd' and e.item and e.item.role == 'assistant' then
      local final = {}
      for _, b in ipairs(e.item.blocks or {}) do
        if b.kind == 'markdown' or b.kind == 'text' then
          table.insert(final, b.text)
        end
      end
      st.stream = { deltas = conv.deltas, streamed = st.streamed[e.message] or '', final = table.concat(final) }
      st.streamed = {}
    end
  end
  local change = conv:apply(p)
  if change == 'none' then
    return
  end
  if p.uri ~= conv.uri then
    return
  end
  if e.kind == 'exited' then
    local tail = type(e.stderrTail) == 'table'
        and table.concat(vim.list_slice(e.stderrTail, math.max(1, #e.stderrTail - 4)), '\n')
      or ''
    notify('the agent exited' .. (tail ~= '' and (': ' .. tail) or ''), vim.log.levels.ERROR)
  end
  if change == 'status' then
    M.update_winbars()
    if e.kind == 'agentEnd' and M.is_open() then
      want_read('end')
    end
    return
  end
  schedule_live()
end

client.on(protocol.AGENT_EVENT, on_agent_event)

client.on(protocol.DID_CHANGE, function(params)
  -- A closed chat reads the transcript again when it opens.
  local st = M.state
  if require('sessiontree.panel').same_uri(params.uri, st.uri) then
    st.announced = params.revision
    if M.is_open() and params.revision ~= st.revision then
      want_read('change')
    end
  end
end)

return M
