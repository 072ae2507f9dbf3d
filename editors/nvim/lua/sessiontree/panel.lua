---@brief
--- The panel: a side split with a scratch buffer (filetype `sessiontree`) showing the `/tree` rows
--- of one session as the server renders them. It owns the view state (session, filter, search,
--- selection), asks the server for rows whenever that state or the session changes, and keeps the
--- cursor on the same entry across updates. It does not decide anything about the tree: which rows
--- exist, their text and the nearest visible selection all come from `sessionTree/rows`.

local client = require('sessiontree.client')
local config = require('sessiontree.config')
local protocol = require('sessiontree.protocol')
local render = require('sessiontree.render')

local M = {}

---@class sessiontree.PanelState
---@field uri string|nil The session shown.
---@field dialect string|nil Its agent (`pi` or `omp`), from the open answer.
---@field name string|nil The session name (or the file name).
---@field filter sessiontree.FilterMode
---@field search string
---@field searching boolean Typing into the search (printable keys go to the search).
---@field selection string|nil Selected entry id; nil = the leaf.
---@field leaf string|nil
---@field revision integer|nil
---@field rows table[] The protocol `Row`s drawn.
---@field lines string[] The server's text lines drawn.
---@field total integer|nil Visible rows in all (the window holds `rows`).
---@field window_start integer 0-based number of the first row drawn (rows are fetched in windows).
---@field buf integer|nil
---@field win integer|nil
---@field seq integer Request counter; answers to older requests are dropped.
---@field draws integer How many times rows were drawn (tests wait on it).
---@field pending integer Requests in flight.
---@field busy string|nil Shown in the header while a long request runs.
---@field error string|nil The last error, shown in the panel when there are no rows.
---@field problems integer|nil Problems the server found in the file (`open`'s diagnostics).
---@field last_ms number|nil How long the last rows answer took.
---@field dirty boolean|nil Changes arrived while rows were being computed.
---@field marker_line integer|nil 0-based line holding the server's cursor marker, when its lines have one.
M.state = {
  filter = 'default',
  search = '',
  searching = false,
  rows = {},
  lines = {},
  window_start = 0,
  seq = 0,
  draws = 0,
  pending = 0,
}

local augroup = vim.api.nvim_create_augroup('sessiontree.panel', { clear = true })

--- Whether two session URIs name the same file (the server may spell them differently).
---@param a string|nil
---@param b string|nil
---@return boolean
function M.same_uri(a, b)
  return a ~= nil and b ~= nil and (a == b or client.session_path(a) == client.session_path(b))
end

--- A title for an unnamed session: the agents name files `<ISO time>_<id>.jsonl`, so the time is
--- the readable part; other files keep their name.
---@param uri string
---@return string
function M.file_title(uri)
  local base = vim.fn.fnamemodify(client.session_path(uri) or uri, ':t')
  local date, h, m = base:match('^(%d%d%d%d%-%d%d%-%d%d)T(%d%d)%-(%d%d)')
  if date then
    return string.format('session of %s %s:%s', date, h, m)
  end
  return base
end

---@return boolean
function M.is_open()
  return M.state.win ~= nil and vim.api.nvim_win_is_valid(M.state.win)
end

--- The header state for `render`.
---@return sessiontree.HeaderState
local function header_state()
  local st = M.state
  return {
    name = st.name,
    filter = st.filter,
    search = st.search,
    searching = st.searching,
    total = st.total,
    busy = st.busy,
    problems = st.problems,
  }
end

--- The header line as plain text (what the winbar shows).
---@return string
function M.header()
  return render.header_text(header_state())
end

function M.update_header()
  local st = M.state
  if M.is_open() then
    vim.wo[st.win].winbar = render.winbar(header_state(), vim.api.nvim_win_get_width(st.win))
  end
end

--- Shows or clears a busy message in the header ("summarizing…").
---@param text string|nil
function M.set_busy(text)
  M.state.busy = text
  M.update_header()
end

--- The row under the cursor (or at the selection when the panel is closed).
---@return table|nil row
function M.selected_row()
  local st = M.state
  if M.is_open() and vim.api.nvim_win_get_buf(st.win) == st.buf then
    local lnum = vim.api.nvim_win_get_cursor(st.win)[1]
    return st.rows[lnum]
  end
  for _, row in ipairs(st.rows) do
    if row.id == st.selection then
      return row
    end
  end
  return nil
end

--- Whether the selection is on the leaf: no explicit selection, or the row where the server shows
--- the leaf (the last row of the active path: the leaf, or its nearest visible ancestor).
---@return boolean
function M.is_following()
  local st = M.state
  if st.selection == nil then
    return true
  end
  local last = nil
  for _, row in ipairs(st.rows) do
    if row.onActivePath then
      last = row
    end
  end
  return last ~= nil and last.id == st.selection
end

---@param id string|nil
---@return integer|nil 1-based row index
local function index_of(id)
  if not id then
    return nil
  end
  for i, row in ipairs(M.state.rows) do
    if row.id == id then
      return i
    end
  end
  return nil
end

--- The line the panel itself put the cursor on last; its CursorMoved is not a user move.
---@type integer|nil
local placed_line = nil

--- Whether rows lie beyond the window drawn, above (`-1`) or below (`1`).
---@param dir integer
---@return boolean
local function more_rows(dir)
  local st = M.state
  if dir < 0 then
    return (st.window_start or 0) > 0
  end
  return st.total ~= nil and (st.window_start or 0) + #st.rows < st.total
end

--- A user move near an edge of the window (a quarter of it) with rows beyond asks for the window
--- around the row the cursor is on (the selection), so j/k and paging never run out of rows.
---@param lnum integer
local function follow_window(lnum)
  local n = #M.state.rows
  local margin = math.max(5, math.floor(n / 4))
  if (lnum <= margin and more_rows(-1)) or (lnum > n - margin and more_rows(1)) then
    M.schedule_refresh()
  end
end

--- Puts the cursor on row `i`. A user move (`select` true) also makes that entry the selection the
--- panel asks for from now on; a redraw only shows the server's nearest visible row, so the chosen
--- entry comes back when a filter or search that hid it is lifted.
---@param i integer
---@param select boolean
local function set_cursor_row(i, select)
  local st = M.state
  local row = st.rows[i]
  if not row then
    return
  end
  if select then
    st.selection = row.id
  end
  if M.is_open() and st.buf and vim.api.nvim_win_get_buf(st.win) == st.buf then
    placed_line = i
    vim.api.nvim_win_set_cursor(st.win, { i, 0 })
    M.mark_cursor(i - 1)
  end
  if select then
    follow_window(i)
  end
end

--- Draws the cursor row: our highlight, and the server's marker moved to it.
---@param lnum integer 0-based
function M.mark_cursor(lnum)
  local st = M.state
  if not (st.buf and vim.api.nvim_buf_is_valid(st.buf)) then
    return
  end
  if st.marker_line ~= nil and st.marker_line ~= lnum then
    render.move_marker(st.buf, st.marker_line, lnum)
    st.marker_line = lnum
  end
  render.cursor(st.buf, lnum)
end

---@param result table a protocol `RowsResult`
---@param asked string|nil the selection the rows were asked for
local function apply_rows(result, asked)
  local st = M.state
  -- The rows may show a new leaf before its didChange arrives: a cursor on the old leaf follows.
  local following = config.options.panel.follow_leaf
    and st.leaf ~= nil
    and result.leaf ~= st.leaf
    and st.selection ~= nil
    and M.is_following()
  -- The row under the cursor and its place on the screen: a new window keeps it where it was.
  local kept = nil
  if M.is_open() and st.buf and vim.api.nvim_win_get_buf(st.win) == st.buf then
    local lnum = vim.api.nvim_win_get_cursor(st.win)[1]
    local row = st.rows[lnum]
    if row then
      kept = { id = row.id, above = lnum - vim.fn.line('w0', st.win) }
    end
  end
  st.rows = result.rows or {}
  st.lines = result.lines or {}
  st.total = result.totalRows
  st.window_start = result.windowStart or 0
  st.leaf = result.leaf
  st.revision = result.revision
  st.error = nil
  if st.buf and vim.api.nvim_buf_is_valid(st.buf) then
    if #st.rows == 0 then
      render.draw(st.buf, { '' }, {})
      vim.api.nvim_buf_set_extmark(st.buf, render.ns, 0, 0, {
        virt_text = { { st.search ~= '' and 'No entries match the search' or 'No entries found', 'Comment' } },
      })
    else
      render.draw(st.buf, st.lines, st.rows, st.dialect)
      require('sessiontree.rewind').draw_marks(st.buf, st.uri, st.rows, st.revision)
    end
    st.marker_line = nil
    if render.has_marker(st.lines, st.rows) then
      for i, row in ipairs(st.rows) do
        if row.selected then
          st.marker_line = i - 1
        end
      end
    end
  end
  if following then
    st.selection = nil
  end
  local i = nil
  if st.selection == nil then
    -- Following the leaf: its row, or (hidden leaf) the server's nearest visible row, which is only
    -- right when these rows were asked for the leaf too.
    for k, row in ipairs(st.rows) do
      if row.isLeaf then
        i = k
      end
    end
    if not i and asked ~= nil then
      M.schedule_refresh()
    end
  end
  i = i or index_of(st.selection) or index_of(result.selection) or (#st.rows > 0 and #st.rows or nil)
  if i then
    set_cursor_row(i, false)
    if kept and st.rows[i] and st.rows[i].id == kept.id and kept.above >= 0 then
      vim.api.nvim_win_call(st.win, function()
        vim.fn.winrestview({ topline = math.max(1, i - kept.above) })
      end)
    end
  elseif st.buf and vim.api.nvim_buf_is_valid(st.buf) then
    render.cursor(st.buf, nil)
  end
  st.draws = st.draws + 1
  M.update_header()
end

--- Width asked for when rows are not cut to the panel (the server reads 0 as 120).
M.UNCUT_WIDTH = 4096

--- The width to ask rows for.
---@return integer
function M.row_width()
  local st = M.state
  if not config.options.panel.truncate then
    return M.UNCUT_WIDTH
  end
  if not M.is_open() then
    return config.options.panel.width
  end
  -- Leave room for the leaf marker the panel draws after the text.
  return math.max(20, vim.api.nvim_win_get_width(st.win) - vim.fn.strdisplaywidth(render.LEAF_MARK) - 1)
end

--- The `height` to ask rows for: the agents show about half their terminal height around the
--- selection, so twice `panel.max_rows` (0 = every row).
---@return integer
function M.window_height()
  local max = config.options.panel.max_rows or 0
  return max > 0 and math.max(10, math.floor(max)) * 2 or 0
end

--- Asks the server for the rows of the current state (with the session's folds) and draws them.
--- Answers to an older request than the latest are dropped, so fast typing never draws a stale
--- search. `opts.segment` (`up`/`down`) moves the selection by branch segments first (pi's fold
--- keys on a row they do not fold); the cursor goes where the server says it went.
---@param done fun(err: table|nil)|nil
---@param opts { segment: 'up'|'down'|nil }|nil
function M.refresh(done, opts)
  local st = M.state
  if not st.uri then
    return
  end
  st.seq = st.seq + 1
  local seq = st.seq
  st.pending = st.pending + 1
  local uri = st.uri
  local asked = st.selection
  local started = vim.uv.hrtime()
  client.request(protocol.ROWS, {
    uri = st.uri,
    filter = st.filter,
    search = st.search,
    selection = st.selection,
    width = M.row_width(),
    height = M.window_height(),
    folded = require('sessiontree.fold').list(st.uri),
    segment = opts and opts.segment or nil,
  }, function(err, result)
    st.pending = st.pending - 1
    st.last_ms = (vim.uv.hrtime() - started) / 1e6
    if seq == st.seq and uri == st.uri then
      if err then
        st.error = client.describe(err)
        vim.notify('sessiontree: rows: ' .. st.error, vim.log.levels.ERROR)
      else
        if opts and opts.segment and result.selection then
          st.selection = result.selection
          asked = result.selection
        end
        apply_rows(result, asked)
      end
      if done then
        done(err)
      end
    end
    -- Changes arrived while this answer was computed: ask once more, now, for all of them (after
    -- drawing this answer, so a session that keeps changing still redraws once per answer).
    if st.dirty and st.pending == 0 then
      st.dirty = false
      M.refresh()
    end
  end)
end

--- Asks for rows after a change (the agent appended, the window was resized, the cursor neared
--- the edge of the rows fetched). No fixed delay: with no rows on their way they are asked for
--- at once; with some on their way, once more as soon as those are answered, however many changes
--- came meanwhile. So a burst costs at most two requests, never more than one is in flight (on a
--- huge session the server takes a while per answer), and the last change of a burst is always
--- drawn one answer after it arrived.
function M.schedule_refresh()
  local st = M.state
  if st.pending > 0 then
    st.dirty = true
    return
  end
  M.refresh()
end

--- Whether no rows are on their way or owed (tests and benchmarks wait for it).
---@return boolean
function M.idle()
  return M.state.pending == 0 and not M.state.dirty
end

--- Creates the scratch buffer (once).
---@return integer buf
local function ensure_buf()
  local st = M.state
  if st.buf and vim.api.nvim_buf_is_valid(st.buf) then
    return st.buf
  end
  local buf = vim.api.nvim_create_buf(false, true)
  st.buf = buf
  pcall(vim.api.nvim_buf_set_name, buf, 'sessiontree://tree')
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = 'sessiontree'
  require('sessiontree.actions').attach(buf)
  vim.api.nvim_create_autocmd('CursorMoved', {
    group = augroup,
    buffer = buf,
    callback = function()
      if not M.is_open() or vim.api.nvim_get_current_win() ~= st.win then
        return
      end
      local lnum = vim.api.nvim_win_get_cursor(st.win)[1]
      local row = st.rows[lnum]
      if row and lnum ~= placed_line then
        st.selection = row.id
        follow_window(lnum)
      end
      placed_line = nil
      M.mark_cursor(lnum - 1)
    end,
  })
  vim.api.nvim_create_autocmd('BufWipeout', {
    group = augroup,
    buffer = buf,
    callback = function()
      render.forget(buf)
      st.buf, st.win = nil, nil
    end,
  })
  return buf
end

--- Opens the side split showing the buffer (or focuses it).
local function ensure_win()
  local st = M.state
  local buf = ensure_buf()
  if M.is_open() then
    vim.api.nvim_set_current_win(st.win)
    return
  end
  local opts = config.options.panel
  local where = opts.position == 'right' and 'botright' or 'topleft'
  vim.cmd(string.format('%s vertical %dsplit', where, opts.width))
  st.win = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_buf(st.win, buf)
  local wo = vim.wo[st.win]
  wo.number = false
  wo.relativenumber = false
  wo.signcolumn = 'no'
  wo.foldcolumn = '0'
  wo.wrap = false
  wo.list = false
  wo.spell = false
  wo.cursorline = false
  wo.winfixwidth = true
  wo.sidescrolloff = 0
  M.update_header()
end

--- Tells the server to stop following a session nothing shows any more (the chat, a buffer of the
--- file), so a huge session does not stay in memory after the panel moved on.
---@param uri string|nil
function M.release(uri)
  if not uri then
    return
  end
  local chat = package.loaded['sessiontree.chat']
  if chat and M.same_uri(chat.state.uri, uri) then
    return
  end
  local path = client.session_path(uri)
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.fs.normalize(vim.api.nvim_buf_get_name(b)) == path then
      return
    end
  end
  client.request(protocol.CLOSE, { uri = uri }, function() end)
end

--- Shows session `uri` in the panel (opening the panel when needed).
---@param uri string
---@param done fun(err: table|nil)|nil
function M.open(uri, done)
  local st = M.state
  render.define_highlights()
  ensure_win()
  local switching = not M.same_uri(st.uri, uri)
  local previous = switching and st.uri or nil
  if switching then
    -- Answers still in flight belong to the previous session.
    st.seq = st.seq + 1
    st.uri = uri
    st.selection = nil
    st.rows, st.lines, st.total, st.window_start = {}, {}, nil, 0
    st.name = M.file_title(uri)
    st.problems = nil
    st.dialect = nil
  end
  M.update_header()
  client.request(protocol.OPEN, { uri = uri }, function(err, result)
    if err then
      st.error = client.describe(err)
      vim.notify('sessiontree: cannot open ' .. uri .. ': ' .. st.error, vim.log.levels.ERROR)
      if st.buf and vim.api.nvim_buf_is_valid(st.buf) and M.same_uri(st.uri, uri) then
        st.rows, st.lines = {}, {}
        render.draw(st.buf, { '' }, {})
        vim.api.nvim_buf_set_extmark(st.buf, render.ns, 0, 0, {
          virt_text = { { 'cannot open: ' .. st.error, 'ErrorMsg' } },
        })
      end
      if done then
        done(err)
      end
      return
    end
    -- An open chat shows the panel's session; the session left behind is released.
    local chat = package.loaded['sessiontree.chat']
    if chat and chat.is_open() and M.same_uri(st.uri, uri) and not M.same_uri(chat.state.uri, uri) then
      chat.state.uri = uri
      chat.refresh()
    end
    if previous and not M.same_uri(previous, st.uri) then
      M.release(previous)
    end
    if M.same_uri(st.uri, uri) then
      st.name = result.name or st.name
      st.dialect = result.dialect
      st.leaf = result.leaf
      st.revision = result.revision
      local diagnostics = result.diagnostics or {}
      st.problems = #diagnostics > 0 and #diagnostics or nil
      if #diagnostics > 0 then
        local first = diagnostics[1]
        vim.notify(
          string.format(
            'sessiontree: %s in %s, e.g. line %s: %s (the file is left as it is; `sessiontree check` lists them)',
            render.problems_text(#diagnostics),
            vim.fn.fnamemodify(client.session_path(uri) or uri, ':t'),
            tostring(first.line or '?'),
            first.message
          ),
          vim.log.levels.WARN
        )
      end
    end
    M.refresh(done)
  end)
end

--- Closes the panel window (the session stays followed by the server).
function M.close()
  local st = M.state
  require('sessiontree.search').stop()
  if M.is_open() then
    if #vim.api.nvim_tabpage_list_wins(0) > 1 or #vim.api.nvim_list_tabpages() > 1 then
      vim.api.nvim_win_close(st.win, true)
    else
      vim.api.nvim_win_call(st.win, function()
        vim.cmd('enew')
      end)
    end
  end
  st.win = nil
end

--- Moves the cursor by `delta` rows, wrapping around at both ends (as the agent does).
---@param delta integer
function M.move(delta)
  local st = M.state
  local n = #st.rows
  if n == 0 or not M.is_open() then
    return
  end
  local cur = vim.api.nvim_win_get_cursor(st.win)[1]
  local to = cur + delta
  if (to < 1 or to > n) and (more_rows(-1) or more_rows(1)) then
    -- A window of a longer list: stop at its edge (the next window is on its way); wrapping
    -- around is for a list held whole.
    to = math.max(1, math.min(n, to))
  end
  set_cursor_row(((to - 1) % n) + 1, true)
end

--- Moves the cursor by a page (the window height), stopping at the ends.
---@param dir integer -1 or 1
function M.page(dir)
  local st = M.state
  local n = #st.rows
  if n == 0 or not M.is_open() then
    return
  end
  local h = math.max(1, vim.api.nvim_win_get_height(st.win) - 1)
  local cur = vim.api.nvim_win_get_cursor(st.win)[1]
  set_cursor_row(math.max(1, math.min(n, cur + dir * h)), true)
end

--- Esc: clears the search first, then closes the panel.
function M.escape()
  local st = M.state
  if st.searching or st.search ~= '' then
    local search = require('sessiontree.search')
    search.stop()
    if st.search ~= '' then
      search.set('')
    end
    return
  end
  M.close()
end

-- Follow the session live: every change the server reports redraws the rows.
client.on(protocol.DID_CHANGE, function(params)
  local st = M.state
  if not M.same_uri(params.uri, st.uri) then
    return
  end
  -- A selection sitting on the leaf follows the leaf as the agent appends.
  if config.options.panel.follow_leaf and params.leaf ~= st.leaf and M.is_following() then
    st.selection = nil
  end
  st.leaf = params.leaf
  if params.reason == 'name' or params.reason == 'reload' then
    client.request(protocol.OPEN, { uri = st.uri }, function(err, result)
      if not err and M.same_uri(result.uri, st.uri) then
        st.name = result.name or st.name
        M.update_header()
      end
    end)
  end
  -- A closed panel redraws when it opens again.
  if M.is_open() then
    M.schedule_refresh()
  end
end)

vim.api.nvim_create_autocmd({ 'WinResized', 'VimResized' }, {
  group = augroup,
  callback = function()
    if M.is_open() then
      M.update_header()
      if config.options.panel.truncate then
        M.schedule_refresh()
      end
    end
  end,
})

vim.api.nvim_create_autocmd('ColorScheme', {
  group = augroup,
  callback = render.define_highlights,
})

return M
