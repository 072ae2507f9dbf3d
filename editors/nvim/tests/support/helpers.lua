-- Shared by the headless specs: puts the plugin on 'runtimepath', copies real session files into a
-- temp dir, configures the plugin against the real server binary, and gives `check`/`wait`
-- helpers that print one line per check (a check whose prerequisite is missing fails). A spec ends with `H.finish()`, which exits 0 or 1.
--
-- Environment: SESSIONTREE_BIN (the server binary, required), SESSIONTREE_CONFORMANCE_DIR
-- (default ../shared/conformance relative to the repo root; it must exist).

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

--- Configures the plugin for `dir` and the real server (the live agent off unless `extra.agent`).
---@param dir string
---@param extra table|nil more options
function H.setup(dir, extra)
  local bin = os.getenv('SESSIONTREE_BIN')
  if not bin or bin == '' then
    bin = H.repo .. '/target/debug/sessiontree'
  end
  assert(vim.fn.executable(bin) == 1, 'no server binary at ' .. bin .. ' (set SESSIONTREE_BIN)')
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

--- Every request the plugin sent: method → set of param keys (checked against protocol.json).
---@type table<string, table<string, boolean>>
H.sent = {}

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

--- Runs `body` and exits with the spec's result line.
---@param body fun()
function H.run(body)
  out('# ' .. H.spec)
  local ok, err = xpcall(body, debug.traceback)
  if not ok then
    H.failed = H.failed + 1
    out('  FAIL  spec aborted: ' .. tostring(err):gsub('\n', '\n        '))
  end
  H.check_wire()
  pcall(function()
    require('sessiontree.client').stop(true)
  end)
  out(string.format('%s: %d passed, %d failed', H.spec, H.passed, H.failed))
  os.exit(H.failed == 0 and 0 or 1)
end

return H
