-- The one support module of the headless specs: puts the plugin on 'runtimepath', makes a
-- workspace of copied session files (or generated ones), configures the plugin against the real
-- server binary, and gives what the specs do again and again: open a session in the panel and
-- wait for it to draw, press keys and wait for the redraw, find and go to rows, record what the
-- plugin says (vim.notify) and :checkhealth reports, drive the chat, append a line as another
-- process, and wait for an answer. Each check prints one line; a check whose prerequisite is
-- missing fails. A spec is `H.run(function() … end)`, which runs the clean-ups the spec
-- registered (`H.cleanup`) and exits 0 or 1.
--
-- Environment: SESSIONTREE_BIN (the server binary; default target/debug/sessiontree, which must
-- exist), SESSIONTREE_CONFORMANCE_DIR (default ../shared/conformance relative to the repo root;
-- it must exist).

local H = {}

H.plugin_dir = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:gsub('^@', ''), ':p:h:h:h')
H.repo = vim.fn.fnamemodify(H.plugin_dir, ':h:h')
H.passed, H.failed = 0, 0
H.spec = vim.fn.fnamemodify(arg and arg[0] or '?', ':t:r')

vim.opt.runtimepath:prepend(H.plugin_dir)
vim.o.columns = 160
vim.o.lines = 40

local function out(s)
  io.stdout:write(s .. '\n')
  io.stdout:flush()
end
H.out = out

--- Records a check; a failure is printed with its message and the spec goes on.
---@param cond any
---@param msg string
---@param detail any
function H.check(cond, msg, detail)
  if cond then
    H.passed = H.passed + 1
    out('  ok    ' .. msg)
  else
    H.failed = H.failed + 1
    out('  FAIL  ' .. msg .. (detail ~= nil and ('\n        ' .. vim.inspect(detail):gsub('\n', '\n        ')) or ''))
  end
  return cond
end

--- Waits until `fn()` is true (processing events meanwhile).
---@param fn fun(): any
---@param ms integer|nil
---@return boolean
function H.wait(fn, ms)
  return vim.wait(ms or 5000, function()
    local ok, v = pcall(fn)
    return ok and v
  end, 10)
end

--- The conformance folder.
---@return string
function H.conformance_dir()
  local dir = os.getenv('SESSIONTREE_CONFORMANCE_DIR')
  if not dir or dir == '' then
    dir = vim.fn.fnamemodify(H.repo .. '/../shared/conformance', ':p'):gsub('/$', '')
  end
  assert(vim.fn.isdirectory(dir) == 1, 'the conformance fixtures are missing: ' .. dir)
  return dir
end

--- A conformance fixture's path: `H.fixture('c06-branch-basic/omp/session.jsonl')`.
---@param rel string
---@return string
function H.fixture(rel)
  return H.conformance_dir() .. '/' .. rel
end

--- One of the repository's example sessions: `H.example('csv-importer.omp.jsonl')`.
---@param name string
---@return string
function H.example(name)
  return H.repo .. '/examples/' .. name
end

--- The server binary the specs run (SESSIONTREE_BIN, or the checkout's debug build).
---@return string
function H.bin()
  local bin = os.getenv('SESSIONTREE_BIN')
  if not bin or bin == '' then
    bin = H.repo .. '/target/debug/sessiontree'
  end
  assert(vim.fn.executable(bin) == 1, 'no server binary at ' .. bin .. ' (set SESSIONTREE_BIN)')
  return bin
end

--- A fresh temp workspace with copies of the named files: `{ name = source_path }`.
---@param files table<string, string>
---@return string dir
function H.workspace(files)
  local dir = vim.fn.tempname() .. '-sessiontree'
  vim.fn.mkdir(dir .. '/sessions', 'p')
  for name, src in pairs(files) do
    assert(vim.fn.filereadable(src) == 1, 'missing fixture ' .. src)
    vim.fn.writefile(vim.fn.readfile(src, 'b'), dir .. '/sessions/' .. name, 'b')
  end
  H.dir = dir
  return dir
end

--- The path of session file `name` in the workspace's sessions folder.
---@param name string
---@return string
function H.session(name)
  return H.dir .. '/sessions/' .. name
end

--- Writes a session of `args` (`--entries 3000 --seed 5`…) with the server's generator.
---@param path string
---@param args string[]
---@return boolean ok
---@return string output what the generator printed (for a failure's detail)
function H.generate(path, args)
  local res = vim.system(vim.list_extend({ H.bin(), 'generate', '--out', path }, args), { text = true }):wait(120000)
  return res.code == 0, (res.stdout or '') .. (res.stderr or '')
end

--- Appends `entry` (encoded as one JSON line) to `path` from another process, as an agent does.
---@param path string
---@param entry table
---@return boolean ok
function H.append_entry(path, entry)
  vim.fn.system({ 'sh', '-c', 'printf "%s\\n" "$1" >> "$2"', 'sh', vim.json.encode(entry), path })
  return vim.v.shell_error == 0
end

--- A file's bytes, or nil when it does not exist.
---@param path string
---@return string|nil
function H.read(path)
  local f = io.open(path, 'rb')
  if not f then
    return nil
  end
  local text = f:read('*a')
  f:close()
  return text
end

--- Writes `text` to `path` (its folder made first).
---@param path string
---@param text string
function H.write(path, text)
  vim.fn.mkdir(vim.fn.fnamemodify(path, ':h'), 'p')
  local f = assert(io.open(path, 'wb'))
  f:write(text)
  f:close()
end

--- Configures the plugin for `dir` and the real server (the live agent off unless `extra.agent`).
---@param dir string
---@param extra table|nil more options
function H.setup(dir, extra)
  local bin = H.bin()
  vim.env.XDG_STATE_HOME = dir .. '/state'
  vim.fn.chdir(dir)
  H.record_requests()
  require('sessiontree').setup(vim.tbl_deep_extend('force', {
    cmd = { bin, 'lsp' },
    extra_roots = { dir .. '/sessions' },
    omp_agent_dir = dir .. '/omp-agent',
    pi_agent_dir = dir .. '/pi-agent',
    -- No live agent unless a spec asks for one: an agent installed on the machine must not answer.
    agent = (extra and extra.agent) or { disabled = true },
  }, extra or {}))
end

--- A workspace with copies of `files` (see `H.workspace`), the plugin configured for it
--- (`H.setup`) and its commands defined (plugin/ sourced, as Neovim does at start).
---@param files table<string, string>
---@param extra table|nil more options
---@return string dir
function H.start(files, extra)
  local dir = H.workspace(files)
  H.setup(dir, extra)
  vim.cmd('runtime plugin/sessiontree.lua')
  return dir
end

--- Every request the plugin sent: method → set of param keys (checked against protocol.json).
---@type table<string, table<string, boolean>>
H.sent = {}

--- Every request the plugin sent, in order: method → a copy of each one's params.
---@type table<string, table[]>
H.sent_params = {}

--- The params of the requests the plugin sent for `method`, oldest first.
---@param method string
---@return table[]
function H.requests(method)
  H.sent_params[method] = H.sent_params[method] or {}
  return H.sent_params[method]
end

--- The params of the last request the plugin sent for `method` (an empty table when none).
---@param method string
---@return table
function H.last_request(method)
  local sent = H.requests(method)
  return sent[#sent] or {}
end

--- Records what the plugin sends, to check the wire names against the protocol's examples.
function H.record_requests()
  local client = require('sessiontree.client')
  if client._recording then
    return
  end
  client._recording = true
  local request = client.request
  client.request = function(method, params, handler)
    H.sent[method] = H.sent[method] or {}
    for key in pairs(params or {}) do
      H.sent[method][key] = true
    end
    table.insert(H.requests(method), vim.deepcopy(params or {}))
    return request(method, params, handler)
  end
end

--- Checks each method the plugin sent, and each param key, against
--- protocol-ext/generated/protocol.json (whose examples fill every field).
function H.check_wire()
  local path = H.repo .. '/protocol-ext/generated/protocol.json'
  if vim.fn.filereadable(path) == 0 then
    H.check(false, 'protocol-ext/generated/protocol.json exists (the wire names are checked against it)', path)
    return
  end
  local contract = vim.json.decode(table.concat(vim.fn.readfile(path), '\n'))
  local examples = {}
  for _, m in ipairs(contract.methods or {}) do
    examples[m.method] = m
  end
  local methods = vim.tbl_keys(H.sent)
  table.sort(methods)
  for _, method in ipairs(methods) do
    local m = examples[method]
    local unknown = {}
    for key in pairs(H.sent[method]) do
      if not (m and type(m.params) == 'table' and m.params[key] ~= nil) then
        table.insert(unknown, key)
      end
    end
    H.check(
      m ~= nil and m.direction == 'clientToServer' and #unknown == 0,
      'wire: ' .. method .. ' and its params are in protocol.json',
      unknown
    )
  end
end

--- Feeds keys as typed (mappings apply) and runs them now.
---@param keys string
function H.feed(keys)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), 'mx', false)
end

--- Waits until the panel has drawn again after `fn()`.
---@param fn fun()
---@param ms integer|nil
---@return boolean
function H.redraw_after(fn, ms)
  local panel = require('sessiontree.panel')
  local before = panel.state.draws
  fn()
  return H.wait(function()
    return panel.state.draws > before and panel.state.pending == 0
  end, ms)
end

--- Feeds `keys` (mappings apply) and waits (10 s unless `ms`) for the panel to draw again.
---@param keys string
---@param ms integer|nil
---@return boolean
function H.press(keys, ms)
  return H.redraw_after(function()
    H.feed(keys)
  end, ms or 10000)
end

--- Runs the Ex command `cmd` and waits (10 s unless `ms`) for the panel to draw again.
---@param cmd string
---@param ms integer|nil
---@return boolean
function H.command(cmd, ms)
  return H.redraw_after(function()
    vim.cmd(cmd)
  end, ms or 10000)
end

--- `:SessionTree {path}` (`:SessionTree` when nil), and waits (10 s unless `ms`) for the panel to draw.
---@param path string|nil
---@param ms integer|nil
---@return boolean
function H.show(path, ms)
  return H.command('SessionTree' .. (path and (' ' .. path) or ''), ms)
end

--- Edits `path` as a JSON-lines file (-u NONE does no filetype detection), as a user opens a
--- session file; its buffer.
---@param path string
---@return integer buf
function H.edit(path)
  vim.cmd.edit(path)
  vim.bo.filetype = 'jsonl'
  return vim.api.nvim_get_current_buf()
end

--- The rows the panel holds.
---@return table[]
function H.rows()
  return require('sessiontree.panel').state.rows
end

--- The ids of the rows the panel holds.
---@return string[]
function H.row_ids()
  return vim.tbl_map(function(row)
    return row.id
  end, H.rows())
end

--- The panel's row of entry `id`.
---@param id string
---@return table|nil
function H.row(id)
  for _, row in ipairs(H.rows()) do
    if row.id == id then
      return row
    end
  end
end

--- The panel's row whose text is `text`.
---@param text string
---@return table|nil
function H.row_with_text(text)
  for _, row in ipairs(H.rows()) do
    if row.text == text then
      return row
    end
  end
end

--- Puts the panel's cursor (and its focus) on the row of entry `id`.
---@param id string|nil
---@return boolean found
function H.goto_row(id)
  local st = require('sessiontree.panel').state
  for i, row in ipairs(st.rows) do
    if id and row.id == id then
      vim.api.nvim_set_current_win(st.win)
      vim.api.nvim_win_set_cursor(st.win, { i, 0 })
      st.selection = id
      return true
    end
  end
  return false
end

--- The buffer line (1-based) of the panel's cursor.
---@return integer
function H.cursor_line()
  return vim.api.nvim_win_get_cursor(require('sessiontree.panel').state.win)[1]
end

--- The panel buffer's lines.
---@return string[]
function H.panel_lines()
  local st = require('sessiontree.panel').state
  return vim.api.nvim_buf_get_lines(st.buf, 0, -1, false)
end

--- The highlight groups the panel draws (the decoration provider's per-row highlights plus the
--- extmarks), as a set, and how many search matches.
---@return table<string, boolean> groups
---@return integer matches
function H.panel_groups()
  local render = require('sessiontree.render')
  local st = require('sessiontree.panel').state
  local groups, matches = {}, 0
  for i, line in ipairs(H.panel_lines()) do
    local row = st.rows[i]
    if row then
      for _, h in ipairs(render.row_highlights(line, row)) do
        groups[h[3]] = true
        if h[3] == 'SessionTreeMatch' then
          matches = matches + 1
        end
      end
    end
  end
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(st.buf, -1, 0, -1, { details = true })) do
    if m[4].hl_group then
      groups[m[4].hl_group] = true
    end
    if m[4].line_hl_group then
      groups[m[4].line_hl_group] = true
    end
    for _, chunk in ipairs(m[4].virt_text or {}) do
      groups[chunk[2]] = true
    end
  end
  return groups, matches
end

--- The id of the row under the cursor.
---@return string|nil
function H.cursor_id()
  local row = require('sessiontree.panel').selected_row()
  return row and row.id
end

--- Asks the server directly (for comparisons).
---@param method string
---@param params table
---@return any
function H.ask(method, params)
  local result, err = require('sessiontree.client').request_sync(method, params, 10000)
  assert(not err, vim.inspect(err))
  return result
end

--- The server's lines for the panel's session with the panel's width, window height and the
--- cursor's entry as the selection (what the panel must show), for `filter` and `search`.
---@param filter string|nil
---@param search string|nil
---@return string[] lines
---@return table result
function H.server_lines(filter, search)
  local st = require('sessiontree.panel').state
  local result = H.ask(require('sessiontree.protocol').ROWS, {
    uri = st.uri,
    filter = filter or st.filter,
    search = search or st.search,
    selection = H.cursor_id(),
    width = require('sessiontree.panel').row_width(),
    height = require('sessiontree.panel').window_height(),
  })
  return result.lines, result
end

--- The first user message of the session at `uri` (its earliest line), from `sessionTree/tree`.
---@param uri string
---@return table|nil node
function H.first_user_message(uri)
  local nodes = H.ask(require('sessiontree.protocol').TREE, { uri = uri, offset = 0, limit = 0 }).nodes
  local first = nil
  for _, n in ipairs(nodes) do
    if n.kind == 'message' and n.role == 'user' and (first == nil or n.line < first.line) then
      first = n
    end
  end
  return first
end

---@class sessiontree.test.Messages
---@field list { msg: string, level: integer|nil }[] what was said, oldest first
---@field said fun(text: string, level: integer|nil): boolean whether a message holds `text` (at `level`)
---@field texts fun(): string[] the messages' texts
---@field clear fun() forgets what was said so far
---@field stop fun() puts the real vim.notify back

--- Records what the plugin says through vim.notify from now on (still shown, unless `quiet`).
---@param quiet boolean|nil
---@return sessiontree.test.Messages
function H.messages(quiet)
  local rec = { list = {} }
  local notify = vim.notify
  vim.notify = function(msg, level, opts)
    table.insert(rec.list, { msg = tostring(msg), level = level })
    if not quiet then
      notify(msg, level, opts)
    end
  end
  function rec.said(text, level)
    for _, m in ipairs(rec.list) do
      if m.msg:find(text, 1, true) and (level == nil or m.level == level) then
        return true
      end
    end
    return false
  end
  function rec.texts()
    return vim.tbl_map(function(m)
      return m.msg
    end, rec.list)
  end
  function rec.clear()
    rec.list = {}
  end
  function rec.stop()
    vim.notify = notify
  end
  return rec
end

--- Runs `fn` (a health check) with vim.health recorded: a headless :checkhealth run twice trips
--- a redraw assertion, so the specs read what the check reports directly.
---@param fn fun()
---@return boolean ok
---@return any err
---@return string text one line a report: `ok …`, `warn …`, `error …`
function H.health(fn)
  local got = {}
  local real = vim.health
  vim.health = setmetatable({}, {
    __index = function(_, level)
      return function(msg)
        table.insert(got, level .. ' ' .. tostring(msg))
      end
    end,
  })
  local ok, err = pcall(fn)
  vim.health = real
  return ok, err, table.concat(got, '\n')
end

--- The chat's conversation buffer lines.
---@return string[]
function H.chat_lines()
  return vim.api.nvim_buf_get_lines(require('sessiontree.chat').state.conv_buf, 0, -1, false)
end

--- The chat's conversation, as one text.
---@return string
function H.chat_text()
  return table.concat(H.chat_lines(), '\n')
end

--- The 1-based line of the conversation that starts with `prefix` (the last one).
---@param prefix string
---@return integer|nil
function H.chat_line(prefix)
  local found
  for i, l in ipairs(H.chat_lines()) do
    if vim.startswith(l, prefix) then
      found = i
    end
  end
  return found
end

--- Whether the chat shows the session at `uri`.
---@param uri string|nil
---@return boolean
function H.chat_on(uri)
  local conv = require('sessiontree.chat').state.conversation
  return uri ~= nil and conv.uri ~= nil and require('sessiontree.panel').same_uri(conv.uri, uri)
end

--- <CR> in the chat input, as the user sends: with `text` typed into the input first.
---@param text string|nil
function H.send(text)
  local st = require('sessiontree.chat').state
  if text then
    vim.api.nvim_buf_set_lines(st.input_buf, 0, -1, false, { text })
  end
  vim.api.nvim_set_current_win(st.input_win)
  H.feed('<CR>')
end

--- Calls `start(done)` and waits (5 s unless `ms`) for `done` to be called: whether it was, then
--- the values it was given (an action's answer: `err, result`, or one result).
---@param start fun(done: fun(...))
---@param ms integer|nil
---@return boolean answered
---@return any ...
function H.answer(start, ms)
  local got = nil
  start(function(...)
    got = got or vim.F.pack_len(...)
  end)
  local answered = H.wait(function()
    return got ~= nil
  end, ms)
  return answered, vim.F.unpack_len(got or vim.F.pack_len())
end

--- Waits until every callback scheduled so far (vim.schedule) has run: what the editor decided
--- on an event (an autocommand's scheduled work) is done by then.
---@return boolean
function H.settle()
  local done = false
  vim.schedule(function()
    done = true
  end)
  return H.wait(function()
    return done
  end)
end

--- Stops the plugin's server and waits until the client is gone.
---@return boolean
function H.stop_server()
  local client = require('sessiontree.client')
  client.stop(true)
  return H.wait(function()
    return client.get() == nil
  end)
end

--- The real agents and the tests' model server (support/agents.lua).
---@return table
function H.agents()
  H._agents = H._agents or assert(loadfile(H.plugin_dir .. '/tests/support/agents.lua'))(H)
  return H._agents
end

---@type fun()[]
local cleanups = {}

--- Runs `fn` when the spec ends, whatever happened (a server of the spec's own is stopped).
---@param fn fun()
function H.cleanup(fn)
  table.insert(cleanups, fn)
end

--- Runs `body` and exits with the spec's result line.
---@param body fun()
function H.run(body)
  out('# ' .. H.spec)
  local ok, err = xpcall(body, debug.traceback)
  if not ok then
    H.failed = H.failed + 1
    out('  FAIL  spec aborted: ' .. tostring(err):gsub('\n', '\n        '))
  end
  for i = #cleanups, 1, -1 do
    pcall(cleanups[i])
  end
  H.check_wire()
  pcall(function()
    require('sessiontree.client').stop(true)
  end)
  out(string.format('%s: %d passed, %d failed', H.spec, H.passed, H.failed))
  os.exit(H.failed == 0 and 0 or 1)
end

return H
